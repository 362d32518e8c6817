package io.kinesisspark.efo

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.InvalidArgumentException

import io.kinesisspark.{DataLossPolicy, KinesisSparkException, SteppedClock}
import io.kinesisspark.ShardPosition.{AfterRecord, TrimHorizon}
import io.kinesisspark.fetch.{FakeKinesisApi, FetchLimits}

class EfoShardReaderSuite extends AnyFunSuite {
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
    val reader = new EfoShardReader(api, { from =>
      val s = new ShardSubscription(subscriber, Arn, "s", shard, from, 4, None, scheduler, clock, new Random(5))
      s.start()
      s
    }, "s", shard, TrimHorizon, Arn, FetchLimits(100, minFetchPeriodMs = 200), clock, dataLoss, pollWaitMs = 0L)

    /** Calls next() until it gives something other than "nothing yet", running due resubscriptions. */
    def next(): io.kinesisspark.fetch.ShardReadBatch = {
      var batch = reader.next()
      while (batch eq io.kinesisspark.fetch.ShardReadBatch.Throttled) {
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

  test("a position trimmed away goes to the data-loss policy: fail, or go on from TRIM_HORIZON") {
    val failing = new Setup(records = 5)
    failing.api.trimmedBefore(failing.shard) = 3
    val refused = InvalidArgumentException.builder().message("Invalid StartingSequenceNumber").build()
    failing.subscriber.script += Refuse(refused)
    // Resume after a record that is gone.
    val r = new EfoShardReader(failing.api, { from =>
      val s = new ShardSubscription(failing.subscriber, Arn, "s", failing.shard, from, 4, None, failing.scheduler,
        failing.clock)
      s.start()
      s
    }, "s", failing.shard, AfterRecord(failing.api.shards(failing.shard)(1).sequenceNumber), Arn, FetchLimits(100),
      failing.clock, pollWaitMs = 0L)
    failing.scheduler.runNext()
    assert(intercept[KinesisSparkException](r.next()).getMessage.contains("Data loss"))

    val going = new Setup(records = 5, dataLoss = DataLossPolicy(failOnDataLoss = false))
    going.api.trimmedBefore(going.shard) = 3
    going.subscriber.script += Refuse(refused)
    val g = new EfoShardReader(going.api, { from =>
      val s = new ShardSubscription(going.subscriber, Arn, "s", going.shard, from, 4, None, going.scheduler, going.clock)
      s.start()
      s
    }, "s", going.shard, AfterRecord(going.api.shards(going.shard)(1).sequenceNumber), Arn, FetchLimits(100),
      going.clock, DataLossPolicy(failOnDataLoss = false), pollWaitMs = 0L)
    going.scheduler.runNext()
    assert(g.next().records.isEmpty && g.dataLossEvents == 1 && g.position == TrimHorizon)
    going.scheduler.runNext()
    assert(g.next().records.nonEmpty)
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
