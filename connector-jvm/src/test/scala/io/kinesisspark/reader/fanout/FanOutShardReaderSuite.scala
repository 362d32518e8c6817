package io.kinesisspark.reader.fanout

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.InvalidArgumentException

import io.kinesisspark.{DataLossPolicy, KinesisSparkException, SteppedClock}
import io.kinesisspark.ShardPosition.{AfterRecord, TrimHorizon}
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.reader.FetchLimits

class FanOutShardReaderSuite extends AnyFunSuite {
  import FakeShardSubscriber._

  private val Arn = "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/c:1"
  private val shardIds = new java.util.concurrent.atomic.AtomicInteger()

  /** A shard in a FakeKinesisApi (for the polling calls) whose records a FakeShardSubscriber also serves. */
  private final class Setup(records: Int, dataLoss: DataLossPolicy = DataLossPolicy(failOnDataLoss = true)) {
    val shard = s"efo-shard-${shardIds.incrementAndGet()}"
    val api = new FakeKinesisApi()
    api.add(shard, records)
    val clock = new SteppedClock
    val scheduler = new ManualScheduler(clock)
    val subscriber = new FakeShardSubscriber(api.shards(shard), perEvent = 10, clock)
    val reader = new FanOutShardReader(api, { from =>
      val s = new ShardSubscription(subscriber, Arn, "s", shard, from, 4, None, scheduler, clock, new Random(5))
      s.start()
      s
    }, "s", shard, TrimHorizon, Arn, FetchLimits(100, minFetchPeriodMs = 200), clock, dataLoss, pollWaitMs = 0L)

    /** Calls next() until it gives something other than "nothing yet", running due resubscriptions. */
    def next(): io.kinesisspark.reader.ShardReadBatch = {
      var batch = reader.next()
      while (batch eq io.kinesisspark.reader.ShardReadBatch.Throttled) {
        scheduler.runNext()
        batch = reader.next()
      }
      batch
    }
  }

  test("records and lag come from the events; a batch at the tip with nothing queued is caught up") {
    val s = new Setup(records = 25)
    val batches = Seq.fill(3)(s.next())
    assert(batches.map(_.records.size) == Seq(10, 10, 5))
    assert(batches.map(_.millisBehindLatest) == Seq(15000L, 5000L, 0L))
    assert(batches.map(_.caughtUp) == Seq(false, false, true))
    assert(s.reader.position == AfterRecord(s.api.shards(s.shard).last.sequenceNumber))
    assert(s.reader.calls == 3 && s.api.getRecordsCalls == 0)
  }

  test("an event queued before the round began does not make the round caught up (Trigger.AvailableNow's target)") {
    val s = new Setup(records = 5)
    s.scheduler.runNext() // the subscription queues the shard's 5 records, at the tip
    s.clock.now += 100
    s.reader.roundStarted(s.clock.now)
    val stale = s.reader.next()
    assert(stale.records.size == 5 && stale.millisBehindLatest == 0L && !stale.caughtUp)
    assert(!s.reader.next().caughtUp, "nothing new since the round began: not known to be at the tip yet")
    s.api.add(s.shard, 2)
    s.subscriber.pump()
    val fresh = s.reader.next()
    assert(fresh.records.size == 2 && fresh.caughtUp)
    assert(s.reader.next().caughtUp)
  }

  test("a closed shard whose endpoint never says so ends once the polling reader confirms SHARD_END") {
    val s = new Setup(records = 12)
    s.api.closed += s.shard
    s.next(); s.next() // all 12 records, caught up
    val open = s.next()
    assert(!open.ended && open.caughtUp && s.api.getRecordsCalls == 0, "not known closed: no polling")
    s.reader.shardClosed(true)
    val ended = s.next()
    assert(ended.ended && ended.records.isEmpty && s.reader.ended)
    assert(s.api.getRecordsCalls == 1 && s.api.iteratorCalls == 1)
  }

  test("a closed shard is not confirmed while the subscription is behind, and confirmed at most once a second") {
    val s = new Setup(records = 30)
    s.reader.shardClosed(true)
    s.next() // 10 records, 20 behind: no polling
    assert(s.api.getRecordsCalls == 0)
    s.next(); s.next()
    // The shard gets a record the subscription has not delivered yet: polling sees it, so the shard has not ended.
    s.api.add(s.shard, 1)
    s.api.closed += s.shard
    val early = s.reader.next()
    assert(!early.ended && s.api.getRecordsCalls == 1)
    s.reader.next()
    assert(s.api.getRecordsCalls == 1, "not again within a second")
  }

