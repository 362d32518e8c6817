package io.kinesisspark.realtime

import java.time.Clock

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.kinesisspark.{BlockStoreBridge, ChildShardChannel}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.aws.KinesisClients
import io.kinesisspark.executor.{ShardFetchTask, ShardReaderCache, ShardReaders}
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
  private val readers: Seq[ShardReader] = {
    val opened = Seq.newBuilder[ShardReader]
    val startedAt = clock.millis()
    try task.orders.foreach(order => opened += ShardReaders.acquire(task, order, api, clock, startedAt))
    catch {
      case NonFatal(e) => opened.result().foreach(release); throw e
    }
    opened.result()
  }
  private val records = new RealTimeRecords(readers, clock, childrenOf = childrenOf)
  private val names = scala.collection.mutable.HashMap.empty[ShardReader, (UTF8String, UTF8String)]

  // Readers of the children the driver says this task may read now that `parent`'s shard is finished. Without an
  // answer (the driver unreachable, the query stopping) none: they are read from the next batch, as planned then.
  private def childrenOf(parent: ShardReader): Seq[ShardReader] = partition.link.toSeq.flatMap { link =>
    // The driver tells tasks apart by attempt: a retried task reads its shards again from the batch's start. (Outside
    // a Spark task, this reader's own identity, negative.)
    val attempt = Option(TaskContext.get()).map(_.taskAttemptId()).getOrElse(-1L - System.identityHashCode(this))
    // The task's stage and how many tasks share it: the driver ends a batch early only if all of the batch's tasks
    // are Kinesis streams' (see QueryBatchEnds).
    val (stage, stageTasks) = Option(TaskContext.get()).map(c => (c.stageId(), c.numPartitions())).getOrElse((-1, -1))
    ChildShardChannel.finished(link.endpoint, link.batch, attempt, stage, stageTasks, parent.stream,
        parent.shardId) match {
      case Right(bytes) =>
        val startedAt = clock.millis()
        val opened = Seq.newBuilder[ShardReader]
        try ShardFetchTask.decode(bytes).foreach(o => opened += ShardReaders.acquire(task, o, api, clock, startedAt))
        catch {
          case NonFatal(e) => opened.result().foreach(release); throw e
        }
        opened.result()
      case Left(e) =>
        RealTimePartitionReader.log.warn(s"Kinesis stream '${parent.stream}': the driver did not say which children " +
          s"of ${parent.shardId} to read now (${e.getClass.getSimpleName}: ${e.getMessage}); they are read from the " +
          "next batch")
        Nil
    }
  }

  // Whether the driver wants the batch to end now (see BatchChildren): asked at most once a second.
  private var nextEndCheck = clock.millis() + RealTimePartitionReader.EndCheckMillis
  private var ending = false
  private def batchEnding(): Boolean = {
    if (!ending && partition.link.isDefined && clock.millis() >= nextEndCheck) {
      val link = partition.link.get
      ending = ChildShardChannel.endRequested(link.endpoint, link.batch).getOrElse(false)
      nextEndCheck = clock.millis() + RealTimePartitionReader.EndCheckMillis
    }
    ending
  }
  private var current: InternalRow = _

  def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = nextBefore(clock.millis() + timeoutMs)

  def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus =
    nextBefore(startTimeMs + timeoutMs)

  private def nextBefore(deadlineMillis: Long): RecordStatus = {
    var status: RecordStatus = null
    while (status == null) {
      if (batchEnding()) status = RecordStatus.newStatusWithoutArrivalTime(false)
      else {
        val until = if (partition.link.isDefined) math.min(deadlineMillis, nextEndCheck) else deadlineMillis
        records.next(until) match {
          case Some((reader, record)) =>
            val (stream, shardId) = names.getOrElseUpdate(reader,
              (UTF8String.fromString(reader.stream), UTF8String.fromString(reader.shardId)))
            current = schema.toRow(stream, shardId, record)
            status = RecordStatus.newStatusWithArrivalTimeMs(record.approximateArrivalMillis)
          case None =>
            // Nothing new by `until`, or every shard ended: wait out the batch, asking whether it ends early (the
            // first "no record" ends the task, see the class's comment).
            val left = until - clock.millis()
            if (left > 0) Thread.sleep(left)
            if (clock.millis() >= deadlineMillis) status = RecordStatus.newStatusWithoutArrivalTime(false)
        }
      }
    }
    status
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

  /** How often a task asks the driver whether its batch should end early (a merge across tasks waits for that). */
  val EndCheckMillis = 1000L
}
