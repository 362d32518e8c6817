package io.kinesisspark.realtime

import io.kinesisspark.KinesisSourceOffset
import io.kinesisspark.ShardPosition.reaches
import io.kinesisspark.executor.ShardFetchOrder

/**
 * The driver's arithmetic of real-time batches, apart from Spark: which task reads which shard, and the batch's end
 * offset from what the tasks reported.
 *
 * {{{
 *   val groups = RealTimePlanner.group(orders, tasks = 4, lastLocation)   // at most 4 groups, in a stable order
 *   val end = RealTimePlanner.merge(base, offsets.flatMap(_.shards))       // base, moved by every task's progress
 * }}}
 */
object RealTimePlanner {

  /** One task's shards, and the executor it should run on (where most of them were read last). */
  final case class Group(orders: Seq[ShardFetchOrder], location: Option[String])

  /**
   * Deals the orders, sorted by stream and shard id, to `tasks` groups in turn (fewer when there are fewer orders, and
   * one empty group when there are none: see [[RealTimeInputPartition]]). The same shards are dealt the same way every
   * batch, so each group's shards, and the executor that holds their readers, stay together.
   */
  def group(orders: Seq[ShardFetchOrder], tasks: Int,
      lastLocation: ((String, String)) => Option[String]): Seq[Group] = {
    require(tasks >= 1, s"tasks must be at least 1, not $tasks")
    if (orders.isEmpty) return Seq(Group(Nil, None))
    val sorted = orders.sortBy(o => (o.stream, o.shardId))
    val count = math.min(tasks, sorted.size)
    (0 until count).map { i =>
      val mine = sorted.indices.filter(_ % count == i).map(sorted)
      val places = mine.flatMap(o => lastLocation((o.stream, o.shardId)))
      Group(mine, if (places.isEmpty) None else Some(places.groupBy(identity).maxBy(_._2.size)._1))
    }
  }

  /**
   * The batch's end: `base` (the batch's start, reconciled with the listing it was planned from) with each reported
   * shard moved to its position. Positions only move forward: a shard reported twice (a speculative or retried task)
   * keeps the furthest position.
   */
  def merge(base: KinesisSourceOffset, progress: Iterable[ShardProgress]): KinesisSourceOffset = {
    val moved = progress.foldLeft(base.streams) { (streams, p) =>
      val shards = streams.getOrElse(p.stream, Map.empty)
      shards.get(p.shardId) match {
        case Some(known) if reaches(known, p.position) => streams
        case _ => streams.updated(p.stream, shards.updated(p.shardId, p.position))
      }
    }
    if (moved eq base.streams) base else base.copy(streams = moved)
  }
}