  test("an endpoint that announces the end (no continuation) ends the shard without polling") {
    val s = new Setup(records = 5)
    s.subscriber.closedShard = true
    val batch = s.next()
    assert(batch.records.size == 5 && batch.ended && s.reader.ended && s.api.getRecordsCalls == 0)
  }

  // Kinesis starts a subscription at a trimmed sequence number from the oldest record left; an emulator may refuse it.
  for (refused <- Seq(false, true)) {
    val how = if (refused) "refused" else "served from the oldest record"

    def trimmedReader(s: Setup, dataLoss: DataLossPolicy): FanOutShardReader = {
      s.api.trimmedBefore(s.shard) = 3
      s.subscriber.trimmedBefore = 3
      if (refused) s.subscriber.script += Refuse(InvalidArgumentException.builder().message("Invalid StartingSequenceNumber").build())
      // Resume after record 1, which is gone (so is record 2).
      val r = new FanOutShardReader(s.api, { from =>
        val sub = new ShardSubscription(s.subscriber, Arn, "s", s.shard, from, 4, None, s.scheduler, s.clock)
        sub.start()
        sub
      }, "s", s.shard, AfterRecord(s.api.shards(s.shard)(1).sequenceNumber), Arn, FetchLimits(100), s.clock, dataLoss,
        pollWaitMs = 0L)
      s.scheduler.runNext()
      r
    }

    def nextBatch(s: Setup, r: FanOutShardReader): io.kinesisspark.reader.ShardReadBatch = {
      var batch = r.next()
      while (batch eq io.kinesisspark.reader.ShardReadBatch.Throttled) { s.scheduler.runNext(); batch = r.next() }
      batch
    }

    test(s"a subscription whose resume record was trimmed fails by default, naming the position ($how)") {
      val s = new Setup(records = 5)
      val r = trimmedReader(s, DataLossPolicy(failOnDataLoss = true))
      val e = intercept[KinesisSparkException](nextBatch(s, r))
      assert(e.getMessage.contains("Data loss") && e.getMessage.contains(s.api.shards(s.shard)(1).sequenceNumber), e.getMessage)
      assert(s.subscriber.attempts.head.from == io.kinesisspark.ShardPosition.atRecord(s.api.shards(s.shard)(1).sequenceNumber))
    }

    test(s"without failOnDataLoss a trimmed resume record is counted once and reading goes on; the position never moves back ($how)") {
      val s = new Setup(records = 5, dataLoss = DataLossPolicy(failOnDataLoss = false))
      val start = AfterRecord(s.api.shards(s.shard)(1).sequenceNumber)
      val r = trimmedReader(s, DataLossPolicy(failOnDataLoss = false))
      assert(r.position == start)
      val batch = nextBatch(s, r)
      assert(batch.records.map(_.sequenceNumber) == s.api.shards(s.shard).drop(3).map(_.sequenceNumber))
      assert(r.dataLossEvents == 1)
    }
  }

  test("a subscription resuming after a record still in the shard starts AT it and counts no loss") {
    val s = new Setup(records = 5)
    s.subscriber.trimmedBefore = 1
    val r = new FanOutShardReader(s.api, { from =>
      val sub = new ShardSubscription(s.subscriber, Arn, "s", s.shard, from, 4, None, s.scheduler, s.clock)
      sub.start()
      sub
    }, "s", s.shard, AfterRecord(s.api.shards(s.shard)(1).sequenceNumber), Arn, FetchLimits(100), s.clock,
      pollWaitMs = 0L)
    s.scheduler.runNext()
    var batch = r.next()
    while (batch eq io.kinesisspark.reader.ShardReadBatch.Throttled) { s.scheduler.runNext(); batch = r.next() }
    assert(batch.records.map(_.sequenceNumber) == s.api.shards(s.shard).drop(2).map(_.sequenceNumber))
    assert(r.dataLossEvents == 0)
  }

  test("the reader is scheduled first when it has events queued, else after the shards polled before it") {
    val s = new Setup(records = 5)
    s.scheduler.runNext()
    assert(s.reader.readyAt == Long.MinValue)
    s.reader.next()
    s.clock.now += 7
    s.reader.next()
    assert(s.reader.readyAt == s.clock.millis())
  }
}
