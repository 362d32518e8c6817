package io.kinesisspark.reader.polling

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._
import io.kinesisspark.SteppedClock
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.reader.{FetchLimits, ResumeCheck, ShardReadBatch, TransientBackoff}

class PollingShardReaderSuite extends AnyFunSuite {

  private def reader(api: FakeKinesisApi, from: io.kinesisspark.ShardPosition, limit: Int, clock: SteppedClock) =
    new PollingShardReader(api, "s", "shard-0", from, FetchLimits(limit, minFetchPeriodMs = 400), clock, clock.sleep)

  test("reads forward page by page, spacing calls by minFetchPeriod, and reports lag") {
    val api = new FakeKinesisApi(); api.add("shard-0", 25)
    val clock = new SteppedClock
    val r = reader(api, TrimHorizon, 10, clock)
    val b1 = r.next(); val b2 = r.next(); val b3 = r.next()
    assert(Seq(b1, b2, b3).map(_.records.size) == Seq(10, 10, 5))
    assert(b1.millisBehindLatest > 0 && !b1.caughtUp && b3.caughtUp)
    assert(clock.sleeps == Seq(400L, 400L))
    assert(r.position == AfterRecord("340"))
    assert(api.iteratorCalls == 1) // the iterator is kept between calls
  }

  test("catchUpAtOnce: no wait after records with more to follow; minFetchPeriod once caught up; 5 calls a second") {
    val api = new FakeKinesisApi(); api.add("shard-0", 55)
    val clock = new SteppedClock
    val r = new PollingShardReader(api, "s", "shard-0", TrimHorizon,
      FetchLimits(10, minFetchPeriodMs = 400, catchUpAtOnce = true), clock, clock.sleep)
    val callTimes = (1 to 7).map { _ => val t = math.max(clock.now, r.readyAt); r.next(); t }
    // Five full pages at once; the sixth (the last 5 records, caught up) once the 1-second window allows; then
    // minFetchPeriod again.
    assert(callTimes.take(5).forall(_ == 0L), callTimes)
    assert(callTimes(5) > 1000L && callTimes(6) - callTimes(5) == 400L, callTimes)
    assert(r.position == AfterRecord(api.shards("shard-0").last.sequenceNumber))
  }

  test("afterRecordsPeriodMs: a response with records is followed after that period, an empty one after the period") {
    val api = new FakeKinesisApi(); api.add("shard-0", 5)
    val clock = new SteppedClock
    val limits = FetchLimits(10, minFetchPeriodMs = 400, catchUpAtOnce = true, afterRecordsPeriodMs = Some(200))
    val r = new PollingShardReader(api, "s", "shard-0", TrimHorizon, limits, clock, clock.sleep)
    def call(): (Long, Int) = {
      val t = math.max(clock.now, r.readyAt)
      clock.sleep(t - clock.now)
      (t, r.next().records.size)
    }
    val first = call()   // 5 records, caught up
    val second = call()  // nothing new
    api.add("shard-0", 3)
    val third = call()   // 3 records
    val fourth = call()
    assert(Seq(first, second, third, fourth) == Seq((0L, 5), (200L, 0), (600L, 3), (800L, 0)))
  }

  test("an empty response with a lag is followed after afterRecordsPeriodMs, not at once; without it, minFetchPeriod") {
    for ((afterRecords, secondCall) <- Seq(Some(200L) -> 200L, None -> 400L)) {
      val api = new FakeKinesisApi(); api.add("shard-0", 5); api.emptyWithLagNext = 1
      val clock = new SteppedClock
      val r = new PollingShardReader(api, "s", "shard-0", TrimHorizon,
        FetchLimits(10, minFetchPeriodMs = 400, catchUpAtOnce = true, afterRecordsPeriodMs = afterRecords), clock,
        clock.sleep)
      val empty = r.next()
      assert(empty.records.isEmpty && empty.millisBehindLatest > 0 && !empty.caughtUp)
      assert(r.readyAt == secondCall, s"afterRecordsPeriodMs = $afterRecords")
      clock.sleep(math.max(0L, r.readyAt - clock.now))
      assert(r.next().records.size == 5)
    }
  }

  test("a full response is not caught up even with no lag; a short one with no lag is") {
    val api = new FakeKinesisApi(); api.add("shard-0", 10)
    val r = reader(api, TrimHorizon, 10, new SteppedClock)
    val full = r.next()
    assert(full.records.size == 10 && full.millisBehindLatest == 0 && !full.caughtUp)
    val empty = r.next()
    assert(empty.records.isEmpty && empty.caughtUp)
  }

