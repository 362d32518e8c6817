package io.kinesisspark.realtime

import scala.collection.mutable

import io.kinesisspark.QueryMetrics

/**
 * One batch of one run of a streaming query, as Spark names it in the local properties of the thread that plans it:
 * the query's id and the run's (Spark makes the run id the query thread's job group), and the batch's number. A
 * restart's run replays the last uncommitted batch under its number, so the run tells the two apart.
 */
final case class QueryBatch(run: String, batchId: Long)

object QueryBatch {
  val QueryIdProperty: String = QueryMetrics.QueryIdProperty
  val RunIdProperty = "spark.jobGroup.id"
  val BatchIdProperty = "streaming.sql.batchId"

  /** The batch the calling thread plans, from Spark's local properties; None outside a query's batch. */
  def current(property: String => Option[String]): Option[QueryBatch] =
    for {
      query <- property(QueryIdProperty)
      batch <- property(BatchIdProperty).flatMap(b => scala.util.Try(b.toLong).toOption)
    } yield QueryBatch(query + property(RunIdProperty).map("/" + _).getOrElse(""), batch)
}

/** The stage a real-time task runs in, as the task sees it: Spark's id of it and how many tasks it has. */
final case class TaskStage(id: Int, tasks: Int)

/**
 * Whether a real-time batch may end early, as one stream's book of the batch ([[BatchChildren]]) sees it: see
 * [[QueryBatchEnds]].
 */
trait EarlyEnd {
  /** Whether every task of the batch runs in `stage` and belongs to a Kinesis stream of this driver that ends when
   * asked. */
  def mayEnd(stage: TaskStage): Boolean
  def request(): Unit
  def requested: Boolean
}

/**
 * The driver's book of which real-time batches end early, shared by every Kinesis stream of a query (a union of
 * streams is one stage, one task set, whose batch ends only when all its tasks do).
 *
 * A batch may end early only when every task of its job is one of ours: each stream says how many tasks it planned
 * for the batch ([[planned]]), and a task says which stage it runs in and how many tasks that has (Spark's
 * `TaskContext`). When the counts agree and the stage is its job's only one, no other source's task (Kafka's, say,
 * which would read on until the batch's time is up while ours read nothing) shares the batch. A query with a shuffle
 * (a stateful one, from Spark 4.3) has stages that run side by side, whose sources cannot be told from here: its
 * batches do not end early. This needs no handle on Spark's query object, so it holds through Spark Connect too.
 *
 * Thread-safe: streams plan on their query's thread, and tasks' questions come on Spark's RPC threads.
 *
 * {{{
 *   val batch = QueryBatch("query-id/run-id", 12L)
 *   QueryBatchEnds.driver.planned(batch, streamId = 7, tasks = 2)
 *   val end = QueryBatchEnds.driver.of(batch, onlyStageOfItsJob = stageId => true)
 *   if (end.mayEnd(TaskStage(id = 31, tasks = 2))) end.request() // every stream of the batch sees `requested` now
 * }}}
 */
final class QueryBatchEnds {
  private final class Batch {
    val tasks = mutable.Map.empty[Int, Int] // per stream that planned the batch, its tasks
    var ending = false
  }
  private val batches = mutable.Map.empty[QueryBatch, Batch]

  /**
   * Stream `streamId` planned `tasks` tasks for `batch` (Spark may plan a batch twice: the last count holds). A
   * stream plans one batch at a time: it leaves any other it planned before (one that failed, and so never reached
   * [[done]]).
   */
  def planned(batch: QueryBatch, streamId: Int, tasks: Int): Unit = synchronized {
    leave(streamId, except = Some(batch))
    batches.getOrElseUpdate(batch, new Batch).tasks(streamId) = tasks
  }

  /** Stream `streamId` is done with its batch (its end is merged, or it stopped). */
  def done(streamId: Int): Unit = synchronized(leave(streamId, except = None))

  private def leave(streamId: Int, except: Option[QueryBatch]): Unit =
    batches.toList.foreach { case (key, b) =>
      if (!except.contains(key)) {
        b.tasks.remove(streamId)
        if (b.tasks.isEmpty) batches.remove(key)
      }
    }

  /**
   * `batch`'s early end, as its streams see it.
   *
   * @param onlyStageOfItsJob whether the stage of this id is the only one of the Spark job it runs in
   */
  def of(batch: QueryBatch, onlyStageOfItsJob: Int => Boolean): EarlyEnd = new EarlyEnd {
    def mayEnd(stage: TaskStage): Boolean =
      QueryBatchEnds.this.synchronized(batches.get(batch).exists(_.tasks.values.sum == stage.tasks)) &&
        onlyStageOfItsJob(stage.id)
    def request(): Unit = QueryBatchEnds.this.synchronized(batches.get(batch).foreach(_.ending = true))
    def requested: Boolean = QueryBatchEnds.this.synchronized(batches.get(batch).exists(_.ending))
  }
}

object QueryBatchEnds {
  /** This driver's book: streams of one query share it. */
  val driver = new QueryBatchEnds
}
