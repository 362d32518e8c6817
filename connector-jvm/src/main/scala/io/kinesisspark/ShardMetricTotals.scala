package io.kinesisspark

import io.kinesisspark.reader.ShardCounters

/**
 * The source's metrics over some shards (all of a query's, or one stream's), added up shard by shard in one pass:
 * Spark asks for the metrics after every batch, on the query's thread, and a pass per metric over thousands of
 * shards would hold that thread up.
 *
 * {{{
 *   val totals = new ShardMetricTotals
 *   stats.values.foreach(totals.addStats)            // every shard fetched, active or not
 *   totals.addActive(lag = Some(1200L))              // each active shard, with its lag when known
 *   totals.metrics(efo = false) // Map("activeShards" -> "1", "maxMsBehindLatest" -> "1200", ...)
 * }}}
 */
private[kinesisspark] final class ShardMetricTotals {
  private var active = 0
  private var lags = 0
  private var lagSum = 0L
  private var lagMin = Long.MaxValue
  private var lagMax = Long.MinValue
  private var counters = ShardCounters.Zero
  private var lastRound = ShardCounters.Zero

  /** A shard's fetch statistics (of every shard fetched, whether still active or not). */
  def addStats(s: ShardStats): Unit = {
    counters += s.counters
    lastRound += s.lastRound
  }

  /** An active shard (not finished), and how far the query's processing of it is behind its tip, if known. */
  def addActive(lag: Option[Long]): Unit = {
    active += 1
    lag.foreach { l =>
      lags += 1
      lagSum += l
      lagMin = math.min(lagMin, l)
      lagMax = math.max(lagMax, l)
    }
  }

  /** Data-loss events the shard readers counted. */
  def dataLossEvents: Long = counters.dataLossEvents

  /** Lag (over active shards with a known lag), active shards, and fetch statistics, as the progress reports them. */
  def metrics(efo: Boolean): Map[String, String] = {
    val lagMetrics =
      if (lags == 0) Map.empty[String, String]
      else Map(
        "avgMsBehindLatest" -> (lagSum.toDouble / lags).toString,
        "maxMsBehindLatest" -> lagMax.toString,
        "minMsBehindLatest" -> lagMin.toString)
    lagMetrics ++ Map(
      "activeShards" -> active.toString,
      "throttlingEvents" -> counters.throttles.toString,
      "outOfRangeSubRecords" -> counters.outOfRangeSubRecords.toString,
      "corruptAggregates" -> counters.corruptAggregates.toString,
      "avgFetchLatencyMs" -> (if (lastRound.calls == 0) "0" else (lastRound.callMillis / lastRound.calls).toString)) ++
      (if (efo) Map("efoSubscriptions" -> counters.subscriptions.toString) else Map.empty)
  }
}
