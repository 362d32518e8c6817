package io.kinesisspark.sink

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.SteppedClock
import io.kinesisspark.sink.AggregateFill.fillingEntryBytes

class ShardWritePacerSuite extends AnyFunSuite {

  /** Entries of `bytes` taken over `seconds` of stepped time, trying every `stepMs`. */
  private def takenOver(pacer: ShardWritePacer, clock: SteppedClock, seconds: Double, bytes: Long,
      stepMs: Long = 5): Seq[Long] = {
    val times = Seq.newBuilder[Long]
    val end = clock.now + (seconds * 1000).toLong
    while (clock.now < end) {
      while (pacer.tryTake(bytes)) times += clock.now
      clock.sleep(stepMs)
    }
    times.result()
  }

  /** The most entries (or bytes, each entry weighing `weight`) in any window of 1 s. */
  private def busiestSecond(times: Seq[Long], weight: Long = 1): Long = {
    var start = 0
    var best = 0L
    times.indices.foreach { end =>
      while (times(end) - times(start) >= 1000) start += 1
      best = math.max(best, (end - start + 1) * weight)
    }
    best
  }

  test("a backlogged writer is let through at the records limit, and no second holds more than the window's share") {
    import ShardWritePacer._
    val clock = new SteppedClock
    val pacer = new ShardWritePacer(ShardWriteLimits(recordsPerSecond = 1000), () => clock.now)
    val times = takenOver(pacer, clock, seconds = 20, bytes = 10)
    assert(times.size >= 20 * 1000 * MaxShare - 50 && times.size <= 20 * 1000 * WindowShare, times.size)
    assert(busiestSecond(times) <= 1000 * WindowShare, busiestSecond(times))
  }

  test("a writer that stalls now and then makes up for it, without putting more than the window's share in a second") {
    import ShardWritePacer._
    // It looks every 5 ms, but every 500 ms it stalls for 150 ms (a GC pause, a busy core): the buckets keep what
    // the stall would lose, and the pacer's count of its last second keeps the catching up within the limit.
    val clock = new SteppedClock
    val pacer = new ShardWritePacer(ShardWriteLimits(recordsPerSecond = 1000), () => clock.now)
    val times = Seq.newBuilder[Long]
    while (clock.now < 30000) {
      while (pacer.tryTake(10)) times += clock.now
      clock.sleep(if (clock.now % 500 < 5) 150 else 5)
    }
    val taken = times.result()
    assert(taken.size >= 30 * 1000 * (MaxShare - 0.01), taken.size)
    assert(busiestSecond(taken) <= 1000 * WindowShare, busiestSecond(taken))
  }

  test("bytes are paced too; large entries as many as a second holds whole, and no tokens lost while they wait") {
    // (entry bytes, how often the writer looks, the least share of the byte limit it must reach)
    for ((big, stepMs, least) <- Seq((307200L, 5L, 0.85), (51200L, 20L, 0.94), (1024L, 20L, 0.96))) {
      val clock = new SteppedClock
      val limits = ShardWriteLimits(recordsPerSecond = 100000, bytesPerSecond = 1024L * 1024)
      val pacer = new ShardWritePacer(limits, () => clock.now)
      val times = takenOver(pacer, clock, seconds = 30, bytes = big, stepMs = stepMs)
      val perSecond = times.size * big / 30.0
      assert(perSecond >= least * limits.bytesPerSecond, s"$big bytes every $stepMs ms: $perSecond")
      assert(busiestSecond(times, big) <= limits.bytesPerSecond, s"$big bytes every $stepMs ms")
    }
  }

  test("entries of fillingEntryBytes (AggregateFillSuite) tile a second: more of the byte limit than the largest") {
    import ShardWritePacer._
    val limits = ShardWriteLimits()
    def share(bytes: Long): Double = {
      val clock = new SteppedClock
      val times = takenOver(new ShardWritePacer(limits, () => clock.now), clock, seconds = 30, bytes = bytes)
      assert(busiestSecond(times, bytes) <= limits.bytesPerSecond * WindowShare)
      times.size * bytes / 30.0 / limits.bytesPerSecond
    }
    val largest = share(51200)
    val filling = share(fillingEntryBytes(limits, 51200))
    assert(largest < 0.977, largest) // 20 a second at most
    assert(filling >= 0.98 && filling > largest + 0.005, s"$filling against $largest")
  }

