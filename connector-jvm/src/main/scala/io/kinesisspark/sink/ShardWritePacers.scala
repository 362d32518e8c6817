package io.kinesisspark.sink

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.kinesisspark.aws.AwsConnection

/**
 * The [[ShardWritePacer]]s of a JVM, one per stream, shard and limits, shared by every writer task the executor
 * runs: tasks of one executor that write to the same shard take from the same buckets, so they share the shard
 * without being throttled; tasks on other executors (and other producers) are found by the throttling they cause.
 *
 * Bounded: a pacer no task asked for in [[IdleMs]] is dropped (its shard may be gone after a reshard), at most
 * once per [[SweepIntervalMs]], and beyond [[MaxPacers]] the least recently used go first.
 *
 * {{{
 *   val pacer = ShardWritePacers.get(connection, "clicks", "shardId-000000000001", ShardWriteLimits())
 * }}}
 */
object ShardWritePacers {
  val IdleMs = 10 * 60 * 1000L
  val SweepIntervalMs = 60 * 1000L
  val MaxPacers = 100000

  private final case class Key(connection: AwsConnection, stream: String, shard: String, limits: ShardWriteLimits)

  private val pacers = new ConcurrentHashMap[Key, ShardWritePacer]()
  @volatile private var lastSweep = 0L

  def get(connection: AwsConnection, stream: String, shard: String, limits: ShardWriteLimits,
      clock: () => Long = () => System.currentTimeMillis()): ShardWritePacer = {
    val now = clock()
    if (now - lastSweep >= SweepIntervalMs || pacers.size > MaxPacers) sweep(now)
    pacers.computeIfAbsent(Key(connection, stream, shard, limits), _ => new ShardWritePacer(limits, clock))
  }

  private def sweep(now: Long): Unit = synchronized {
    lastSweep = now
    pacers.entrySet().removeIf(e => now - e.getValue.lastUsed >= IdleMs)
    val excess = pacers.size - MaxPacers
    if (excess > 0) {
      pacers.entrySet().asScala.toSeq.sortBy(_.getValue.lastUsed).take(excess).foreach(e => pacers.remove(e.getKey))
    }
  }
}
