package io.kinesisspark.realtime

import scala.collection.mutable

import io.kinesisspark.QueryMetrics

/**
 * One batch of a streaming query, as Spark names it in the local properties of the thread that plans it (the query's
 * id and the batch's number; a query runs once at a time, and a restart's batches take numbers after the last).
 */
final case class QueryBatch(queryId: String, batchId: Long)

object QueryBatch {
  val QueryIdProperty: String = QueryMetrics.QueryIdProperty
  val BatchIdProperty = "streaming.sql.batchId"

  /** The batch the calling thread plans, from Spark's local properties; None outside a query's batch. */
  def current(property: String => Option[String]): Option[QueryBatch] =
    for {
      query <- property(QueryIdProperty)
      batch <- property(BatchIdProperty).flatMap(b => scala.util.Try(b.toLong).toOption)
    } yield QueryBatch(query, batch)
}

/**
 * Whether a real-time batch may end early, as one stream's book of the batch ([[BatchChildren]]) sees it: see
 * [[QueryBatchEnds]].
 */
trait EarlyEnd {
  /** Whether every task of the stage (`stageTasks` of them, as a task of this stream counts them) belongs to a
   * Kinesis stream of this driver that ends when asked. */
  def mayEnd(stageTasks: Int): Boolean
  def request(): Unit
  def requested: Boolean
}

/**
 * The driver's book of which real-time batches end early, shared by every Kinesis stream of a query (a union of
 * streams is one stage, one task set, whose batch ends only when all its tasks do).
 *
 * A batch may end early only when every task of its stage is one of ours: each stream says how many tasks it planned
 * for the batch ([[planned]]), and a task says how many its stage has (Spark's `TaskContext.numPartitions`). When the
 * two agree, no other source's task (Kafka's, say, which would read on until the batch's time is up while ours read
 * nothing) shares the batch. This needs no handle on Spark's query object, so it holds through Spark Connect too.
 *
 * Thread-safe: streams plan on their query's thread, and tasks' questions come on Spark's RPC threads.
 *
 * {{{
 *   val batch = QueryBatch("3f9c0d1e-query-id", 12L)
 *   QueryBatchEnds.driver.planned(batch, streamId = 7, tasks = 2)
 *   val end = QueryBatchEnds.driver.of(batch)
 *   if (end.mayEnd(stageTasks = 2)) end.request()   // every stream of the batch's query sees `requested` now
 * }}}
 */
final class QueryBatchEnds {
  private final class Batch {
    val tasks = mutable.Map.empty[Int, Int] // per stream that planned the batch, its tasks
    var ending = false
  }
  private val batches = mutable.Map.empty[QueryBatch, Batch]

  /**
   * Stream `streamId` planned `tasks` tasks for `batch`. A stream plans one batch at a time: it leaves any batch it
   * planned before (one that failed, and so never reached [[done]]).
   */
  def planned(batch: QueryBatch, streamId: Int, tasks: Int): Unit = synchronized {
    done(streamId)
    batches.getOrElseUpdate(batch, new Batch).tasks(streamId) = tasks
  }

  /** Stream `streamId` is done with its batch (its end is merged, or it stopped). */
  def done(streamId: Int): Unit = synchronized {
    batches.toList.foreach { case (key, b) =>
      b.tasks.remove(streamId)
      if (b.tasks.isEmpty) batches.remove(key)
    }
  }

  /** `batch`'s early end, as its streams see it. */
  def of(batch: QueryBatch): EarlyEnd = new EarlyEnd {
    def mayEnd(stageTasks: Int): Boolean = QueryBatchEnds.this.synchronized {
      batches.get(batch).exists(_.tasks.values.sum == stageTasks)
    }
    def request(): Unit = QueryBatchEnds.this.synchronized(batches.get(batch).foreach(_.ending = true))
    def requested: Boolean = QueryBatchEnds.this.synchronized(batches.get(batch).exists(_.ending))
  }
}

object QueryBatchEnds {
  /** This driver's book: streams of one query share it. */
  val driver = new QueryBatchEnds
}