  test("never six calls within one second, even at minFetchPeriod 200ms") {
    val api = new FakeKinesisApi(); api.add("shard-0", 100)
    val clock = new SteppedClock
    val r = new PollingShardReader(api, "s", "shard-0", TrimHorizon, FetchLimits(5, minFetchPeriodMs = 200), clock,
      clock.sleep)
    val callTimes = (1 to 11).map { _ => val t = math.max(clock.now, r.readyAt); r.next(); t }
    callTimes.sliding(6).foreach(window => assert(window.last - window.head > 1000, callTimes))
    assert(callTimes.zip(callTimes.tail).forall { case (a, b) => b - a >= 200 })
  }

  test("detects the end of a closed shard") {
    val api = new FakeKinesisApi(); api.add("shard-0", 3); api.closed += "shard-0"
    val r = reader(api, AfterRecord("100"), 10, new SteppedClock)
    val b = r.next()
    assert(b.records.map(_.sequenceNumber) == Seq("110", "120") && b.ended && r.ended)
    intercept[IllegalArgumentException](r.next())
  }

  test("an expired iterator is replaced from the last record read, without loss or repeats") {
    val api = new FakeKinesisApi(); api.add("shard-0", 6)
    val r = reader(api, TrimHorizon, 3, new SteppedClock)
    val first = r.next().records
    api.expireNext = 1
    val second = r.next().records
    assert((first ++ second).map(_.sequenceNumber) == (0 until 6).map(i => (100 + i * 10).toString))
    assert(api.iteratorCalls == 2)
  }

  test("an iterator that expires again at once is retried after a back-off, not fatal, and bounded") {
    // The fault-injecting proxy in the end-to-end tests can expire the fresh iterator too; that once stopped a query.
    val api = new FakeKinesisApi(); api.add("shard-0", 6)
    val clock = new SteppedClock
    val r = reader(api, TrimHorizon, 3, clock)
    val first = r.next().records
    api.expireNext = 2
    val failed = r.next()
    assert(failed.records.isEmpty && !failed.caughtUp && r.readyAt > clock.millis())
    val rest = r.next().records ++ r.next().records
    assert((first ++ rest).map(_.sequenceNumber) == (0 until 6).map(i => (100 + i * 10).toString))
    api.expireNext = Int.MaxValue // never valid: give up after the transient retries, naming the call
    val e = intercept[Exception](while (true) r.next())
    assert(e.getMessage.contains("GetRecords") && e.getMessage.contains("shard-0"), e.getMessage)
  }

  test("the byte budget spaces calls by response size / maxFetchRate") {
    val api = new FakeKinesisApi(); api.add("shard-0", 20) // "data-N": 6 or 7 bytes each
    val clock = new SteppedClock
    val limits = FetchLimits(10, minFetchPeriodMs = 200, maxFetchRateBytesPerSec = 10.0) // 10 bytes/s
    val r = new PollingShardReader(api, "s", "shard-0", TrimHorizon, limits, clock, clock.sleep)
    val first = r.next()
    val bytes = first.records.map(_.data.length).sum
    assert(r.readyAt == bytes * 100L) // bytes / (10 bytes/s) in ms
    r.next()
    assert(clock.sleeps == Seq(bytes * 100L))
  }

  test("throttling halves the records per call, backs off about 5 s, then recovers gradually") {
    val api = new FakeKinesisApi(); api.add("shard-0", 100)
    api.throttleNext = 2
    val clock = new SteppedClock
    val r = new PollingShardReader(api, "s", "shard-0", TrimHorizon, FetchLimits(40, minFetchPeriodMs = 200), clock,
      clock.sleep, new scala.util.Random(7))
    assert(r.next() eq ShardReadBatch.Throttled)
    assert(r.currentRecordsPerCall == 20 && r.throttles == 1)
    assert(r.readyAt >= 5000 && r.readyAt < 6000)
    assert(r.next() eq ShardReadBatch.Throttled)
    assert(r.currentRecordsPerCall == 10)
    val b = r.next()
    assert(b.records.size == 10 && !b.caughtUp) // asked for 10, the halved count
    assert(r.currentRecordsPerCall == 14) // recovers by a tenth of maxRecordsPerFetch per call
    assert(clock.sleeps.forall(_ >= 5000))
  }

