package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition.{AfterRecord, Finished, TrimHorizon}
import io.kinesisspark.blocks.FetchedRange
import io.kinesisspark.reader.ShardCounters

class SourceMetricsSuite extends AnyFunSuite {
  private val now = 100000L

  private val base = SourceMetrics.Snapshot(
    streams = Seq("clicks"),
    efo = false,
    consumed = None,
    starts = Map.empty,
    stats = Map.empty,
    buffer = BufferIndex.Snapshot(Map.empty, bufferedRecords = 0L, bufferedBytes = 0L),
    fetchRounds = 7L,
    lastRoundBlocks = 3L,
    blocksStored = 40L,
    lastRoundMs = 250L,
    lostTickets = 2L,
    refusedResults = 1L,
    refusedBlocks = 3L,
    refusedBlocksRemoved = 2L,
    blockReadsLocal = 30L,
    blockReadsRemote = 6L,
    blockReadsFromKinesis = 1L,
    recordsRead = 1200L,
    bytesRead = 64000L,
    driverDataLossEvents = 0L,
    availableNowTargetMillis = None,
    driverTimings = Map("driverCommitMs" -> "1.500", "driverCommitCpuMs" -> "1.200"),
    offsetBytes = 0L)

  /** What `base` reports as it holds it, whatever the shards. */
  private val reportedAsTheyAre = Map(
    "bufferedRecords" -> "0",
    "bufferedBytes" -> "0",
    "fetchRounds" -> "7",
    "lastRoundBlocks" -> "3",
    "blocksStored" -> "40",
    "lastRoundMs" -> "250",
    "fetchTicketsLost" -> "2",
    "fetchResultsRefused" -> "1",
    "fetchRefusedBlocks" -> "3",
    "fetchRefusedBlocksRemoved" -> "2",
    "blockReadsLocal" -> "30",
    "blockReadsRemote" -> "6",
    "blockReadsFromKinesis" -> "1",
    "recordsRead" -> "1200",
    "bytesRead" -> "64000",
    "driverCommitMs" -> "1.500",
    "driverCommitCpuMs" -> "1.200")

  /** The lag metrics over the active shards with a known lag, under `prefix` (a stream's: "clicks."). */
  private def lags(avg: String, max: Long, min: Long, prefix: String = ""): Map[String, String] =
    Map("avgMsBehindLatest" -> avg, "maxMsBehindLatest" -> max.toString, "minMsBehindLatest" -> min.toString)
      .map { case (k, v) => s"$prefix$k" -> v }

  /** The active shards and what their readers counted, under `prefix`. */
  private def fetching(active: Int, throttles: Long, avgFetchLatencyMs: Long, outOfRange: Long = 0L,
      corrupt: Long = 0L, prefix: String = ""): Map[String, String] =
    Map("activeShards" -> active.toLong, "throttlingEvents" -> throttles, "outOfRangeSubRecords" -> outOfRange,
      "corruptAggregates" -> corrupt, "avgFetchLatencyMs" -> avgFetchLatencyMs)
      .map { case (k, v) => s"$prefix$k" -> v.toString }

  /** Statistics of a shard whose fetched lag was `lag`, measured `agoMs` before `now`. */
  private def stats(lag: Option[Long], agoMs: Long = 0L, counters: ShardCounters = ShardCounters.Zero,
      lastRound: ShardCounters = ShardCounters.Zero): ShardStats =
    ShardStats(lag, lagMeasuredAtMillis = lag.map(_ => now - agoMs), caughtUpAtRoundStart = None,
      location = Some("executor_h_1"), counters, lastRound)

  private def range(stream: String, shard: String, from: ShardPosition, to: ShardPosition, records: Int,
      firstArrival: Long, lastArrival: Long): FetchedRange =
    FetchedRange(stream, shard, from, to, None, records, bytes = records * 100L, firstArrival, lastArrival)

  private def at(seq: Int): ShardPosition = AfterRecord(seq.toString)

