package io.kinesisspark.reader

/**
 * Limits on one shard's reads in one fetch round.
 *
 * @param maxRecordsPerFetch records asked for per GetRecords call (Kinesis allows up to 10,000)
 * @param minFetchPeriodMs   least time between two GetRecords calls on one shard (Kinesis allows 5 calls/s)
 * @param maxRoundMillis     a round ends after this long even if the shard has more (bounds batch latency)
 * @param maxRoundBytes      a round ends after this many bytes (bounds what one task adds to the buffer)
 * @param maxFetchRateBytesPerSec the shard's byte budget: after a response of n bytes, the next call waits
 *                                n / rate seconds
 * @param catchUpAtOnce      after a response that brought records and says more follow (a lag, or a full page), the
 *                           next call goes at once rather than after `minFetchPeriodMs` (still never a sixth call
 *                           within a second, and within the byte budget): real-time tasks, which read a backlog
 *                           record by record, catch up at the rate Kinesis allows
 * @param afterRecordsPeriodMs after any other response that brought records or reported a lag, the next call after
 *                           this (at most `minFetchPeriodMs`) rather than `minFetchPeriodMs`: real-time tasks follow a
 *                           shard that is being written to at Kinesis's call rate, and wait the full period only on
 *                           a quiet one
 */
final case class FetchLimits(
    maxRecordsPerFetch: Int,
    minFetchPeriodMs: Long = FetchLimits.DefaultMinFetchPeriodMs,
    maxRoundMillis: Long = FetchLimits.DefaultMaxRoundMillis,
    maxRoundBytes: Long = FetchLimits.DefaultMaxRoundBytes,
    maxFetchRateBytesPerSec: Double = Double.PositiveInfinity,
    catchUpAtOnce: Boolean = false,
    afterRecordsPeriodMs: Option[Long] = None)

object FetchLimits {
  /** Option `minFetchPeriod`'s default, the Databricks connector's. */
  val DefaultMinFetchPeriodMs: Long = 400L
  /** Option `maxFetchDuration`'s default, the Databricks connector's. */
  val DefaultMaxRoundMillis: Long = 10000L
  /** Caps one shard's share of a round, so a round adds a bounded amount to the buffer. */
  val DefaultMaxRoundBytes: Long = 64L * 1024 * 1024
}
