package io.kinesisspark.realtime

import java.time.Clock

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.kinesisspark.BlockStoreBridge
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.aws.KinesisClients
import io.kinesisspark.executor.{ShardReaderCache, ShardReaders}
import io.kinesisspark.reader.ShardReader

/**
 * Reads a real-time task's shards until Spark ends the task: each call waits for the next record of any of them, up
 * to Spark's deadline (the first "no record" ends the task, so it must not come early), and gives Spark the record's
 * Kinesis arrival time. The shards' readers come from, and go back to, this executor's [[ShardReaderCache]]: the next
 * batch's task for the same shards continues with the same iterators, rate limits and enhanced fan-out
 * subscriptions (Kinesis refuses a new subscription to a shard within 5 seconds of the last).
 *
 * Spark 4.1 calls `nextWithTimeout(timeout)`; 4.2 and later `nextWithTimeout(startTime, timeout)`: both are here
 * (on 4.2 the one-argument form overrides nothing, and on 4.1 the two-argument one is never called).
 */
final class RealTimePartitionReader(partition: RealTimeInputPartition, clock: Clock = Clock.systemUTC())
    extends SupportsRealTimeRead[InternalRow] {

  private val task = partition.task
  private val schema = partition.recordSchema
  private lazy val api = KinesisClients.api(task.connection)
  // Every shard the task reads, its children included: a child's order is made from its parent's.
  private val orders = scala.collection.mutable.HashMap(task.orders.map(o => (o.stream, o.shardId) -> o): _*)
  private val readers: Seq[ShardReader] = {
    val opened = Seq.newBuilder[ShardReader]
    val startedAt = clock.millis()
    try task.orders.foreach(order => opened += ShardReaders.acquire(task, order, api, clock, startedAt))
    catch {
      case NonFatal(e) => opened.result().foreach(release); throw e
    }
    opened.result()
  }
  private val children = new ChildShards(stream => api.listShards(stream, partition.listingPageSize))
  private val records = new RealTimeRecords(readers, clock, childReaders)
  private val names = scala.collection.mutable.HashMap.empty[ShardReader, (UTF8String, UTF8String)]

  /**
   * Readers of the children of `finished` that this task may read now ([[ChildShards]]). A listing that fails leaves
   * them to the next batch, which plans them from its own listing: later, never out of order.
   */
  private def childReaders(finished: ShardReader, positions: Map[String, io.kinesisspark.ShardPosition]) =
    try {
      val parent = orders((finished.stream, finished.shardId))
      children.startable(finished.stream, finished.shardId, positions).map { shard =>
        val order = parent.child(shard)
        orders((order.stream, order.shardId)) = order
        ShardReaders.acquire(task, order, api, clock, clock.millis())
      }
    } catch {
      case NonFatal(e) =>
        RealTimePartitionReader.log.warn(s"Could not list the children of ${finished.stream}/${finished.shardId}: " +
          s"they are read from the next batch on ($e)")
        Nil
    }
  private var current: InternalRow = _

  def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = nextBefore(clock.millis() + timeoutMs)

  def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus =
    nextBefore(startTimeMs + timeoutMs)

  private def nextBefore(deadlineMillis: Long): RecordStatus = records.next(deadlineMillis) match {
    case Some((reader, record)) =>
      val (stream, shardId) =
        names.getOrElseUpdate(reader, (UTF8String.fromString(reader.stream), UTF8String.fromString(reader.shardId)))
      current = schema.toRow(stream, shardId, record)
      RecordStatus.newStatusWithArrivalTimeMs(record.approximateArrivalMillis)
    case None =>
      // The deadline passed with nothing new, or every shard ended: wait out the batch (see the class's comment).
      val left = deadlineMillis - clock.millis()
      if (left > 0) Thread.sleep(left)
      RecordStatus.newStatusWithoutArrivalTime(false)
  }

  override def next(): Boolean =
    throw new UnsupportedOperationException("a real-time Kinesis partition is read with nextWithTimeout")

  override def get(): InternalRow = current

  override def getOffset: PartitionOffset =
    KinesisPartitionOffset(records.progress, Some(BlockStoreBridge.location))

  // What a task fetched and Spark did not take stays with its reader for the next task (see LeftoverShardReader).
  // Once, at the task's end, whether or not Spark's wrapper passes close() on (4.1.4's and 4.2.0's do; Spark's source
  // has had versions of it that did not).
  private val released = new java.util.concurrent.atomic.AtomicBoolean()
  Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit](_ => close()))

  override def close(): Unit = if (released.compareAndSet(false, true)) records.readersToKeep().foreach(release)

  // The next batch's task comes within seconds; if none does, the query stopped (on a cluster nothing tells this
  // executor), and an enhanced fan-out subscription kept for it would go on costing until the cache's sweep.
  private def release(reader: ShardReader): Unit =
    ShardReaderCache.release(task.streamId, reader, RealTimePartitionReader.ReaderIdleMillis)
}

object RealTimePartitionReader {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[RealTimePartitionReader])

  /** How long a shard's reader waits on its executor for the next batch's task (the cache sweeps every 30 s). */
  val ReaderIdleMillis = 60 * 1000L
}
