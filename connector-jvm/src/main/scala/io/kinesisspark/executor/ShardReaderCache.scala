package io.kinesisspark.executor

import java.time.Clock
import java.util.concurrent.{ConcurrentHashMap, Executors, ThreadFactory, TimeUnit}

import scala.jdk.CollectionConverters._

import io.kinesisspark.ShardPosition
import io.kinesisspark.reader.ShardReader

/**
 * Executor-side: each shard's [[ShardReader]] outlives the task that used it, so the next round on the same
 * executor continues with the same iterator, rate-limit state and throttling back-off (GetShardIterator is itself
 * limited to 5 calls/s per shard), or the same enhanced fan-out subscription. A source is handed out only when it
 * stands exactly where the new task starts and reads the same way (polling, or the same consumer); otherwise it is
 * closed and a fresh one is made. Sources are taken out while in use, so two task attempts never share one.
 *
 * Bounded in time and in number: sources idle for longer than `idleMillis` (by default 5 minutes, as long as an
 * iterator lives), or than the shorter time a source's release asks for, are closed and dropped, whether or not
 * another task arrives (the executor's cache sweeps itself), and beyond `maxSources` the least recently released go
 * first (an executor may have stopped reading a stream's shards, or the query stopped without telling it).
 *
 * {{{
 *   val reader = ShardReaderCache.acquire(streamId, "clicks", "shardId-000000000000", from)(ShardReaders.open(...))
 *   try reader.next() finally ShardReaderCache.release(streamId, reader)
 * }}}
 *
 * @param clock the time sources are released and swept at; replaced in tests
 */
class ShardReaderCache(clock: Clock, idleMillis: Long, maxSources: Int) {
  private final case class Key(streamId: Int, stream: String, shardId: String)
  private final case class Entry(reader: ShardReader, releasedAtMillis: Long, idleMillis: Long)

  private val readers = new ConcurrentHashMap[Key, Entry]()
  // Stream instances that stopped: a task still running then releases its sources into nothing (a few ints per query).
  private val dropped = ConcurrentHashMap.newKeySet[Int]()

  /** Sources held, not in use. */
  def size: Int = readers.size

  def acquire(streamId: Int, stream: String, shardId: String, from: ShardPosition, consumerArn: Option[String] = None)(
      create: => ShardReader): ShardReader = {
    // Only this shard's entry is looked at: sweeping the whole cache on every acquire made a round over n shards
    // walk n entries n times (a third of all allocation at 1,000 shards in DriverScaleBenchmark, whose local-mode
    // executor shares the driver's JVM). An idle entry of another shard goes with the next sweep.
    val cached = Option(readers.remove(Key(streamId, stream, shardId)))
    val fresh = cached.filter(e => clock.millis() - e.releasedAtMillis <= e.idleMillis).map(_.reader)
      .filter(r => !r.ended && r.position == from && r.consumerArn == consumerArn)
    fresh.getOrElse {
      cached.foreach(_.reader.close())
      create
    }
  }

  /**
   * Keeps `reader` for the next task of its shard (closes it if it ended or its stream stopped).
   *
   * @param idleFor how long it may wait for that task, at most the cache's `idleMillis`
   */
  def release(streamId: Int, reader: ShardReader, idleFor: Long = Long.MaxValue): Unit = {
    if (!reader.ended && !dropped.contains(streamId)) {
      val key = Key(streamId, reader.stream, reader.shardId)
      val entry = Entry(reader, clock.millis(), math.min(idleFor, idleMillis))
      Option(readers.put(key, entry)).map(_.reader).filter(_ ne reader).foreach(_.close())
      // The stream stopped while we put it back: dropStream may have looked before the put.
      if (dropped.contains(streamId) && readers.remove(key, entry)) reader.close()
    } else reader.close()
    if (readers.size > maxSources) evictOldest()
  }

  /** Closes and drops every source of one stream instance (the query stopped), also those still in use. */
  def dropStream(streamId: Int): Unit = {
    dropped.add(streamId)
    readers.keySet().asScala.filter(_.streamId == streamId).foreach(k => Option(readers.remove(k)).foreach(_.reader.close()))
  }

  /** Whether [[dropStream]] was called for `streamId` (its query stopped): fetches for it end. */
  def isDropped(streamId: Int): Boolean = dropped.contains(streamId)

  /** Closes and drops the sources idle for longer than they may be. */
  def evictIdle(): Unit = {
    val now = clock.millis()
    readers.entrySet().asScala.filter(e => now - e.getValue.releasedAtMillis > e.getValue.idleMillis)
      .foreach(e => if (readers.remove(e.getKey, e.getValue)) e.getValue.reader.close())
  }

  private def evictOldest(): Unit = synchronized {
    val excess = readers.size - maxSources
    if (excess > 0) {
      readers.entrySet().asScala.toSeq.sortBy(_.getValue.releasedAtMillis).take(excess)
        .foreach(e => if (readers.remove(e.getKey, e.getValue)) e.getValue.reader.close())
    }
  }
}

/**
 * The executor's cache, one per JVM: sources idle for 5 minutes (an iterator's life: an idle polling source would
 * need a new one anyway) are dropped, swept every 30 seconds by a daemon thread; at most 20,000 are kept, more than
 * one executor reads in a round even for streams of thousands of shards (each is a few KB for a polling reader, or
 * a few events for an enhanced fan-out subscription).
 */
object ShardReaderCache extends ShardReaderCache(Clock.systemUTC(), idleMillis = 5 * 60 * 1000L, maxSources = 20000) {
  private val sweeper = Executors.newSingleThreadScheduledExecutor(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "kinesis-spark-shard-source-sweeper")
      t.setDaemon(true)
      t
    }
  })
  sweeper.scheduleWithFixedDelay(() => evictIdle(), 30L, 30L, TimeUnit.SECONDS)
}
