package io.kinesisspark.fetch

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.kinesisspark.ShardPosition

/**
 * Executor-side: each shard's [[ShardReader]] outlives the task that used it, so the next round on the same
 * executor continues with the same iterator, rate-limit state and throttling back-off (GetShardIterator is itself
 * limited to 5 calls/s per shard). A reader is handed out only when it stands exactly where the new task starts;
 * otherwise a fresh one is made. Readers are taken out while in use, so two task attempts never share one.
 * Readers idle for longer than an iterator lives (5 minutes) are dropped.
 */
object ShardReaderCache {
  private final case class Key(streamId: Int, stream: String, shardId: String)
  private final case class Entry(reader: ShardReader, releasedAtMillis: Long)

  private val readers = new ConcurrentHashMap[Key, Entry]()
  private val IdleMillis = 5 * 60 * 1000L

  def acquire(streamId: Int, stream: String, shardId: String, from: ShardPosition)(create: => ShardReader): ShardReader = {
    evictIdle()
    Option(readers.remove(Key(streamId, stream, shardId)))
      .map(_.reader)
      .filter(r => !r.ended && r.position == from)
      .getOrElse(create)
  }

  def release(streamId: Int, reader: ShardReader): Unit =
    if (!reader.ended) readers.put(Key(streamId, reader.stream, reader.shardId), Entry(reader, System.currentTimeMillis()))

  private def evictIdle(): Unit = {
    val now = System.currentTimeMillis()
    readers.entrySet().asScala.filter(e => now - e.getValue.releasedAtMillis > IdleMillis).foreach(e => readers.remove(e.getKey))
  }
}
