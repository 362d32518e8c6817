package io.kinesisspark.fetch

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.kinesisspark.ShardPosition

/**
 * Executor-side: each shard's [[ShardSource]] outlives the task that used it, so the next round on the same
 * executor continues with the same iterator, rate-limit state and throttling back-off (GetShardIterator is itself
 * limited to 5 calls/s per shard), or the same enhanced fan-out subscription. A source is handed out only when it
 * stands exactly where the new task starts and reads the same way (polling, or the same consumer); otherwise it is
 * closed and a fresh one is made. Sources are taken out while in use, so two task attempts never share one.
 * Sources idle for longer than an iterator lives (5 minutes) are closed and dropped.
 */
object ShardReaderCache {
  private final case class Key(streamId: Int, stream: String, shardId: String)
  private final case class Entry(reader: ShardSource, releasedAtMillis: Long)

  private val readers = new ConcurrentHashMap[Key, Entry]()
  // Stream instances that stopped: a task still running then releases its sources into nothing (a few ints per query).
  private val dropped = ConcurrentHashMap.newKeySet[Int]()
  private val IdleMillis = 5 * 60 * 1000L

  def acquire(streamId: Int, stream: String, shardId: String, from: ShardPosition, consumerArn: Option[String] = None)(
      create: => ShardSource): ShardSource = {
    evictIdle()
    val cached = Option(readers.remove(Key(streamId, stream, shardId))).map(_.reader)
    cached.filter(r => !r.ended && r.position == from && r.consumerArn == consumerArn).getOrElse {
      cached.foreach(_.close())
      create
    }
  }

  def release(streamId: Int, reader: ShardSource): Unit =
    if (!reader.ended && !dropped.contains(streamId)) {
      val key = Key(streamId, reader.stream, reader.shardId)
      val entry = Entry(reader, System.currentTimeMillis())
      Option(readers.put(key, entry)).map(_.reader).filter(_ ne reader).foreach(_.close())
      // The stream stopped while we put it back: dropStream may have looked before the put.
      if (dropped.contains(streamId) && readers.remove(key, entry)) reader.close()
    } else reader.close()

  /** Closes and drops every source of one stream instance (the query stopped), also those still in use. */
  def dropStream(streamId: Int): Unit = {
    dropped.add(streamId)
    readers.keySet().asScala.filter(_.streamId == streamId).foreach(k => Option(readers.remove(k)).foreach(_.reader.close()))
  }

  private def evictIdle(): Unit = {
    val now = System.currentTimeMillis()
    readers.entrySet().asScala.filter(e => now - e.getValue.releasedAtMillis > IdleMillis)
      .foreach(e => if (readers.remove(e.getKey, e.getValue)) e.getValue.reader.close())
  }
}
