package io.kinesisspark

import scala.collection.compat._
import scala.collection.mutable

import org.apache.spark.sql.connector.read.streaming.{CompositeReadLimit, ReadAllAvailable, ReadLimit, ReadMaxRows}

import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.blocks.FetchedRange

/**
 * Decides where the next batch ends: per shard, after some of the buffered ranges that follow the batch start.
 *
 *  - A shard contributes only if every parent it has in the listing is `Finished` at the batch start, so a
 *    parent's last records and its children's first never share a batch (per-key order across resharding).
 *  - A shard entering the offset with this batch (see [[StartReconciler]]) contributes nothing yet.
 *  - Ranges are taken whole and in order, shard by shard in turns, while the batch stays within the read limit
 *    (`maxRecordsPerTrigger`, `maxBytesPerTrigger`): taking turns keeps a busy shard from starving the others.
 *    One range is always taken when any is available, so a range larger than the limit cannot stall the query.
 */
object BatchEndPlanner {

  /** A read limit as record and byte budgets (`None` = unbounded). */
  final case class Budget(maxRecords: Option[Long], maxBytes: Option[Long])

  object Budget {
    val Unbounded: Budget = Budget(None, None)

    def of(limit: ReadLimit): Budget = limit match {
      case _: ReadAllAvailable    => Unbounded
      case r: ReadMaxRows         => Budget(Some(r.maxRows()), None)
      case ByteReadLimit(bytes)   => Budget(None, Some(bytes))
      case c: CompositeReadLimit  =>
        c.getReadLimits.map(of).foldLeft(Unbounded) { (a, b) =>
          Budget(min(a.maxRecords, b.maxRecords), min(a.maxBytes, b.maxBytes))
        }
      case _ => Unbounded
    }

    private def min(a: Option[Long], b: Option[Long]): Option[Long] = (a ++ b).minOption
  }

  /**
   * @param base     the batch start as reconciled with the current listing ([[StartReconciler]]): every shard
   *                 to include in the end offset, at its start position
   * @param fresh    shards of `base` that enter the offset with this batch; they keep their start position
   * @param parents  a shard's listed parents
   * @param buffered a shard's buffered ranges from a position on (see [[BufferIndex.rangesAfter]])
   */
  def plan(
      base: KinesisSourceOffset,
      fresh: Set[(String, String)],
      parents: (String, String) => Seq[String],
      buffered: (String, String, ShardPosition) => Seq[FetchedRange],
      budget: Budget): KinesisSourceOffset = {

    def parentsDone(stream: String, shard: String): Boolean =
      parents(stream, shard).forall(p => base.position(stream, p).forall(_ == Finished))
    def contributes(stream: String, shard: String, pos: ShardPosition): Boolean =
      pos != Finished && !fresh.contains((stream, shard)) && parentsDone(stream, shard)

    if (budget == Budget.Unbounded) {
      // Without a limit every buffered range is taken: no turns to take, so no order to put the shards in (sorting
      // 10,000 shard ids on every plan showed in a JFR of DriverScaleBenchmark). A stream nothing moved in keeps
      // its map: no copy, and an end with nothing new compares equal to its start at once (`samePositions`).
      return KinesisSourceOffset(base.streams.map { case (stream, shards) =>
        val moved = mutable.ArrayBuffer.empty[(String, ShardPosition)]
        shards.foreach { case (shard, pos) =>
          if (contributes(stream, shard, pos)) {
            val ranges = buffered(stream, shard, pos)
            if (ranges.nonEmpty) moved += shard -> ranges.last.to
          }
        }
        stream -> (if (moved.isEmpty) shards else shards ++ moved)
      }, base.created)
    }

    // Shards in order of stream and shard id, each with the ranges it may contribute. Plain loops: this runs on
    // every batch over every shard (10,000 in the driver benchmark), where intermediate collections showed.
    val queues = mutable.ArrayBuffer.empty[(String, String, mutable.Queue[FetchedRange])]
    base.streams.keys.toArray.sorted.foreach { stream =>
      val shards = base.streams(stream)
      shards.keys.toArray.sorted.foreach { shard =>
        val pos = shards(shard)
        if (contributes(stream, shard, pos)) {
          val ranges = buffered(stream, shard, pos)
          if (ranges.nonEmpty) queues += ((stream, shard, mutable.Queue(ranges: _*)))
        }
      }
    }

    val moved = mutable.HashMap.empty[String, mutable.HashMap[String, ShardPosition]]
    var records = 0L
    var bytes = 0L
    var taken = false
    var active = queues.toIndexedSeq
    while (active.nonEmpty) {
      active = active.filter { case (stream, shard, queue) =>
        val r = queue.head
        val fits = budget.maxRecords.forall(records + r.records <= _) && budget.maxBytes.forall(bytes + r.bytes <= _)
        if (fits || !taken || r.records == 0) {
          queue.dequeue()
          taken = true
          moved.getOrElseUpdate(stream, mutable.HashMap.empty)(shard) = r.to
          records += r.records
          bytes += r.bytes
          queue.nonEmpty
        } else false
      }
    }
    KinesisSourceOffset(base.streams.map { case (stream, shards) =>
      stream -> moved.get(stream).fold(shards)(shards ++ _)
    }, base.created)
  }
}
