package io.kinesisspark

import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.blocks.FetchedRange

/**
 * The source's metrics, as [[KinesisMicroBatchStream.metrics]] reports them to Spark's progress (and, through
 * [[QueryMetrics]], to its metrics system): a function of one [[SourceMetrics.Snapshot]] of what the stream and its
 * prefetcher know and of the time, with nothing read meanwhile, so every metric can be checked from values made by
 * hand.
 *
 * {{{
 *   val metrics = SourceMetrics.of(snapshot, now = clock.millis())
 *   metrics("activeShards")   // "4"
 *   metrics.get("clicks.maxMsBehindLatest") // per stream, when the query reads more than one
 * }}}
 */
private[kinesisspark] object SourceMetrics {

  /**
   * What the metrics are made from, taken at one time.
   *
   * @param streams               the streams the query reads (metrics per stream when there are several)
   * @param efo                   whether it reads with enhanced fan-out
   * @param consumed              the latest offset the query processed, when Spark's progress names it
   * @param stats                 every shard fetched, with its statistics
   * @param starts                every shard the prefetcher knows, with where its fetching starts
   * @param buffer                what the prefetcher has buffered
   * @param fetchRounds           prefetch rounds completed
   * @param lastRoundBlocks       blocks the latest round that fetched stored
   * @param blocksStored          blocks every round stored
   * @param lastRoundMs           how long the latest round that fetched took
   * @param lostTickets           prefetch tickets given up on (their executor gone or silent)
   * @param refusedResults        results delivered late, for tickets given up on, and refused
   * @param refusedBlocks         the blocks those results had stored
   * @param refusedBlocksRemoved  those of them their executors said they removed
   * @param blockReadsLocal       blocks partition readers found on their own executor
   * @param blockReadsRemote      blocks they fetched from another executor
   * @param blockReadsFromKinesis blocks they found gone and read again from Kinesis
   * @param recordsRead           records of the batches planned
   * @param bytesRead             their bytes
   * @param driverDataLossEvents  data-loss events the driver counted (shards lost between batches, deleted streams);
   *                              the shard readers' are in `stats`
   * @param availableNowTargetMillis Trigger.AvailableNow's target time, when the query runs with it
   * @param driverTimings         [[DriverTimings.metrics]]
   * @param offsetBytes           the size of the latest batch end's JSON; 0 while not known
   */
  final case class Snapshot(
      streams: Seq[String],
      efo: Boolean,
      consumed: Option[KinesisSourceOffset],
      stats: Map[(String, String), ShardStats],
      starts: Map[(String, String), ShardPosition],
      buffer: BufferIndex.Snapshot,
      fetchRounds: Long,
      lastRoundBlocks: Long,
      blocksStored: Long,
      lastRoundMs: Long,
      lostTickets: Long,
      refusedResults: Long,
      refusedBlocks: Long,
      refusedBlocksRemoved: Long,
      blockReadsLocal: Long,
      blockReadsRemote: Long,
      blockReadsFromKinesis: Long,
      recordsRead: Long,
      bytesRead: Long,
      driverDataLossEvents: Long,
      availableNowTargetMillis: Option[Long],
      driverTimings: Map[String, String],
      offsetBytes: Long)

  /** The metrics of `snapshot` at `now` (the driver's clock, in epoch millis), by name. */
  def of(snapshot: Snapshot, now: Long): Map[String, String] = {
    val stats = snapshot.stats
    val overall = new ShardMetricTotals
    // Per stream, under "<stream>.<metric>", when the query reads more than one.
    val perStream =
      if (snapshot.streams.size < 2) Map.empty[String, ShardMetricTotals]
      else snapshot.streams.map(_ -> new ShardMetricTotals).toMap
    stats.foreach { case ((stream, _), s) =>
      overall.addStats(s)
      perStream.get(stream).foreach(_.addStats(s))
    }
    // Every shard the prefetcher knows is in `starts`. Finished shards are not active, whether the offset says so or
    // they left it (their children moved on). An active shard's buffered ranges the query has not processed yet
    // make its lag and the oldest record buffered.
    var oldestPending = Long.MaxValue
    snapshot.starts.foreach { case (key @ (stream, shard), start) =>
      val processed = snapshot.consumed.flatMap(_.position(stream, shard)).getOrElse(start)
      if (processed != Finished) {
        val pending = snapshot.buffer.rangesAfter(stream, shard, processed).filter(_.records > 0)
        pending.foreach(r => oldestPending = math.min(oldestPending, r.firstArrivalMillis))
        val lag = stats.get(key).flatMap(processedLag(_, pending, now))
        overall.addActive(lag)
        perStream.get(stream).foreach(_.addActive(lag))
      }
    }
    val all = overall.metrics(snapshot.efo) ++
      Some(oldestPending).filter(_ != Long.MaxValue)
        .map(t => "oldestBufferedRecordAgeMs" -> math.max(0L, now - t).toString) ++
      Map(
        "bufferedRecords" -> snapshot.buffer.bufferedRecords.toString,
        "bufferedBytes" -> snapshot.buffer.bufferedBytes.toString,
        "fetchRounds" -> snapshot.fetchRounds.toString,
        "lastRoundBlocks" -> snapshot.lastRoundBlocks.toString,
        "blocksStored" -> snapshot.blocksStored.toString,
        "blockReadsLocal" -> snapshot.blockReadsLocal.toString,
        "blockReadsRemote" -> snapshot.blockReadsRemote.toString,
        "blockReadsFromKinesis" -> snapshot.blockReadsFromKinesis.toString,
        "lastRoundMs" -> snapshot.lastRoundMs.toString,
        "fetchTicketsLost" -> snapshot.lostTickets.toString,
        "fetchResultsRefused" -> snapshot.refusedResults.toString,
        "fetchRefusedBlocks" -> snapshot.refusedBlocks.toString,
        "fetchRefusedBlocksRemoved" -> snapshot.refusedBlocksRemoved.toString,
        "recordsRead" -> snapshot.recordsRead.toString,
        "bytesRead" -> snapshot.bytesRead.toString,
        "dataLossEvents" -> (snapshot.driverDataLossEvents + overall.dataLossEvents).toString)
    val streamMetrics = perStream.flatMap { case (stream, totals) =>
      totals.metrics(snapshot.efo).map { case (k, v) => s"$stream.$k" -> v }
    }
    // Trigger.AvailableNow's end: records that arrived after this time (epoch millis) are left for the next run.
    val target = snapshot.availableNowTargetMillis.map(t => "availableNowTargetMillis" -> t.toString)
    val offsetSize = Some(snapshot.offsetBytes).filter(_ > 0).map(b => "offsetBytes" -> b.toString)
    all ++ streamMetrics ++ target ++ snapshot.driverTimings ++ offsetSize
  }

  /**
   * How far the query's processed position of a shard is behind the shard's tip (Kinesis's MillisBehindLatest, but
   * of what the query processed, not of what was fetched): the fetched position's lag, plus the span of arrival times
   * of the records buffered and not processed yet. While fetching is paused (the buffer is full) a shard that was
   * behind its tip falls further behind as time passes, so the lag measured then grows by the time since; one that
   * was at its tip is taken to stay there (a producer may have written since, which only the next fetch can tell).
   */
  private def processedLag(stats: ShardStats, pending: Seq[FetchedRange], now: Long): Option[Long] =
    stats.millisBehindLatest.map { fetched =>
      val since = if (fetched > 0) stats.lagMeasuredAtMillis.fold(0L)(at => math.max(0L, now - at)) else 0L
      val buffered =
        if (pending.isEmpty) 0L else math.max(0L, pending.last.lastArrivalMillis - pending.head.firstArrivalMillis)
      fetched + since + buffered
    }
}