  test("a throttle cuts the share a little and stops taking; a window of heavy loss cuts by the loss; it grows back") {
    import ShardWritePacer._
    for (throttledInWindow <- Seq(5, 450)) {
      val clock = new SteppedClock
      val pacer = new ShardWritePacer(ShardWriteLimits(), () => clock.now)
      assert(pacer.currentShare == MaxShare)
      pacer.throttled(clock.now, 10)
      assert(math.abs(pacer.currentShare - MaxShare * FirstCut) < 1e-9)
      assert(!pacer.tryTake(10) && pacer.readyInMs(10) >= 1)
      // The rest of the window: entries taken as the pacer allows, some of them throttled too.
      val taken = takenOver(pacer, clock, seconds = 0.9, bytes = 10).size
      assert(taken > 700 && taken < 900, taken)
      (1 to throttledInWindow).foreach(_ => pacer.throttled(clock.now, 10))
      assert(math.abs(pacer.currentShare - MaxShare * FirstCut) < 1e-9) // one cut per window, until it ends
      clock.sleep(110)
      val loss = throttledInWindow.toDouble / (taken + throttledInWindow + 1) // the first is FirstCut's
      val expected = MaxShare * FirstCut * (if (loss > 1 - FirstCut) 1 - loss else 1.0)
      assert(math.abs(pacer.currentShare - expected) < 1e-3, s"loss $loss")
      clock.sleep(500)
      assert(math.abs(pacer.currentShare - math.min(MaxShare, expected + IncreasePerSecond / 2)) < 1e-3)
      clock.sleep(60000)
      assert(pacer.currentShare == MaxShare)
    }
  }

  test("a lone throttle of a writer of aggregates (21 entries a second) is a trim: cut by FirstCut only") {
    import ShardWritePacer._
    val clock = new SteppedClock
    val limits = ShardWriteLimits()
    val bytes = fillingEntryBytes(limits, 51200).toLong
    val pacer = new ShardWritePacer(limits, () => clock.now)
    takenOver(pacer, clock, seconds = 2, bytes = bytes)
    pacer.throttled(clock.now, bytes)
    assert(takenOver(pacer, clock, seconds = 1.1, bytes = bytes).size >= 15)
    assert(math.abs(pacer.currentShare - (MaxShare * FirstCut + IncreasePerSecond * 0.1)) < 0.01, pacer.currentShare)
    pacer.throttled(clock.now, bytes)
    pacer.throttled(clock.now, bytes) // two more in the next window: the shard is shared, cut by the loss
    takenOver(pacer, clock, seconds = 1.01, bytes = bytes)
    assert(pacer.currentShare < MaxShare * FirstCut * 0.97, pacer.currentShare)
  }

  test("a refused entry leaves the pacer's count of its last second: Kinesis did not count it") {
    val clock = new SteppedClock
    val pacer = new ShardWritePacer(ShardWriteLimits(), () => clock.now)
    val takenAt = clock.now
    (1 to 5).foreach(_ => assert(pacer.tryTake(100)))
    clock.sleep(300)
    assert(pacer.tryTake(100))
    pacer.throttled(takenAt, 100)
    assert(pacer.lastSecond == ((5L, 500L)))
    clock.sleep(800) // the entries taken first have left the second; the one taken later has not
    assert(pacer.lastSecond == ((1L, 100L)))
  }

  test("writers sharing a shard over its limit converge below it: throttled in proportion, not in storms") {
    // Two pacers (two executors) write to one shard that takes 1,000 records/s over 1 s windows, as Kinesis does.
    val clock = new SteppedClock
    val pacers = Seq.fill(2)(new ShardWritePacer(ShardWriteLimits(), () => clock.now))
    val stored = scala.collection.mutable.Queue.empty[Long]
    var throttled = 0L
    var written = 0L
    while (clock.now < 120000) {
      pacers.foreach { p =>
        while (p.tryTake(10)) {
          while (stored.nonEmpty && stored.head <= clock.now - 1000) stored.dequeue()
          if (stored.size < 1000) { stored.enqueue(clock.now); written += 1 }
          else { throttled += 1; p.throttled(clock.now, 10) }
        }
      }
      clock.sleep(5)
    }
    assert(written >= 0.9 * 120 * 1000, written) // the shard kept above 90 % busy
    assert(throttled <= 0.02 * written, s"$throttled throttled of $written")
    // Their shares add up to about what the shard takes (AIMD converges on the sum, not on equal halves).
    assert(pacers.map(_.currentShare).sum <= 1.1, pacers.map(_.currentShare))
  }

  test("pacers are shared per stream and shard, and dropped once idle") {
    val clock = new SteppedClock
    clock.now = 1000L * 1000 * 1000
    val connection = KinesisSinkOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1")).connection
    val a = ShardWritePacers.get(connection, "s", "shard-1", ShardWriteLimits(), () => clock.now)
    assert(ShardWritePacers.get(connection, "s", "shard-1", ShardWriteLimits(), () => clock.now) eq a)
    assert(ShardWritePacers.get(connection, "s", "shard-2", ShardWriteLimits(), () => clock.now) ne a)
    clock.now += ShardWritePacers.IdleMs + ShardWritePacers.SweepIntervalMs
    assert(ShardWritePacers.get(connection, "s", "shard-1", ShardWriteLimits(), () => clock.now) ne a)
  }
}
