package io.kinesisspark.fetch

/**
 * Limits on one shard's reads in one fetch round.
 *
 * @param maxRecordsPerFetch records asked for per GetRecords call (Kinesis allows up to 10,000)
 * @param minFetchPeriodMs   least time between two GetRecords calls on one shard (Kinesis allows 5 calls/s)
 * @param maxRoundMillis     a round ends after this long even if the shard has more (bounds batch latency)
 * @param maxRoundBytes      a round ends after this many bytes (bounds one block's size)
 */
final case class FetchLimits(
    maxRecordsPerFetch: Int,
    minFetchPeriodMs: Long = FetchLimits.DefaultMinFetchPeriodMs,
    maxRoundMillis: Long = FetchLimits.DefaultMaxRoundMillis,
    maxRoundBytes: Long = FetchLimits.DefaultMaxRoundBytes)

object FetchLimits {
  /** The Databricks defaults of `minFetchPeriod` and `maxFetchDuration`. */
  val DefaultMinFetchPeriodMs = 400L
  val DefaultMaxRoundMillis = 10000L
  val DefaultMaxRoundBytes: Long = 64L * 1024 * 1024
}
