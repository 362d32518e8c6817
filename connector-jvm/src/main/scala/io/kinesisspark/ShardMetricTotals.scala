package io.kinesisspark

/**
 * The source's metrics over some shards (all of a query's, or one stream's), added up shard by shard in one pass:
 * at 10,000 shards, a pass per metric over every shard was a fifth of the query thread's samples in a JFR of
 * DriverScaleBenchmark (Spark asks for the metrics after every batch, on the query's thread).
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
  private var throttles = 0L
  private var outOfRangeSubRecords = 0L
  private var corruptAggregates = 0L
  private var lastRoundCalls = 0L
  private var lastRoundCallMillis = 0L
  private var subscriptions = 0L
  private var dataLoss = 0L

  /** A shard's fetch statistics (of every shard fetched, whether still active or not). */
  def addStats(s: ShardStats): Unit = {
    throttles += s.throttles
    outOfRangeSubRecords += s.outOfRangeSubRecords
    corruptAggregates += s.corruptAggregates
    lastRoundCalls += s.lastRoundCalls
    lastRoundCallMillis += s.lastRoundCallMillis
    subscriptions += s.subscriptions
    dataLoss += s.dataLossEvents
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
  def dataLossEvents: Long = dataLoss

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
      "throttlingEvents" -> throttles.toString,
      "outOfRangeSubRecords" -> outOfRangeSubRecords.toString,
      "corruptAggregates" -> corruptAggregates.toString,
      "avgFetchLatencyMs" -> (if (lastRoundCalls == 0) "0" else (lastRoundCallMillis / lastRoundCalls).toString)) ++
      (if (efo) Map("efoSubscriptions" -> subscriptions.toString) else Map.empty)
  }
}
