package io.kinesisspark.realtime

import java.time.Clock

import scala.util.control.NonFatal

import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{MicroBatchStream, Offset, PartitionOffset, ReadLimit,
  SupportsRealTimeMode}

import io.kinesisspark.{BufferIndex, KinesisErrors, KinesisMicroBatchStream, KinesisOptionKeys, KinesisSourceOffset,
  KinesisSourceOptions, ShardPosition, ShardStats, StartReconciler}
import io.kinesisspark.executor.{ShardFetchResult, ShardFetchTask}
import io.kinesisspark.prefetch.ShardDiscovery
import org.apache.spark.kinesisspark.{ChildShardChannel, TaskSlots}

/**
 * The Kinesis stream where Spark has real-time mode (4.1 and later): the micro-batch stream, and under a real-time
 * trigger a source of long-running tasks that read their shards themselves and hand each record to Spark as it comes.
 * Spark 4.0 has no real-time interfaces, so this class is made only where they load ([[MicroBatchStreams]]).
 *
 * In real-time mode no prefetching happens: each batch, the stream lists the shards, reconciles the batch's start
 * with the listing as a micro-batch does ([[StartReconciler]]: new shards, shards gone, a stream created again, data
 * loss), and deals the shards whose parents are finished to `realTimeTasks` tasks ([[RealTimePlanner]]). Each task
 * reads its shards until the batch's time is up ([[RealTimePartitionReader]]) and reports where each stands; the
 * batch's end is the start moved by those reports, which Spark writes to its offset log. A child shard is read within
 * seconds of its parents' end: a task that finished a shard asks this driver, which alone sees every task's, which
 * children it may read now; a merge whose parents ended in different tasks ends the batch early instead, and the next
 * batch reads it ([[BatchChildren]], through [[ChildShardChannel]]). The same shards go to the same executor each
 * batch, where their readers (iterators, rate limits, enhanced fan-out subscriptions) wait between tasks.
 *
 * Batches with a known end (replayed from the offset log under another trigger) are read as micro-batches are, from
 * Kinesis.
 */
