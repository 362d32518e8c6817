package io.kinesisspark

import java.time.Clock
import java.util.Optional

import scala.jdk.CollectionConverters._
import scala.util.Random
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.slf4j.LoggerFactory

import io.kinesisspark.aws.{KinesisApi, KinesisClients, PositionUnavailableException}
import io.kinesisspark.efo.ConsumerRegistrar
import io.kinesisspark.reader.TransientBackoff
import io.kinesisspark.switching.SwitchStart

import io.kinesisspark.prefetch.{Prefetcher, RoundDispatcher}

/**
 * The Kinesis micro-batch stream: prefetch, then expose.
 *
 * Offset semantics: a [[KinesisSourceOffset]] holds, per stream and shard, the position after which reading
 * continues. A background [[Prefetcher]] keeps fetching on the executors (records stay there as blocks);
 * `latestOffset` exposes what is buffered, within the read limit, as the batch end. A batch is therefore fully
 * described by its (start, end] positions, and its records are the same whether they come from the blocks or,
 * when blocks are gone, from Kinesis again. Spark's offset log is the only record of progress. The blocks a batch
 * read are dropped (in the background) once it has run, when Spark asks for the next batch's end.
 *
 * Shards: every listed shard is in the offset, but for finished ones whose children have moved on (see
 * [[StartReconciler]]). Shards present at the first start begin at `initialPosition`
 * (`latest` pinned to the first start time), and so do those of a stream added to `streamName` later (pinned to the
 * time it was added: [[AddedStreamStore]]); shards that appear later begin at TRIM_HORIZON; a shard's records
 * are exposed only after all its parents are `Finished` in the batch start.
 *
 * Trigger.AvailableNow: the time and the shards at the trigger's start are the target; batches run until every
 * target shard is finished, has been read up to its tip by a fetch round that began after that time, or has been
 * read past the time; records that arrived after it (ApproximateArrivalTimestamp) are never exposed, however busy
 * the producers are.
 */
