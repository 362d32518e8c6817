package io.kinesisspark.realtime

import scala.collection.mutable

import io.kinesisspark.{KinesisSourceOffset, ShardGraph, ShardPosition}
import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.ShardInfo
import io.kinesisspark.executor.ShardFetchOrder

/**
 * The driver's book of one real-time batch's resharding: as tasks report shards finished, which children may be read
 * within the batch, and by whom. A task reports a shard finished once Spark asked it for the record after the shard's
 * last, so its records are in the task's sink, before any of a child's: a split's children, and a merge's child whose
 * parents this task read, go to that task, once.
 *
 * Tasks are told apart by attempt: a retried task reads its shards again from the batch's start, so a parent finished
 * by an earlier attempt counts as another task's.
 *
 * A merge whose parents ended in different tasks cannot be ordered so: a sink may still hold the other task's records
 * (PySpark's `foreach` hands rows to its Python worker through a buffer; Kafka's producer sends asynchronously). Only a
 * batch's end orders sinks across tasks (Spark commits a batch once every task is done), so the batch is asked to end
 * now ([[endRequested]]: tasks ask every second) and the next batch, planned at once, reads the child. Only when every
 * task of the batch is a Kinesis stream's that ends when asked ([[QueryBatchEnds]]): another source's tasks would not
 * end, and this stream's would read nothing until the batch's time is up; the child then waits for the next batch.
 *
 * The graph comes from the listing the batch was planned from; a finished shard with no listed child makes the stream
 * listed again (`relist`): its reshard may be newer than that listing.
 *
 * {{{
 *   val children = new BatchChildren(base, planned = orders.map(o => (o.stream, o.shardId)).toSet,
 *     () => discovery.listed.graphs, () => discovery.starts, () => discovery.refreshShards(force = true),
 *     (stream, shard, from) => discovery.listed.order(stream, shard, from, 0L, None),
 *     QueryBatchEnds.driver.of(batch, onlyStageOfItsJob = _ => true))
 *   children.finished("clicks", "shardId-000000000000", task = 7L, TaskStage(31, 2)) // what attempt 7 may read
 *   children.endRequested                                  // a merge across tasks waits for the batch's end
 * }}}
 *
 * @param base        the batch's start, reconciled with its listing
 * @param planned     the shards the batch's tasks were given at its start
 * @param starts      where reading of each known shard begins when the offset does not hold it (new shards of a
 *                    listing)
 * @param earlyEnd    the batch's early end, shared with the query's other Kinesis streams
 */
final class BatchChildren(
    base: KinesisSourceOffset,
    planned: Set[(String, String)],
    graphs: () => Map[String, ShardGraph],
    starts: () => Map[(String, String), ShardPosition],
    relist: () => Unit,
    order: (String, ShardInfo, ShardPosition) => ShardFetchOrder,
    earlyEnd: EarlyEnd) {

  // Per shard finished in this batch, the task that finished it.
  private val finishedInBatch = mutable.Map.empty[(String, String), Long]
  private val handedOut = mutable.Set.empty[(String, String)]

  /** Whether a merge across tasks, of this stream or another of the query, waits for this batch's end. */
  def endRequested: Boolean = earlyEnd.requested

  /**
   * Records `shardId` of `stream` as finished by task attempt `task` in this batch: orders for the children that task
   * may read now. `stage`: the task's stage (see [[QueryBatchEnds]]).
   */
  def finished(stream: String, shardId: String, task: Long, stage: TaskStage): Seq[ShardFetchOrder] = synchronized {
    finishedInBatch((stream, shardId)) = task
    if (graphs().get(stream).forall(_.childrenOf(shardId).isEmpty)) relist()
    graphs().get(stream).toSeq.flatMap { graph =>
      // Where a shard stands: finished in this batch, else as the batch's start or a new listing has it. Asked only
      // about the shard's children and their parents, not every shard (a reshard of thousands finishes thousands).
      val startsNow = starts()
      val inBase = base.streams.getOrElse(stream, Map.empty)
      val known: String => Option[ShardPosition] = id =>
        if (finishedInBatch.contains((stream, id))) Some(Finished)
        else inBase.get(id).orElse(startsNow.get((stream, id)))
      val ready = graph.readableChildren(shardId, known)
        .filter(c => !planned((stream, c.shardId)) && !handedOut((stream, c.shardId)))
      val (mine, acrossTasks) = ready.partition(child =>
        graph.parentsOf(child.shardId).forall(p => finishedInBatch.get((stream, p)).forall(_ == task)))
      if (acrossTasks.nonEmpty && earlyEnd.mayEnd(stage)) earlyEnd.request()
      mine.map { child =>
        handedOut += ((stream, child.shardId))
        order(stream, child, known(child.shardId).get)
      }
    }
  }
}