final class KinesisRealTimeStream(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    clock: Clock = Clock.systemUTC())
  extends KinesisMicroBatchStream(options, checkpointLocation, clock) with SupportsRealTimeMode {

  @volatile private var realTime = false
  // Shards as listed, and where reading of a shard the start does not hold begins; no buffer in real-time mode.
  private lazy val discovery =
    new ShardDiscovery(api, options, new BufferIndex, _ => (), clock, consumers, addedAt = addedStreams.addedAt)
  // The running batch's start, reconciled with the listing it was planned from: what its end moves.
  @volatile private var plannedBase: Option[KinesisSourceOffset] = None
  // Where each shard was read last (the task's executor), so the next batch's task goes there.
  @volatile private var locations = Map.empty[(String, String), String]
  // Per shard, what the tasks reported (lag, calls, throttling, losses), for the metrics; and when the batch began.
  @volatile private var stats = Map.empty[(String, String), ShardStats]
  @volatile private var batchStartMillis = 0L
  // The running batch's resharding (with the batch's number among this stream's plans), which its tasks ask about
  // through the endpoint (opened with the first batch). Planning and the endpoint's answers take `childLock`: both may
  // list shards.
  private val childLock = new Object
  @volatile private var batchChildren: Option[(Long, BatchChildren)] = None
  private var plans = 0L
  private val childEndpoint = s"kinesis-spark-children-$streamId"
  @volatile private var childChannel: Option[AutoCloseable] = None
  // A listing the endpoint's thread made that failed (a stream deleted, under failOnDataLoss): the query fails with it.
  @volatile private var relistFailure: Option[Throwable] = None

  override def prepareForRealTimeMode(): Unit = {
    KinesisOptionKeys.NotInRealTime.find(options.isGiven).foreach { option =>
      throw KinesisErrors.notInRealTimeMode(option, "a real-time task reads its shards itself, record by record, " +
        "until the batch's time is up, with no prefetch buffer and no read limit per batch")
    }
    options.realTimeTasks.foreach { tasks =>
      val slots = TaskSlots.now(spark.sparkContext)
      if (tasks > slots) throw KinesisErrors.realTimeTasksExceedSlots(tasks, slots)
    }
    realTime = true
  }

  // Spark asks for an end every batch, also in real-time mode, where the tasks decide it: nothing to prefetch.
  override def latestOffset(start: Offset, limit: ReadLimit): Offset =
    if (realTime) start else super.latestOffset(start, limit)

  override def commit(end: Offset): Unit = if (!realTime) super.commit(end)

  override def planInputPartitions(start: Offset): Array[InputPartition] = childLock.synchronized {
    relistFailure.foreach(throw _)
    if (childChannel.isEmpty) {
      childChannel = Some(ChildShardChannel.open(childEndpoint)(childrenAfter,
        batch => batchChildren.exists { case (b, children) => b == batch && children.endRequested }))
    }
    val startOffset = start.asInstanceOf[KinesisSourceOffset]
    batchStartMillis = clock.millis()
    registerMetrics() // in Spark's metrics system, as a micro-batch query's are from its first batch
    consumers.foreach(_.refreshDue())
    addedStreams.forgetRemoved(startOffset.streams.keySet)
    discovery.addStart(startOffset)
    discovery.refreshShards()
    val starts = discovery.starts
    val reconciled = StartReconciler.reconcile(startOffset, options.streams, discovery.listings,
      (stream, shard) => starts.get((stream, shard)), options.allowStreamRemoval)
    reportLosses(reconciled.lost)
    val base = reconciled.base
    plannedBase = Some(base)
    val listed = discovery.listed
    val orders = base.streams.toSeq.flatMap { case (stream, positions) =>
      listed.graphs.get(stream).toSeq.flatMap { graph =>
        // Parents that left the offset (their children moved on) are finished in discovery's book.
        val known = starts.collect { case ((s, shard), p) if s == stream => shard -> p } ++ positions
        val readable = graph.readable(known).filter(s => positions.contains(s.shardId))
        lazy val consumerArn = consumers.map(_.consumerArn(stream))
        readable.map(s => listed.order(stream, s, positions(s.shardId), 0L, consumerArn))
      }
    }
    // A task without a slot would start only after the batch's time is up and read nothing: by default one task per
    // slot the cluster has now (at least one, while executors are still coming).
    val tasks = options.realTimeTasks.getOrElse(math.max(1, TaskSlots.now(spark.sparkContext)))
    val limits = options.realTimeFetchLimits
    val known = locations
    plans += 1
    val batch = plans
    val groups = RealTimePlanner.group(orders, tasks, known.get)
    // The query's batch, as Spark names it on this (the query's) thread; outside a query, this stream's own.
    val queryBatch = QueryBatch.current(key => Option(spark.sparkContext.getLocalProperty(key)))
      .getOrElse(QueryBatch(s"kinesis-stream-$streamId", batch))
    QueryBatchEnds.driver.planned(queryBatch, streamId, groups.size)
    batchChildren = Some(batch -> new BatchChildren(base, orders.map(o => (o.stream, o.shardId)).toSet,
      () => discovery.listed.graphs, () => discovery.starts, relist,
      (stream, shard, from) => discovery.listed.order(stream, shard, from, 0L, consumers.map(_.consumerArn(stream))),
      QueryBatchEnds.driver.of(queryBatch, onlyStageOfItsJob)))
    groups.map { group =>
      RealTimeInputPartition(ShardFetchTask(options.connection, limits, streamId, group.orders,
        dataLoss = io.kinesisspark.DataLossPolicy(options.failOnDataLoss),
        efoSubscriptionMaxEvents = options.efo.flatMap(_.subscriptionMaxEvents)),
        options.recordSchema, group.location, Some(BatchLink(childEndpoint, batch))): InputPartition
    }.toArray
  }

  // Listing again from the endpoint's thread (see BatchChildren): a failure there is the query's, on its own thread.
  private def relist(): Unit =
    try discovery.refreshShards(force = true)
    catch { case NonFatal(e) => relistFailure = Some(e) }

  // Whether a stage is the only one of its (running) job: a real-time query without a shuffle.
  private def onlyStageOfItsJob(stage: Int): Boolean = {
    val tracker = spark.sparkContext.statusTracker
    tracker.getActiveJobIds().iterator.flatMap(job => tracker.getJobInfo(job)).find(_.stageIds.contains(stage))
      .exists(_.stageIds.length == 1)
  }

  // A task finished a shard: the children it may read now, as orders' bytes (none for a batch that is over).
  private def childrenAfter(batch: Long, task: Long, stage: Int, stageTasks: Int, stream: String,
      shardId: String): Array[Byte] =
    childLock.synchronized {
      import KinesisRealTimeStream.log
      val children = batchChildren.collect { case (b, c) if b == batch => c }
      val ending = children.exists(_.endRequested)
      val orders = children.toSeq.flatMap(_.finished(stream, shardId, task, TaskStage(stage, stageTasks)))
      if (orders.nonEmpty) {
        log.info(s"Kinesis stream '$stream': task attempt $task reads ${orders.map(_.shardId).mkString(", ")} " +
          s"from now on, after $shardId")
      }
      if (!ending && children.exists(_.endRequested)) {
        log.info(s"Kinesis stream '$stream': a merge's parents ended in different tasks ($shardId last); ending the " +
          "batch early, for the next one to read the merged shard")
      }
      ShardFetchTask.encode(orders)
    }

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = {
    val base = plannedBase.getOrElse(throw new IllegalStateException("mergeOffsets before planInputPartitions"))
    val reported = offsets.toSeq.map(_.asInstanceOf[KinesisPartitionOffset])
    val end = RealTimePlanner.merge(base, reported.flatMap(_.shards))
    locations = locations ++
      reported.flatMap(o => o.location.toSeq.flatMap(l => o.shards.map(s => (s.stream, s.shardId) -> l)))
    val now = clock.millis()
    stats = stats ++ reported.flatMap { o =>
      o.shards.map { p =>
        val key = (p.stream, p.shardId)
        key -> ShardStats.after(stats.get(key), ShardFetchResult(p.stream, p.shardId, Nil, p.caughtUp,
          p.millisBehindLatest, p.counters, o.location.getOrElse("")), batchStartMillis, now)
      }
    }
    countRead(reported.flatMap(_.shards).map(_.records).sum, reported.flatMap(_.shards).map(_.bytes).sum)
    discovery.committed(end)
    childLock.synchronized { batchChildren = None }
    QueryBatchEnds.driver.done(streamId)
    relistFailure.foreach(throw _)
    end
  }

  override protected def shardStats: Map[(String, String), ShardStats] =
    if (realTime) stats else super.shardStats

  override protected def startingPositions: Map[(String, String), ShardPosition] =
    if (realTime) discovery.starts else super.startingPositions

  override def createReaderFactory(): PartitionReaderFactory = RealTimeReaderFactory(super.createReaderFactory())

  override def stop(): Unit = {
    try super.stop()
    finally if (realTime) {
      QueryBatchEnds.driver.done(streamId)
      discovery.stop()
      childChannel.foreach(_.close())
    }
  }
}

object KinesisRealTimeStream {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[KinesisRealTimeStream])

  /** Made here, so that only Spark lines with real-time mode load this class (see [[MicroBatchStreams]]). */
  def create(options: KinesisSourceOptions, checkpointLocation: String): MicroBatchStream =
    new KinesisRealTimeStream(options, checkpointLocation)
}