  test("transient errors are retried with back-off; the records read are unchanged") {
    val api = new FakeKinesisApi(); api.add("shard-0", 5)
    api.failNext = 2
    val clock = new SteppedClock
    val r = reader(api, TrimHorizon, 10, clock)
    val batches = Iterator.continually(r.next()).take(3).toSeq
    assert(batches.take(2).forall(_ eq ShardReadBatch.Throttled))
    assert(batches(2).records.map(_.sequenceNumber) == (0 until 5).map(i => (100 + i * 10).toString))
  }

  test("Kinesis failing past the retry budget fails the read with a message naming the call and what to do") {
    val api = new FakeKinesisApi(); api.add("shard-0", 5)
    api.failNext = TransientBackoff.MaxFailures + 1
    val clock = new SteppedClock
    val r = reader(api, TrimHorizon, 10, clock)
    (1 to TransientBackoff.MaxFailures).foreach(_ => assert(r.next() eq ShardReadBatch.Throttled))
    val error = intercept[io.kinesisspark.KinesisSparkException](r.next())
    assert(error.getMessage.startsWith(s"GetRecords on stream 's', shard-0 failed ${TransientBackoff.MaxFailures + 1} times in a row"))
    assert(error.getMessage.contains("Connection reset") && error.getMessage.contains("restarting the query"))
  }

  test("starts at a timestamp") {
    val api = new FakeKinesisApi(); api.add("shard-0", 5, arrivalMillis = 1000L)
    val b = reader(api, AtTimestamp(1003L), 10, new SteppedClock).next()
    assert(b.records.map(_.approximateArrivalMillis) == Seq(1003L, 1004L))
  }

  test("a start time ahead of Kinesis's clock reads nothing, caught up, until Kinesis reaches it; then from there") {
    // The driver's clock runs 20 s ahead of Kinesis's, or the query was told to start 20 s from now.
    val clock = new SteppedClock
    clock.now = 100000L
    val api = new FakeKinesisApi()
    api.kinesisNow = () => clock.now
    api.add("shard-0", 3, arrivalMillis = 99000L) // before the start: never read
    val r = reader(api, AtTimestamp(120000L), 10, clock)
    val waiting = Iterator.continually(r.next()).takeWhile(_ => clock.now < 120000L).toSeq
    assert(waiting.nonEmpty && waiting.forall(b => b.records.isEmpty && b.caughtUp && !b.ended))
    assert(waiting.size <= 21, waiting.size) // asked about once a second, not in a busy loop
    api.add("shard-0", 2, arrivalMillis = 120500L)
    val read = Iterator.continually(r.next()).take(3).flatMap(_.records).toSeq
    assert(read.map(_.approximateArrivalMillis) == Seq(120503L, 120504L)) // the fake adds each record's index
  }

  test("a shard Kinesis removed before it was read to its end is a data loss naming the shard, not a deleted stream") {
    val api = new FakeKinesisApi(); api.add("shard-0", 1)
    def gone(failOnDataLoss: Boolean) = new PollingShardReader(api, "s", "shard-7", AfterRecord("100"),
      FetchLimits(100, minFetchPeriodMs = 400), new SteppedClock, _ => (),
      dataLoss = io.kinesisspark.DataLossPolicy(failOnDataLoss))
    val error = intercept[io.kinesisspark.KinesisSparkException](gone(failOnDataLoss = true).next())
    assert(error.getMessage.contains("shard-7") && error.getMessage.contains("no longer exists"), error.getMessage)
    val lenient = gone(failOnDataLoss = false)
    val batch = lenient.next()
    assert(batch.ended && batch.records.isEmpty && lenient.ended && lenient.dataLossEvents == 1)
    assert(!lenient.streamDeleted)
  }

  private def lossReader(api: FakeKinesisApi, from: io.kinesisspark.ShardPosition, failOnDataLoss: Boolean,
                         created: Option[Long] = None) =
    new PollingShardReader(api, "s", "shard-0", from, FetchLimits(100, minFetchPeriodMs = 400), new SteppedClock,
      _ => (), dataLoss = io.kinesisspark.DataLossPolicy(failOnDataLoss), streamCreatedMillis = created)