  test("polling: a shard at its tip with nothing buffered, a shard not fetched yet, every metric exactly") {
    val snapshot = base.copy(
      starts = Map(("clicks", "shard-0") -> at(100), ("clicks", "shard-1") -> TrimHorizon),
      stats = Map(("clicks", "shard-0") -> stats(Some(0L), agoMs = 5000L,
        counters = ShardCounters(calls = 10, throttles = 2, callMillis = 300, dataLossEvents = 1,
          outOfRangeSubRecords = 3, corruptAggregates = 4),
        lastRound = ShardCounters(calls = 4, callMillis = 90))))
    assert(SourceMetrics.of(snapshot, now) == reportedAsTheyAre ++
      // shard-0 alone has a lag: 0, at its tip, however long ago that was measured
      lags(avg = "0.0", max = 0L, min = 0L) ++
      // 90 ms over the latest round's 4 calls, in whole milliseconds
      fetching(active = 2, throttles = 2, avgFetchLatencyMs = 22, outOfRange = 3, corrupt = 4) ++
      Map("dataLossEvents" -> "1"))
  }

  test("enhanced fan-out adds the subscriptions; the offset's size is there once known") {
    val snapshot = base.copy(efo = true, offsetBytes = 812L,
      starts = Map(("clicks", "shard-0") -> at(100)),
      stats = Map(("clicks", "shard-0") -> stats(None, counters = ShardCounters(calls = 3, subscriptions = 5),
        lastRound = ShardCounters(calls = 3, callMillis = 30))))
    assert(SourceMetrics.of(snapshot, now) == reportedAsTheyAre ++
      fetching(active = 1, throttles = 0, avgFetchLatencyMs = 10) ++ // 30 ms / 3 calls
      Map("dataLossEvents" -> "0", "efoSubscriptions" -> "5", "offsetBytes" -> "812"))
    assert(!SourceMetrics.of(snapshot.copy(efo = false), now).contains("efoSubscriptions"))
  }

  test("several streams: the totals over every shard, and each stream's under its name") {
    val snapshot = base.copy(
      streams = Seq("clicks", "views"),
      starts = Map(("clicks", "shard-0") -> at(1), ("views", "shard-0") -> at(2), ("views", "shard-1") -> Finished),
      stats = Map(
        ("clicks", "shard-0") -> stats(Some(1000L), counters = ShardCounters(throttles = 1),
          lastRound = ShardCounters(calls = 2, callMillis = 40)),
        ("views", "shard-0") -> stats(Some(3000L), counters = ShardCounters(throttles = 3),
          lastRound = ShardCounters(calls = 2, callMillis = 60)),
        // finished: not active, but what it counted stays in the totals
        ("views", "shard-1") -> stats(Some(0L), counters = ShardCounters(throttles = 4, dataLossEvents = 2),
          lastRound = ShardCounters(calls = 1, callMillis = 100))))
    val metrics = SourceMetrics.of(snapshot, now)
    assert(metrics == reportedAsTheyAre ++
      lags(avg = "2000.0", max = 3000L, min = 1000L) ++ // (1000 + 3000) / 2
      fetching(active = 2, throttles = 8, avgFetchLatencyMs = 40) ++ // (40 + 60 + 100) ms / (2 + 2 + 1) calls
      Map("dataLossEvents" -> "2") ++
      lags(avg = "1000.0", max = 1000L, min = 1000L, prefix = "clicks.") ++
      fetching(active = 1, throttles = 1, avgFetchLatencyMs = 20, prefix = "clicks.") ++ // 40 ms / 2 calls
      lags(avg = "3000.0", max = 3000L, min = 3000L, prefix = "views.") ++
      fetching(active = 1, throttles = 7, avgFetchLatencyMs = 53, prefix = "views.")) // 160 ms / 3 calls
    assert(metrics("views.activeShards") == "1" && metrics("views.throttlingEvents") == "7")
  }