class KinesisMicroBatchStream(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    clock: Clock = Clock.systemUTC())
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics {

  import KinesisMicroBatchStream._

  protected val spark: SparkSession = SparkSession.active
  protected def api: KinesisApi = KinesisClients.api(options.connection)
  // Block ids and executors' cached shard readers are keyed by (streamId, ...); a random streamId per stream instance
  // keeps restarts and concurrent queries in one application from colliding.
  protected val streamId: Int = Random.nextInt(Int.MaxValue)
  // Enhanced fan-out: the consumers are named now (a bad name fails the query before its first batch) and registered
  // by the prefetcher before it first fetches. The query id is stable across restarts from one checkpoint; Spark
  // sets it as a local property of the thread that creates the sources.
  protected val consumers: Option[ConsumerRegistrar] = options.efo.map(efo =>
    ConsumerRegistrar(api, options.streams, efo, QueryMetrics.currentQueryId(spark)))
  // When streams added to `streamName` since the first start were added (their initial positions' time).
  protected val addedStreams = new AddedStreamStore(checkpointLocation, spark.sparkContext.hadoopConfiguration,
    options.streams, options.initialPosition)
  private val prefetcher = new Prefetcher(spark.sparkContext, options, streamId, clock, consumers,
    TestSettings.long(TestSettings.PrefetchSilenceLimitMs).getOrElse(RoundDispatcher.SilenceLimitMillis),
    addedStreams.addedAt)
  private val blockReads = BlockReadCounters(spark.sparkContext)
  @volatile private var availableNow: Option[AvailableNowTarget] = None
  private val dataLoss = DataLossPolicy(options.failOnDataLoss)
  private val reportedLosses = java.util.concurrent.ConcurrentHashMap.newKeySet[StartReconciler.Loss]()
  private val driverDataLossEvents = new java.util.concurrent.atomic.AtomicLong()
  private val recordsRead = new java.util.concurrent.atomic.AtomicLong()
  private val bytesRead = new java.util.concurrent.atomic.AtomicLong()
  /** The latest batches counted in `recordsRead`, oldest first, by their offsets' JSON (whose hash is kept). */
  private val countedBatches = java.util.Collections.synchronizedSet(new java.util.LinkedHashSet[(String, String)]())
  private val recentOffsets = new RecentOffsets()
  // The latest offset the prefetcher was told a batch ran through (see release).
  @volatile private var lastReleased: Option[KinesisSourceOffset] = None
  private val timings = new DriverTimings()
  /** The size of the JSON of the latest batch end the progress reported (what the offset log writes per batch). */
  @volatile private var offsetBytes = 0L
  // In Spark's metrics system from the first batch on (the query's id is known on its own thread).
  @volatile private var metricsQueryId: Option[String] = None

  protected def registerMetrics(): Unit = if (metricsQueryId.isEmpty) {
    metricsQueryId = QueryMetrics.currentQueryId(spark)
    metricsQueryId.foreach { id =>
      QueryMetrics.register("source", spark, id, MetricsSystemNames,
        () => metrics(Optional.empty[Offset]()).asScala.toMap)
    }
  }

  override def initialOffset(): Offset = recentOffsets.remember(
    new InitialOffsetStore(checkpointLocation, spark.sparkContext.hadoopConfiguration).getOrCreate {
      val now = clock.millis()
      // Where another consumer stopped, read once: later starts read the offset written here.
      val initial = SwitchStart.plan(options, spark.sparkContext.hadoopConfiguration, api)
        .fold(options.initialPosition)(_.position)
      val offset = KinesisSourceOffset(
        options.streams.map { stream =>
          val shards = TransientBackoff.retrying(s"Listing the shards of '$stream'")(
            api.listShards(stream, options.maxShardsPerDescribe))
          initial.checkShards(stream, shards)
          stream -> initial.shardPositions(stream, shards, now)
        }.toMap,
        options.streams.map(stream => stream ->
          TransientBackoff.retrying(s"Describing Kinesis stream '$stream'")(api.describeStream(stream)).createdMillis).toMap)
      // A sequence number from elsewhere (another stream, a typo within the shard's range) is caught by Kinesis
      // alone; asking now gives the user an error naming the shard instead of a data-loss report later.
      initial.sequenceStarts.foreach { case (stream, shardId, position) =>
        try api.shardIterator(stream, shardId, position.shardPosition(now))
        catch {
          case e: PositionUnavailableException => throw InitialPosition.refused(stream, shardId, position, e.detail)
          case e: software.amazon.awssdk.services.kinesis.model.InvalidArgumentException =>
            throw InitialPosition.refused(stream, shardId, position, e.awsErrorDetails().errorMessage())
        }
      }
      log.info(s"Initial Kinesis offset ($initial): ${offset.json()}")
      offset
    })

  override def deserializeOffset(json: String): Offset = recentOffsets.parse(json)

  override def getDefaultReadLimit: ReadLimit = {
    val limits =
      options.maxRecordsPerTrigger.map(ReadLimit.maxRows).toSeq ++ options.maxBytesPerTrigger.map(ByteReadLimit(_))
    limits match {
      case Seq()      => ReadLimit.allAvailable()
      case Seq(limit) => limit
      case several    => ReadLimit.compositeLimit(several.toArray)
    }
  }

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("latestOffset(start, limit) is used by Spark for this source")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset =
    timings.time(DriverTimings.LatestOffset)(
      recentOffsets.remember(latestOffsetOf(start.asInstanceOf[KinesisSourceOffset], limit)))

  private def latestOffsetOf(startOffset: KinesisSourceOffset, limit: ReadLimit): KinesisSourceOffset = {
    registerMetrics()
    addedStreams.forgetRemoved(startOffset.streams.keySet)
    prefetcher.start(startOffset)
    // Spark asks for the next batch's end only once the batch ending at `start` has run, but calls `commit` for that
    // batch only once the next one has data. Waiting for `commit` to free the buffer deadlocks when a batch took
    // everything buffered and the buffer was full: no room to fetch the next batch's data, so no commit. What a
    // finished batch read is released here instead (Spark's `commit` of the same offset then finds nothing to do).
    release(startOffset)
    val budget = BatchEndPlanner.Budget.of(limit)
    // Read before planning: records that come while the plan is made end the wait below at once; and what reached
    // Trigger.AvailableNow's target by then is in the plan (judged after it, a task's delivery in between could end
    // the query with records up to the target unread).
    val fetchedBeforePlan = prefetcher.fetched
    var reached = availableNow.exists(_.reachedBy(startOffset, prefetcher))
    var end = plan(startOffset, budget)
    availableNow match {
      case None =>
        if (end eq startOffset) {
          // Nothing new yet: wait for the round in flight to bring records (or to end) rather than have Spark poll
          // in a tight loop.
          timings.excluded(prefetcher.awaitFetchAfter(fetchedBeforePlan, options.minFetchPeriodMs))
          end = plan(startOffset, budget)
        }
      case Some(target) =>
        while ((end eq startOffset) && !reached) {
          timings.excluded(prefetcher.awaitRoundAfter(prefetcher.completedRounds, AvailableNowWaitMs))
          reached = target.reachedBy(startOffset, prefetcher)
          end = plan(startOffset, budget)
        }
    }
    end
  }

  // The latest reconciliation, with the start, listings and starts it was made from (the query thread's alone): the
  // same start is planned again while no data comes, and after each wait for a round, and reconciles the same unless
  // a listing or a commit came between (at 10,000 shards, a tenth of the query thread's samples in a JFR of
  // DriverScaleBenchmark).
  private var lastReconciled: Option[(KinesisSourceOffset, Map[String, StartReconciler.Listing],
    Map[(String, String), ShardPosition], StartReconciler.Reconciled)] = None

  private def plan(start: KinesisSourceOffset, budget: BatchEndPlanner.Budget): KinesisSourceOffset = {
    prefetcher.checkFailure()
    // One view of the listings for the whole plan: the shards reconciled and the parents asked for are the same.
    val listings = prefetcher.listings
    val starts = prefetcher.startingPositions
    val reconciled = lastReconciled.collect {
      case (s, l, b, done) if (s eq start) && (l eq listings) && (b eq starts) => done
    }.getOrElse {
      val done = StartReconciler.reconcile(start, options.streams, listings,
        (stream, shard) => starts.get((stream, shard)), options.allowStreamRemoval)
      lastReconciled = Some((start, listings, starts, done))
      done
    }
    reportLosses(reconciled.lost)
    val end = BatchEndPlanner.plan(
      reconciled.base,
      reconciled.fresh,
      (stream, shard) => listings.get(stream).fold(Seq.empty[String])(_.graph.parentsOf(shard)),
      (stream, shard, from) => {
        val buffered = prefetcher.buffer.rangesAfter(stream, shard, from)
        // Trigger.AvailableNow ends at its target: nothing that arrived after it is exposed.
        availableNow.fold(buffered)(target => buffered.takeWhile(r => !target.isAfter(r)))
      },
      budget)
    // Nothing new: the start itself, whose JSON is rendered already (Spark compares offsets by their JSON).
    if (end.samePositions(start)) start else end
  }

  /** Hands what a reconciled start lost to the data-loss policy, and counts it, each loss once. */
  protected def reportLosses(lost: Seq[StartReconciler.Loss]): Unit =
    // The same start is planned several times while waiting for data.
    lost.filter(reportedLosses.add).foreach { loss =>
      dataLoss.report(loss.stream, loss.shard, loss.what)
      driverDataLossEvents.incrementAndGet()
    }

  override def prepareForTriggerAvailableNow(): Unit = {
    val shards = options.streams.flatMap(s =>
      TransientBackoff.retrying(s"Listing the shards of '$s'")(api.listShards(s, options.maxShardsPerDescribe))
        .map(i => (s, i.shardId)))
    availableNow = Some(AvailableNowTarget(clock.millis(), shards.toSet))
    prefetcher.cutAtArrival(availableNow.get.atMillis)
    log.info(s"Trigger.AvailableNow: reading ${shards.size} shard(s) up to what they held at ${availableNow.get.atMillis}")
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] =
    timings.time(DriverTimings.PlanInputPartitions)(
      partitions(start.asInstanceOf[KinesisSourceOffset], end.asInstanceOf[KinesisSourceOffset]))

  private def partitions(startOffset: KinesisSourceOffset, endOffset: KinesisSourceOffset): Array[InputPartition] = {
    // Shards entering the offset with this batch, and every shard of a stream created again since the start,
    // contribute no records to it (see StartReconciler): only shards the start holds are read (and, in a replayed
    // real-time batch, shards it read that its start did not hold: see replayedFrom and enteredFrom).
    // Loops rather than a for over sorted pairs: at 10,000 shards the intermediate collections showed.
    val graphs = new PlanGraphs(endOffset)
    val slices = Vector.newBuilder[ShardSlice]
    endOffset.streams.keys.toArray.sorted.foreach { stream =>
      val shards = endOffset.streams(stream)
      // The start's positions are the old stream's when it was created again since (its shard ids are reused).
      val recreated = (startOffset.created.get(stream), endOffset.created.get(stream)) match {
        case (Some(a), Some(b)) => a != b
        case _                  => false
      }
      val entered = recreated || !startOffset.streams.contains(stream)
      // Where each shard of a stream added to the query began: worked out once per stream, and only when needed.
      lazy val addedStarts: Map[String, ShardPosition] = (for {
        added <- addedStreams.get(stream)
        graph <- graphs(stream)
      } yield options.initialPosition.shardPositions(stream, graph.shards, added)).getOrElse(Map.empty)
      shards.keys.toArray.sorted.foreach { shard =>
        val to = shards(shard)
        val from =
          if (entered) enteredFrom(to, if (recreated) Some(ShardPosition.TrimHorizon) else addedStarts.get(shard))
          else startOffset.position(stream, shard).orElse(replayedFrom(stream, shard, to, startOffset, graphs))
        from.filter(_ != to).foreach { from =>
          slices += ShardSlice(stream, shard, from, to, prefetcher.buffer.covering(stream, shard, from, to).getOrElse(Nil))
        }
      }
    }
    val batchSlices = slices.result()
    // Spark may plan a batch more than once: its records count once.
    if (countedBatches.add((startOffset.json(), endOffset.json()))) {
      recordsRead.addAndGet(batchSlices.iterator.flatMap(_.ranges).map(_.records.toLong).sum)
      bytesRead.addAndGet(batchSlices.iterator.map(_.bytes).sum)
      if (countedBatches.size > CountedBatchesKept) countedBatches.remove(countedBatches.iterator.next())
    }
    val limits = options.fetchLimits
    val (alone, families) =
      ShardFamilies.split(batchSlices, (stream, shard) => graphs(stream).fold(Seq.empty[String])(_.parentsOf(shard)))
    (PartitionCoalescer.coalesce(alone, options.coalesceThresholdBlockSize, options.coalesceBinSize) ++ families)
      .map(group => KinesisInputPartition(options.connection, group, limits, options.failOnDataLoss, options.recordSchema): InputPartition)
      .toArray
  }

  /**
   * Where a shard absent from a batch's start is read from: nowhere (it entered the offset with the batch at its start,
   * or finished because its children had moved on), unless the end has it past records or finished while its children
   * had not moved on at the start, which only a real-time batch does (a child that joined a task, a shard new to that
   * batch's listing). Replayed, such a batch reads it from where reading of the shard starts (TRIM_HORIZON for a
   * reshard's child), so that the replay delivers what the batch did.
   */
  private def replayedFrom(stream: String, shard: String, to: ShardPosition, start: KinesisSourceOffset,
      graphs: PlanGraphs): Option[ShardPosition] = {
    def readFromItsStart =
      Some(startingPositions.getOrElse((stream, shard), ShardPosition.TrimHorizon)).filter(_ != ShardPosition.Finished)
    to match {
      case _: ShardPosition.AfterRecord => readFromItsStart
      case ShardPosition.Finished
          if graphs(stream).exists(!_.endedByDescendants(shard, start.streams.getOrElse(stream, Map.empty))) =>
        readFromItsStart
      case _ => None
    }
  }

  /**
   * Where a shard of a stream the batch's start does not hold (new to the query, or created again since) is read from,
   * given where its reading began (`began`): nowhere when the end holds it where it entered (a micro-batch's fresh
   * shard, which the next batch reads), else from there, which only a real-time batch does, reading the stream as it
   * enters. A stream created again began at TRIM_HORIZON (see ShardDiscovery); a new one at its initial position as of
   * the time it was added, which the checkpoint keeps ([[AddedStreamStore]]; not known, and so read nowhere, in a
   * checkpoint that lacks the time or since a change of `initialPosition`).
   */
  private def enteredFrom(to: ShardPosition, began: => Option[ShardPosition]): Option[ShardPosition] = to match {
    case _: ShardPosition.AfterRecord | ShardPosition.Finished => began.filter(_ != ShardPosition.Finished)
    case _ => None
  }

  /**
   * One plan's shard graphs, listed when first asked for: the prefetcher's listing when it lists every shard of the
   * batch's end and is of the same stream (creation time), else (a batch replayed before the prefetcher listed, or
   * planned from a newer listing) a listing made now. None when that fails (a stream deleted since): then no family
   * is kept together and no finished shard read again, as before replays read in-batch children.
   */
  private final class PlanGraphs(end: KinesisSourceOffset) extends (String => Option[ShardGraph]) {
    private val graphs = scala.collection.mutable.Map.empty[String, Option[ShardGraph]]
    override def apply(stream: String): Option[ShardGraph] = graphs.getOrElseUpdate(stream, {
      val shards = end.streams.getOrElse(stream, Map.empty).keys
      prefetcher.listings.get(stream)
        .filter(l => end.created.get(stream).forall(_ == l.createdMillis) && shards.forall(l.graph.lists))
        .map(_.graph)
        .orElse {
          try Some(ShardGraph(TransientBackoff.retrying(s"Listing the shards of '$stream'")(
            api.listShards(stream, options.maxShardsPerDescribe))))
          catch {
            case NonFatal(e) =>
              log.warn(s"Listing the shards of '$stream' to plan a batch failed (${e.getClass.getSimpleName}: " +
                s"${e.getMessage}); its shards are read as if none had a parent in the batch")
              None
          }
        }
    })
  }

  override def createReaderFactory(): PartitionReaderFactory = KinesisPartitionReaderFactory(Some(blockReads))

  override def commit(end: Offset): Unit = timings.time(DriverTimings.Commit)(release(end.asInstanceOf[KinesisSourceOffset]))

  /**
   * Tells the prefetcher a batch through `end` has run, once per offset: Spark asks for the next end while no data
   * comes (each time with the same start) and then commits that start, and each release walks every shard.
   */
  private def release(end: KinesisSourceOffset): Unit =
    if (!lastReleased.exists(r => (r eq end) || r.json() == end.json())) {
      prefetcher.committed(end)
      lastReleased = Some(end)
    }

  override def stop(): Unit = {
    metricsQueryId.foreach(QueryMetrics.remove("source", _))
    prefetcher.stop()
  }

  /** Per shard: the latest read statistics (the prefetcher's). */
  protected def shardStats: Map[(String, String), ShardStats] = prefetcher.shardStats

  /** Every shard known, with where its reading starts or continues (the prefetcher's book). */
  protected def startingPositions: Map[(String, String), ShardPosition] = prefetcher.startingPositions

  /** Counts records and bytes read outside planned batches (real-time tasks) into `recordsRead` and `bytesRead`. */
  protected def countRead(records: Long, bytes: Long): Unit = {
    recordsRead.addAndGet(records)
    bytesRead.addAndGet(bytes)
  }

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val consumed: Option[KinesisSourceOffset] = Option(latestConsumedOffset.orElse(null)).map {
      case o: KinesisSourceOffset => o
      case other                  => recentOffsets.parse(other.json())
    }
    // Spark's progress passes the batch's end; the metrics system's gauges pass nothing and read the latest.
    consumed.foreach(o => offsetBytes = o.json().getBytes(java.nio.charset.StandardCharsets.UTF_8).length.toLong)
    val snapshot = SourceMetrics.Snapshot(
      streams = options.streams,
      efo = options.efo.isDefined,
      consumed = consumed,
      stats = shardStats,
      starts = startingPositions,
      buffer = prefetcher.buffer.snapshot,
      fetchRounds = prefetcher.completedRounds,
      lastRoundBlocks = prefetcher.lastRoundBlocks,
      blocksStored = prefetcher.blocksStored,
      lastRoundMs = prefetcher.lastRoundMillis,
      lostTickets = prefetcher.lostTickets,
      refusedResults = prefetcher.refusedResults,
      refusedBlocks = prefetcher.refusedBlocks,
      refusedBlocksRemoved = prefetcher.refusedBlocksRemoved,
      blockReadsLocal = blockReads.local.value,
      blockReadsRemote = blockReads.remote.value,
      blockReadsFromKinesis = blockReads.fromKinesis.value,
      recordsRead = recordsRead.get,
      bytesRead = bytesRead.get,
      driverDataLossEvents = driverDataLossEvents.get + prefetcher.driverDataLossEvents,
      availableNowTargetMillis = availableNow.map(_.atMillis),
      driverTimings = timings.metrics,
      offsetBytes = offsetBytes)
    SourceMetrics.of(snapshot, clock.millis()).asJava
  }

  override def toString: String = s"KinesisV2[${options.streams.mkString(",")}]"
}