  // Kinesis starts an iterator for a trimmed sequence number at the oldest record left; some emulators refuse it.
  for (refused <- Seq(false, true)) {
    val how = if (refused) "refused" else "served from the oldest record"
    def trimmed(before: Int): FakeKinesisApi = {
      val api = new FakeKinesisApi(); api.add("shard-0", 10); api.trimmedBefore("shard-0") = before
      api.refuseTrimmed = refused
      api
    }

    test(s"a resume position trimmed by retention fails by default, naming stream, shard, position and option ($how)") {
      val e = intercept[io.kinesisspark.KinesisSparkException](
        lossReader(trimmed(4), AfterRecord("120"), failOnDataLoss = true).next())
      for (part <- Seq("shard-0", "'s'", "failOnDataLoss", "AfterRecord(120", "140")) {
        assert(e.getMessage.contains(part), s"$part not in ${e.getMessage}")
      }
    }

    test(s"without failOnDataLoss a trimmed resume position is counted once; reading goes on from the oldest record ($how)") {
      val api = trimmed(4)
      val r = lossReader(api, AfterRecord("120"), failOnDataLoss = false, created = Some(1000L))
      assert(r.next().records.map(_.sequenceNumber) == (4 until 10).map(i => (100 + i * 10).toString))
      assert(r.dataLossEvents == 1 && !r.streamDeleted)
      api.add("shard-0", 2)
      assert(r.next().records.size == 2 && r.dataLossEvents == 1)
    }

    test(s"a resume record trimmed with nothing after it left: the position stays, no loss is counted ($how)") {
      val api = trimmed(10)
      val r = lossReader(api, AfterRecord("120"), failOnDataLoss = true)
      val batch = r.next()
      assert(batch.records.isEmpty && batch.caughtUp && r.dataLossEvents == 0)
      assert(r.position == AfterRecord("120"), "the position never moves back (a fetch round appends from it)")
      api.add("shard-0", 1)
      assert(r.next().records.map(_.sequenceNumber) == Seq("200") && r.dataLossEvents == 0)
    }
  }

  test("a loss whose check fails in passing (DescribeStreamSummary throttled) is judged again, not lost unreported") {
    val api = new FakeKinesisApi(); api.add("shard-0", 10); api.trimmedBefore("shard-0") = 4
    var describes = 0
    val check = new ResumeCheck("s", "shard-0", io.kinesisspark.DataLossPolicy(failOnDataLoss = true), beforeLoss = () => {
      describes += 1
      if (describes == 1) throw new RuntimeException("Rate exceeded")
    })
    check.iteratorPosition(AfterRecord("120"), recordsFollowed = false)
    val response = api.getRecords("s", api.shardIterator("s", "shard-0", atRecord("120")), 100)
    intercept[RuntimeException](check.lossReported(response.records, atTip = true, AfterRecord("120")))
    val e = intercept[io.kinesisspark.KinesisSparkException](
      check.lossReported(response.records, atTip = true, AfterRecord("120")))
    assert(e.getMessage.contains("failOnDataLoss") && describes == 2)
  }

  test("resuming after a record still in the shard starts AT it and loses nothing") {
    val api = new FakeKinesisApi(); api.add("shard-0", 10); api.trimmedBefore("shard-0") = 2 // "120" is the oldest
    val r = lossReader(api, AfterRecord("120"), failOnDataLoss = true)
    assert(r.next().records.map(_.sequenceNumber) == (3 until 10).map(i => (100 + i * 10).toString))
    assert(r.dataLossEvents == 0)
    api.trimmedBefore("shard-0") = 9 // trimmed under a live iterator: Kinesis's answers cannot show it
    api.add("shard-0", 1)
    assert(r.next().records.map(_.sequenceNumber) == Seq("200") && r.dataLossEvents == 0)
  }

  // Records arrive at 1000 ms and on (FakeKinesisApi); a retention of 60 s puts the edge (a tenth of it before
  // expiry) at 54 s past a record's arrival.
  private def edgeReader(api: FakeKinesisApi, clock: SteppedClock, failOnDataLoss: Boolean) =
    new PollingShardReader(api, "s", "shard-0", TrimHorizon, FetchLimits(4, minFetchPeriodMs = 400), clock, clock.sleep,
      dataLoss = io.kinesisspark.DataLossPolicy(failOnDataLoss), retentionMillis = Some(60000L))

