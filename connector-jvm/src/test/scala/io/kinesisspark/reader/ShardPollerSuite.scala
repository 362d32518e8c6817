package io.kinesisspark.reader

import java.time.Clock

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

  private val arn = "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/c:1"

  /** A fan-out reader of `shard` over `subscriber`, its subscription started by `scheduler`. */
  private def fanOut(api: FakeKinesisApi, shard: String, subscriber: FakeShardSubscriber, scheduler: ManualScheduler,
      clock: Clock, pollWaitMs: Long): FanOutShardReader = {
    val subscriptionClock = scheduler.clock
    new FanOutShardReader(api, { from =>
      val s = new ShardSubscription(subscriber, arn, "s", shard, from, 4, None, scheduler, subscriptionClock,
        new Random(5))
      s.start()
      s
    }, "s", shard, TrimHorizon, arn, FetchLimits(100), clock, DataLossPolicy(failOnDataLoss = true),
      pollWaitMs = pollWaitMs)
  }

  test("returns the first shard that gives records, after calling the others in turn") {
    val api = new FakeKinesisApi(); empty(api, "shard-0"); api.add("shard-1", 3)
    val clock = new SteppedClock
    val (idle, full) = (polling(api, "shard-0", clock), polling(api, "shard-1", clock))
    val found = new ShardPoller(Seq(idle, full), clock, Some(clock.sleep)).pollUntil(1000L)
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
    val found = new ShardPoller(Seq(reader), clock, Some(clock.sleep)).pollUntil(clock.now + 1000L)
    assert(found.map(_._2.count).contains(2))
    assert(clock.sleeps.isEmpty && clock.now == 1764288000000L)
  }

  test("with nothing to read, waits until the deadline, keeping each shard's spacing, and returns nothing") {
    val api = new FakeKinesisApi(); empty(api, "shard-0"); empty(api, "shard-1")
    val clock = new SteppedClock
    val readers = Seq(polling(api, "shard-0", clock), polling(api, "shard-1", clock))
    assert(new ShardPoller(readers, clock, Some(clock.sleep)).pollUntil(1000L).isEmpty)
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
    val found = new ShardPoller(Seq(reader), clock, Some(sleep)).pollUntil(5000L)
    assert(found.map(_._2.count).contains(2))
    assert(clock.now == 600L) // the first call after the put, on the shard's 200 ms spacing
  }

  test("a shard's end is returned; once every shard has ended there is nothing to wait for") {
    val api = new FakeKinesisApi(); empty(api, "shard-0")
    api.closed += "shard-0"
    val clock = new SteppedClock
    val reader = polling(api, "shard-0", clock)
    val poller = new ShardPoller(Seq(reader), clock, Some(clock.sleep))
    val found = poller.pollUntil(1000L)
    assert(found.exists(_._2.ended) && reader.ended)
    assert(poller.pollUntil(5000L).isEmpty && clock.now < 1000L)
  }

  test("readers of both modes go in one poll: the polled shard has nothing, the fanned-out one's event is returned") {
    val api = new FakeKinesisApi(); empty(api, "polled"); api.add("fanned-out", 5)
    val clock = new SteppedClock
    val scheduler = new ManualScheduler(clock)
    val fanOutReader =
      fanOut(api, "fanned-out", new FakeShardSubscriber(api.shards("fanned-out"), 10, clock), scheduler, clock, 0L)
    scheduler.runNext() // the subscription starts
    val polled = polling(api, "polled", clock)
    val found = new ShardPoller(Seq(polled, fanOutReader), clock, Some(clock.sleep)).pollUntil(1000L)
    assert(found.map(_._1).contains(fanOutReader) && found.get._2.count == 5)
    assert(polled.calls <= 1 && fanOutReader.position == found.get._2.lastPosition.get)
  }

  test("an event on one fanned-out shard is taken as it comes while another shard has none: no wait on the idle one") {
    val api = new FakeKinesisApi(); empty(api, "idle"); empty(api, "busy")
    val endpointClock = new SteppedClock
    val scheduler = new ManualScheduler(endpointClock)
    val busySubscriber = new FakeShardSubscriber(api.shards("busy"), 10, endpointClock)
    // Each waits up to a minute inside a call when no poller signal is given: a poller that waited on the idle
    // shard's subscription would take that long to see the busy shard's event.
    val system = Clock.systemUTC()
    val idle = fanOut(api, "idle", new FakeShardSubscriber(api.shards("idle"), 10, endpointClock), scheduler, system,
      60000L)
    val busy = fanOut(api, "busy", busySubscriber, scheduler, system, 60000L)
    while (scheduler.runNext()) () // both subscriptions start
    val poller = new ShardPoller(Seq(idle, busy), system)
    val producer = new Thread(() => {
      Thread.sleep(100) // the poller has called both shards, found nothing and waits
      api.add("busy", 3)
      busySubscriber.pump()
    })
    producer.start()
    // Sooner than either idle shard is looked at again (IdleRecheckMs): only the event's signal can end the wait.
    val found = poller.pollUntil(system.millis() + FanOutShardReader.IdleRecheckMs - 100L)
    producer.join()
    assert(found.map(_._1).contains(busy) && found.get._2.count == 3, found)
    poller.close()
  }

  test("fanned-out shards with events queued are called in turn: one whose queue never empties starves no other") {
    val api = new FakeKinesisApi(); api.add("first", 6); api.add("second", 6)
    val clock = new SteppedClock
    val scheduler = new ManualScheduler(clock)
    // One record an event: each shard's queue refills as it is taken, until its six records are out.
    val readers = Seq("first", "second").map(shard =>
      fanOut(api, shard, new FakeShardSubscriber(api.shards(shard), 1, clock), scheduler, clock, 0L))
    while (scheduler.runNext()) ()
    val poller = new ShardPoller(readers, clock, Some(clock.sleep))
    val order = Iterator.continually(poller.pollUntil(1000L)).take(8).flatten.map(_._1.shardId).toSeq
    assert(order == Seq.fill(4)(Seq("first", "second")).flatten, order)
  }

  test("an idle fanned-out shard is called without waiting, then again only every IdleRecheckMs") {
    val api = new FakeKinesisApi(); empty(api, "idle")
    val clock = new SteppedClock
    val scheduler = new ManualScheduler(clock)
    val idle = fanOut(api, "idle", new FakeShardSubscriber(api.shards("idle"), 10, clock), scheduler, clock, 60000L)
    scheduler.runNext()
    val poller = new ShardPoller(Seq(idle), clock, Some(clock.sleep))
    val started = System.nanoTime()
    assert(poller.pollUntil(2500L).isEmpty)
    // Called at 0, 1,000 and 2,000 ms (the clock moves only by the poller's waits), each returning at once: three
    // calls that each waited for an event would take three minutes.
    assert(clock.sleeps == Seq(FanOutShardReader.IdleRecheckMs, FanOutShardReader.IdleRecheckMs, 500L))
    assert((System.nanoTime() - started) / 1000000L < 60000L)
    // Handed back (the task ended), it waits inside its calls again, and is ready whenever it last was.
    poller.close()
    assert(idle.readyAt == 2000L)
  }
}