object KinesisMicroBatchStream {
  private val log = LoggerFactory.getLogger(classOf[KinesisMicroBatchStream])
  /** How long one wait for a prefetch round lasts in AvailableNow mode before the target is checked again. */
  private val AvailableNowWaitMs = 1000L
  private val CountedBatchesKept = 8
  /** The source's metrics in Spark's metrics system ([[QueryMetrics]]); per stream ones stay in the progress. */
  val MetricsSystemNames: Seq[String] = Seq("avgMsBehindLatest", "maxMsBehindLatest", "minMsBehindLatest",
    "activeShards", "recordsRead", "bytesRead", "bufferedRecords", "bufferedBytes", "throttlingEvents",
    "avgFetchLatencyMs", "dataLossEvents", "fetchRounds", "oldestBufferedRecordAgeMs", "lastRoundBlocks", "blocksStored",
    "blockReadsLocal", "blockReadsRemote", "blockReadsFromKinesis", "lastRoundMs", "fetchTicketsLost",
    "fetchResultsRefused", "fetchRefusedBlocks", "fetchRefusedBlocksRemoved", "driverLatestOffsetMs",
    "driverPlanInputPartitionsMs", "driverCommitMs",
    "driverLatestOffsetCpuMs", "driverPlanInputPartitionsCpuMs", "driverCommitCpuMs", "offsetBytes")
}