  test("a reader whose last record nears the retention period's end starts each call AT it: a trim is reported") {
    for (failOnDataLoss <- Seq(true, false)) {
      val api = new FakeKinesisApi(); api.add("shard-0", 10)
      val clock = new SteppedClock
      clock.now = 2000L
      val r = edgeReader(api, clock, failOnDataLoss)
      assert(r.next().records.size == 4 && r.next().records.size == 4)
      assert(api.iteratorCalls == 1, "away from the edge the iterator is kept")
      clock.now = 1007L + 55000L // the last record read (arrived at 1007) is 55 s old
      assert(r.next().records.map(_.sequenceNumber) == Seq("180", "190") && api.iteratorCalls == 2)
      api.add("shard-0", 6, arrivalMillis = 50000L)
      api.trimmedBefore("shard-0") = 12 // the last record read ("190") and two after it expire
      if (failOnDataLoss) {
        val e = intercept[io.kinesisspark.KinesisSparkException](r.next())
        assert(e.getMessage.contains("failOnDataLoss") && e.getMessage.contains("AfterRecord(190"), e.getMessage)
      } else {
        assert(r.next().records.map(_.sequenceNumber) == Seq("220", "230", "240", "250"))
        assert(r.dataLossEvents == 1 && api.iteratorCalls == 3)
        api.add("shard-0", 2, arrivalMillis = 56000L)
        assert(r.next().records.map(_.sequenceNumber) == Seq("260", "270") && api.iteratorCalls == 3, "fresh again")
      }
    }
  }

  test("at the retention edge, a last record gone with nothing after it is judged once; later records are read") {
    val api = new FakeKinesisApi(); api.add("shard-0", 4)
    val clock = new SteppedClock
    clock.now = 2000L
    val r = edgeReader(api, clock, failOnDataLoss = true)
    assert(r.next().records.size == 4)
    assert(r.next().caughtUp, "an idle shard: its reader has seen the tip since its last record")
    clock.now = 1003L + 61000L
    api.trimmedBefore("shard-0") = 4 // everything expired: an idle shard past its retention period
    assert(r.next().records.isEmpty && r.dataLossEvents == 0 && api.iteratorCalls == 2)
    assert(r.next().records.isEmpty && api.iteratorCalls == 2, "judged once, not at every call")
    api.add("shard-0", 1, arrivalMillis = clock.now)
    assert(r.next().records.map(_.sequenceNumber) == Seq("140") && r.dataLossEvents == 0)
  }

  test("at the retention edge, records that followed the last one read and expired with it are a loss") {
    // The query lags: its last response was full (records followed), then retention takes the last record read and
    // everything after it before the next call. Nothing is left to point at the gap, yet records were lost.
    for (failOnDataLoss <- Seq(true, false)) {
      val api = new FakeKinesisApi(); api.add("shard-0", 10)
      val clock = new SteppedClock
      clock.now = 2000L
      val r = edgeReader(api, clock, failOnDataLoss)
      assert(r.next().records.size == 4 && !r.next().caughtUp)
      clock.now = 1007L + 61000L
      api.trimmedBefore("shard-0") = 10
      if (failOnDataLoss) {
        val e = intercept[io.kinesisspark.KinesisSparkException](r.next())
        assert(e.getMessage.contains("failOnDataLoss") && e.getMessage.contains("expired unread"), e.getMessage)
      } else {
        assert(r.next().records.isEmpty && r.dataLossEvents == 1)
        api.add("shard-0", 2, arrivalMillis = clock.now)
        assert(r.next().records.map(_.sequenceNumber) == Seq("200", "210") && r.dataLossEvents == 1)
      }
    }
  }

  test("a stream created again is not read on from the old stream's position") {
    val api = new FakeKinesisApi(); api.add("shard-0", 10); api.trimmedBefore("shard-0") = 4; api.createdMillis = 2000L
    val r = lossReader(api, AfterRecord("120"), failOnDataLoss = false, created = Some(1000L))
    assert(r.next().records.isEmpty && r.next().records.isEmpty)
    assert(r.streamDeleted && r.dataLossEvents == 1)
    val e = intercept[io.kinesisspark.KinesisSparkException](
      lossReader(api, AfterRecord("120"), failOnDataLoss = true, created = Some(1000L)).next())
    assert(e.getMessage.contains("deleted and created again"), e.getMessage)
  }

  test("a stream deleted while read: fails by default; otherwise counted once and nothing more is read") {
    val api = new FakeKinesisApi(); api.add("shard-0", 10)
    val r = lossReader(api, TrimHorizon, failOnDataLoss = false)
    assert(r.next().records.size == 10)
    api.deleted = true
    val it = lossReader(api, AfterRecord("190"), failOnDataLoss = false)
    assert(it.next().records.isEmpty && it.next().records.isEmpty && it.streamDeleted && it.dataLossEvents == 1)
    val e = intercept[io.kinesisspark.KinesisSparkException](lossReader(api, TrimHorizon, failOnDataLoss = true).next())
    assert(e.getMessage.contains("deleted"), e.getMessage)
  }
}
