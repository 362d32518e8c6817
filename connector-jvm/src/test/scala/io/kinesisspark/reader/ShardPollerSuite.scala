package io.kinesisspark.reader

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{DataLossPolicy, ShardPosition, SteppedClock}
import io.kinesisspark.ShardPosition.TrimHorizon
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.reader.fanout.{FakeShardSubscriber, FanOutShardReader, ManualScheduler, ShardSubscription}
import io.kinesisspark.reader.polling.PollingShardReader

class ShardPollerSuite extends AnyFunSuite {

  /** A shard with no record yet (FakeKinesisApi makes a shard at its first record). */
  private def empty(api: FakeKinesisApi, shard: String): Unit = api.shards.getOrElseUpdate(shard, ArrayBuffer.empty)

  private def polling(api: FakeKinesisApi, shard: String, clock: SteppedClock, from: ShardPosition = TrimHorizon) =
    new PollingShardReader(api, "s", shard, from, FetchLimits(100, minFetchPeriodMs = 200), clock, clock.sleep)

  test("returns the first shard that gives records, after calling the others in turn") {
    val api = new FakeKinesisApi(); empty(api, "shard-0"); api.add("shard-1", 3)
    val clock = new SteppedClock
    val (idle, full) = (polling(api, "shard-0", clock), polling(api, "shard-1", clock))
    val found = new ShardPoller(Seq(idle, full), clock, clock.sleep).pollUntil(1000L)
    assert(found.map(_._1).contains(full))
    assert(found.get._2.records.map(_.data.toSeq) == api.shards("shard-1").map(_.data.toSeq))
    assert(full.position == found.get._2.lastPosition.get)
    assert(idle.calls == 1 && clock.now == 0L) // no wait: shard-1 could call at once
  }

  test("a reader that never called is polled at once, whatever the clock says (no overflow of its ready time)") {
    val api = new FakeKinesisApi(); api.add("shard-0", 2)
    val clock = new SteppedClock
    clock.now = 1764288000000L // 2025-11-28, as a system clock would say
    val reader = polling(api, "shard-0", clock)
    val found = new ShardPoller(Seq(reader), clock, clock.sleep).pollUntil(clock.now + 1000L)
    assert(found.map(_._2.count).contains(2))
    assert(clock.sleeps.isEmpty && clock.now == 1764288000000L)
  }

  test("with nothing to read, waits until the deadline, keeping each shard's spacing, and returns nothing") {
    val api = new FakeKinesisApi(); empty(api, "shard-0"); empty(api, "shard-1")
    val clock = new SteppedClock
    val readers = Seq(polling(api, "shard-0", clock), polling(api, "shard-1", clock))
    assert(new ShardPoller(readers, clock, clock.sleep).pollUntil(1000L).isEmpty)
    assert(clock.now == 1000L)
    // Calls at 0, 200, 400, 600 and 800 ms on each shard: minFetchPeriod, and none at or after the deadline.
    assert(readers.map(_.calls) == Seq(5L, 5L))
  }

  test("records put while it waits come at the shard's next call") {
    val api = new FakeKinesisApi(); empty(api, "shard-0")
    val clock = new SteppedClock
    var put = false
    val sleep: Long => Unit = { ms =>
      clock.sleep(ms)
      if (clock.now >= 500L && !put) { api.add("shard-0", 2, arrivalMillis = 500L); put = true }
    }
    val reader = polling(api, "shard-0", clock)
    val found = new ShardPoller(Seq(reader), clock, sleep).pollUntil(5000L)
    assert(found.map(_._2.count).contains(2))
    assert(clock.now == 600L) // the first call after the put, on the shard's 200 ms spacing
  }

  test("a shard's end is returned; once every shard has ended there is nothing to wait for") {
    val api = new FakeKinesisApi(); empty(api, "shard-0")
    api.closed += "shard-0"
    val clock = new SteppedClock
    val reader = polling(api, "shard-0", clock)
    val poller = new ShardPoller(Seq(reader), clock, clock.sleep)
    val found = poller.pollUntil(1000L)
    assert(found.exists(_._2.ended) && reader.ended)
    assert(poller.pollUntil(5000L).isEmpty && clock.now < 1000L)
  }

  test("readers of both modes go in one poll: the polled shard has nothing, the fanned-out one's event is returned") {
    val api = new FakeKinesisApi(); empty(api, "polled"); api.add("fanned-out", 5)
    val clock = new SteppedClock
    val scheduler = new ManualScheduler(clock)
    val subscriber = new FakeShardSubscriber(api.shards("fanned-out"), perEvent = 10, clock)
    val arn = "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/c:1"
    val fanOut = new FanOutShardReader(api, { from =>
      val s = new ShardSubscription(subscriber, arn, "s", "fanned-out", from, 4, None, scheduler, clock, new Random(5))
      s.start()
      s
    }, "s", "fanned-out", TrimHorizon, arn, FetchLimits(100), clock, DataLossPolicy(failOnDataLoss = true),
      pollWaitMs = 0L)
    scheduler.runNext() // the subscription starts
    val polled = polling(api, "polled", clock)
    val found = new ShardPoller(Seq(polled, fanOut), clock, clock.sleep).pollUntil(1000L)
    assert(found.map(_._1).contains(fanOut) && found.get._2.count == 5)
    assert(polled.calls <= 1 && fanOut.position == found.get._2.lastPosition.get)
  }
}
