package io.kinesisspark.executor

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{ShardPosition, SteppedClock}
import io.kinesisspark.reader.{ShardCounters, ShardReadBatch, ShardReader}

class ShardReaderCacheSuite extends AnyFunSuite {

  /** A source that only stands somewhere and knows whether it was closed. */
  private final class Source(val shardId: String, val position: ShardPosition = ShardPosition.TrimHorizon)
      extends ShardReader {
    var closed = false
    override def stream: String = "s"
    override def ended: Boolean = false
    override def readyAt: Long = 0L
    override def next(): ShardReadBatch = ShardReadBatch.Throttled
    override def close(): Unit = closed = true
    override def counters: ShardCounters = ShardCounters.Zero
  }

  test("a source released where the next task starts is handed out again; elsewhere it is closed") {
    val cache = new ShardReaderCache(new SteppedClock, idleMillis = 1000L, maxSources = 10)
    val first = new Source("shard-0")
    cache.release(1, first)
    assert(cache.acquire(1, "s", "shard-0", ShardPosition.TrimHorizon)(new Source("shard-0")) eq first)
    cache.release(1, first)
    val fresh = cache.acquire(1, "s", "shard-0", ShardPosition.AfterRecord("5"))(new Source("shard-0"))
    assert((fresh ne first) && first.closed)
  }

  test("idle sources are dropped by a sweep, without a task arriving") {
    val clock = new SteppedClock
    val cache = new ShardReaderCache(clock, idleMillis = 1000L, maxSources = 10)
    val idle = new Source("shard-0")
    cache.release(1, idle)
    clock.sleep(600)
    val recent = new Source("shard-1")
    cache.release(1, recent)
    clock.sleep(500)
    cache.evictIdle()
    assert(idle.closed && !recent.closed && cache.size == 1)
  }

  test("a source released for a shorter wait goes after it, handed out or swept") {
    val clock = new SteppedClock
    val cache = new ShardReaderCache(clock, idleMillis = 1000L, maxSources = 10)
    val (short, long) = (new Source("shard-0"), new Source("shard-1"))
    cache.release(1, short, idleFor = 200L)
    cache.release(1, long, idleFor = 5000L) // no longer than the cache's own limit
    clock.sleep(300)
    assert(cache.acquire(1, "s", "shard-0", ShardPosition.TrimHorizon)(new Source("shard-0")) ne short)
    assert(short.closed)
    cache.release(1, short, idleFor = 200L)
    clock.sleep(300)
    cache.evictIdle()
    assert(cache.size == 1 && !long.closed)
    clock.sleep(800)
    cache.evictIdle()
    assert(cache.size == 0 && long.closed)
  }

  test("a source idle for longer than idleMillis is not handed out, even before a sweep") {
    val clock = new SteppedClock
    val cache = new ShardReaderCache(clock, idleMillis = 1000L, maxSources = 10)
    val idle = new Source("shard-0")
    val otherIdle = new Source("shard-1")
    cache.release(1, idle)
    cache.release(1, otherIdle)
    clock.sleep(1001)
    val fresh = cache.acquire(1, "s", "shard-0", ShardPosition.TrimHorizon)(new Source("shard-0"))
    assert((fresh ne idle) && idle.closed)
    assert(!otherIdle.closed && cache.size == 1, "another shard's source waits for the sweep, not for an acquire")
    cache.release(1, fresh)
    clock.sleep(1000)
    assert(cache.acquire(1, "s", "shard-0", ShardPosition.TrimHorizon)(new Source("shard-0")) eq fresh)
  }

  test("beyond its capacity the least recently released go first") {
    val clock = new SteppedClock
    val cache = new ShardReaderCache(clock, idleMillis = 60000L, maxSources = 3)
    val sources = (0 until 5).map { i => clock.sleep(10); val s = new Source(s"shard-$i"); cache.release(1, s); s }
    assert(cache.size == 3)
    assert(sources.map(_.closed) == Seq(true, true, false, false, false))
  }
}