  test("buffered ranges not processed yet: the lag adds their arrival span, and the oldest record's age is reported") {
    val chain = Vector(
      range("clicks", "shard-0", at(100), at(200), records = 10, firstArrival = 1000L, lastArrival = 1500L),
      range("clicks", "shard-0", at(200), at(300), records = 5, firstArrival = 2000L, lastArrival = 2600L),
      range("clicks", "shard-0", at(300), at(400), records = 7, firstArrival = 3000L, lastArrival = 3400L),
      // the shard's end: no records, so no arrival time to count
      range("clicks", "shard-0", at(400), Finished, records = 0, Long.MinValue, Long.MinValue))
    val snapshot = base.copy(
      starts = Map(("clicks", "shard-0") -> at(100)),
      stats = Map(("clicks", "shard-0") -> stats(Some(0L), agoMs = 100L)),
      buffer = BufferIndex.Snapshot(Map(("clicks", "shard-0") -> chain), bufferedRecords = 22L, bufferedBytes = 2200L))
    def lagAndAge(metrics: Map[String, String]) =
      (metrics("maxMsBehindLatest"), metrics("avgMsBehindLatest"), metrics("oldestBufferedRecordAgeMs"),
        metrics("bufferedRecords"), metrics("bufferedBytes"))
    // Nothing processed past where fetching started: every range is pending.
    assert(lagAndAge(SourceMetrics.of(snapshot, now)) ==
      (("2400", "2400.0", "99000", "22", "2200"))) // 3400 - 1000; 100000 - 1000
    // The query processed the first range.
    val consumed = KinesisSourceOffset(Map("clicks" -> Map("shard-0" -> at(200))))
    assert(lagAndAge(SourceMetrics.of(snapshot.copy(consumed = Some(consumed)), now)) ==
      (("1400", "1400.0", "98000", "22", "2200"))) // 3400 - 2000; 100000 - 2000
  }

  test("a shard behind its tip while fetching is paused falls further behind as time passes; one at its tip does not") {
    val snapshot = base.copy(
      starts = Map(("clicks", "shard-0") -> at(1), ("clicks", "shard-1") -> at(2)),
      stats = Map(("clicks", "shard-0") -> stats(Some(500L), agoMs = 2000L),
        ("clicks", "shard-1") -> stats(Some(0L), agoMs = 60000L)))
    def lags(metrics: Map[String, String]) =
      (metrics("minMsBehindLatest"), metrics("maxMsBehindLatest"), metrics("avgMsBehindLatest"))
    assert(lags(SourceMetrics.of(snapshot, now)) == (("0", "2500", "1250.0"))) // 500 + 2000 and 0
    assert(lags(SourceMetrics.of(snapshot, now + 1000L)) == (("0", "3500", "1750.0"))) // 500 + 3000 and 0
  }

  test("no record buffered and not processed: no oldest record's age") {
    val processedAll = base.copy(
      starts = Map(("clicks", "shard-0") -> at(100)),
      consumed = Some(KinesisSourceOffset(Map("clicks" -> Map("shard-0" -> at(200))))),
      buffer = BufferIndex.Snapshot(
        Map(("clicks", "shard-0") -> Vector(range("clicks", "shard-0", at(100), at(200), 4, 1000L, 1100L))), 4L, 400L))
    assert(!SourceMetrics.of(processedAll, now).contains("oldestBufferedRecordAgeMs"))
    val onlyTheEnd = processedAll.copy(consumed = None, buffer = BufferIndex.Snapshot(
      Map(("clicks", "shard-0") -> Vector(range("clicks", "shard-0", at(100), Finished, 0, Long.MinValue,
        Long.MinValue))), 0L, 0L))
    assert(!SourceMetrics.of(onlyTheEnd, now).contains("oldestBufferedRecordAgeMs"))
    assert(!SourceMetrics.of(base, now).contains("oldestBufferedRecordAgeMs"))
  }

  test("Trigger.AvailableNow's target time while the query runs with one") {
    assert(SourceMetrics.of(base.copy(availableNowTargetMillis = Some(1700000000000L)), now)
      .get("availableNowTargetMillis").contains("1700000000000"))
    assert(!SourceMetrics.of(base, now).contains("availableNowTargetMillis"))
  }

  test("data-loss events: the driver's and every shard reader's, of shards finished or gone from the offset too") {
    val snapshot = base.copy(driverDataLossEvents = 3L,
      starts = Map(("clicks", "shard-0") -> at(1), ("clicks", "shard-1") -> Finished),
      stats = Map(
        ("clicks", "shard-0") -> stats(None, counters = ShardCounters(dataLossEvents = 2)),
        ("clicks", "shard-1") -> stats(None, counters = ShardCounters(dataLossEvents = 4)),
        ("clicks", "shard-2") -> stats(None, counters = ShardCounters(dataLossEvents = 1))))
    val metrics = SourceMetrics.of(snapshot, now)
    assert(metrics("dataLossEvents") == "10") // 3 + 2 + 4 + 1
    assert(metrics("activeShards") == "1")
  }
}
