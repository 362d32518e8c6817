package io.kinesisspark

import java.time.Clock
import java.util.Optional

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.spark.kinesisspark.BlockStoreBridge
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.slf4j.LoggerFactory

import io.kinesisspark.ShardPosition.{AtTimestamp, Finished, TrimHorizon}
import io.kinesisspark.aws.{KinesisApi, KinesisClients}

/**
 * The Kinesis micro-batch stream: prefetch, then expose.
 *
 * Offset semantics: a [[KinesisSourceOffset]] holds, per stream and shard, the position after which reading
 * continues. A background [[Prefetcher]] keeps fetching on the executors (records stay there as blocks);
 * `latestOffset` exposes what is buffered, within the read limit, as the batch end. A batch is therefore fully
 * described by its (start, end] positions, and its records are the same whether they come from the blocks or,
 * when blocks are gone, from Kinesis again. Spark's offset log is the only record of progress. `commit` drops the
 * blocks a batch no longer needs.
 *
 * Shards: every listed shard is in the offset. Shards present at the first start begin at `initialPosition`
 * (`latest` pinned to the first start time); shards that appear later begin at TRIM_HORIZON; a shard's records
 * are exposed only after all its parents are `Finished` in the batch start.
 *
 * Trigger.AvailableNow: the time and the shards at the trigger's start are the target; batches run until every
 * target shard is finished or has been read up to its tip by a fetch round that began after that time.
 */
final class KinesisMicroBatchStream(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    clock: Clock = Clock.systemUTC())
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics {

  import KinesisMicroBatchStream._

  private val spark = SparkSession.active
  private def api: KinesisApi = KinesisClients.api(options.connection)
  // Block ids are (streamId, counter); a random streamId per stream instance keeps restarts and concurrent
  // queries in one application from colliding.
  private val prefetcher = new Prefetcher(spark.sparkContext, options, Random.nextInt(Int.MaxValue), clock)
  @volatile private var availableNow: Option[AvailableNowTarget] = None

  override def initialOffset(): Offset =
    new InitialOffsetStore(checkpointLocation, spark.sparkContext.hadoopConfiguration).getOrCreate {
      val start = options.initialPosition match {
        case InitialPosition.Latest          => AtTimestamp(clock.millis())
        case InitialPosition.TrimHorizon     => TrimHorizon
        case InitialPosition.AtTimestamp(ms) => AtTimestamp(ms)
      }
      val offset = KinesisSourceOffset(options.streams.map { stream =>
        stream -> api.listShards(stream, options.maxShardsPerDescribe).map(_.shardId -> (start: ShardPosition)).toMap
      }.toMap)
      log.info(s"Initial Kinesis offset (${options.initialPosition}): ${offset.json()}")
      offset
    }

  override def deserializeOffset(json: String): Offset = KinesisSourceOffset.fromJson(json)

  override def getDefaultReadLimit: ReadLimit = {
    val limits = options.maxRecordsPerTrigger.map(ReadLimit.maxRows).toSeq ++ options.maxBytesPerTrigger.map(ReadLimit.maxBytes)
    limits match {
      case Seq()      => ReadLimit.allAvailable()
      case Seq(limit) => limit
      case several    => ReadLimit.compositeLimit(several.toArray)
    }
  }

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("latestOffset(start, limit) is used by Spark for this source")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val startOffset = start.asInstanceOf[KinesisSourceOffset]
    prefetcher.start(startOffset)
    val budget = BatchEndPlanner.Budget.of(limit)
    var end = plan(startOffset, budget)
    availableNow match {
      case None =>
        if (end == startOffset) {
          // Nothing new yet: wait for the round in flight rather than have Spark poll in a tight loop.
          prefetcher.awaitRoundAfter(prefetcher.completedRounds, options.minFetchPeriodMs)
          end = plan(startOffset, budget)
        }
      case Some(target) =>
        while (end == startOffset && !target.reachedBy(startOffset, prefetcher)) {
          prefetcher.awaitRoundAfter(prefetcher.completedRounds, AvailableNowWaitMs)
          end = plan(startOffset, budget)
        }
    }
    end
  }

  private def plan(start: KinesisSourceOffset, budget: BatchEndPlanner.Budget): KinesisSourceOffset = {
    prefetcher.checkFailure()
    val known = prefetcher.positions
    BatchEndPlanner.plan(
      start,
      known,
      (stream, shard) => prefetcher.graph(stream).parentsOf(shard),
      (stream, shard, from) => prefetcher.buffer.rangesAfter(stream, shard, from),
      budget)
  }

  override def prepareForTriggerAvailableNow(): Unit = {
    val shards = options.streams.flatMap(s => api.listShards(s, options.maxShardsPerDescribe).map(i => (s, i.shardId)))
    availableNow = Some(AvailableNowTarget(clock.millis(), shards.toSet))
    log.info(s"Trigger.AvailableNow: reading ${shards.size} shard(s) up to what they held at ${availableNow.get.atMillis}")
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val startOffset = start.asInstanceOf[KinesisSourceOffset]
    val endOffset = end.asInstanceOf[KinesisSourceOffset]
    val slices = for {
      (stream, shards) <- endOffset.streams.toSeq.sortBy(_._1)
      (shard, to) <- shards.toSeq.sortBy(_._1)
      from = startOffset.position(stream, shard).getOrElse(TrimHorizon)
      if from != to
    } yield ShardSlice(stream, shard, from, to, prefetcher.buffer.covering(stream, shard, from, to).getOrElse(Nil))
    val limits = options.fetchLimits
    PartitionCoalescer.coalesce(slices, options.coalesceThresholdBlockSize, options.coalesceBinSize)
      .map(group => KinesisInputPartition(options.connection, group, limits, options.failOnDataLoss): InputPartition)
      .toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = KinesisPartitionReaderFactory

  override def commit(end: Offset): Unit =
    prefetcher.committed(end.asInstanceOf[KinesisSourceOffset])
      .foreach(b => BlockStoreBridge.remove(b.streamId, b.uniqueId))

  override def stop(): Unit = prefetcher.stop()

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val consumed: Option[KinesisSourceOffset] = Option(latestConsumedOffset.orElse(null)).map {
      case o: KinesisSourceOffset => o
      case other                  => KinesisSourceOffset.fromJson(other.json())
    }
    val stats = prefetcher.shardStats
    val active = prefetcher.positions.filter { case ((stream, shard), _) =>
      !consumed.flatMap(_.position(stream, shard)).contains(Finished)
    }.keySet
    val lags = active.toSeq.flatMap(k => stats.get(k).flatMap(_.millisBehindLatest))
    val calls = stats.values.map(_.lastRoundCalls).sum
    val lagMetrics =
      if (lags.isEmpty) Map.empty[String, String]
      else Map(
        "avgMsBehindLatest" -> (lags.sum.toDouble / lags.size).toString,
        "maxMsBehindLatest" -> lags.max.toString,
        "minMsBehindLatest" -> lags.min.toString)
    (lagMetrics ++ Map(
      "activeShards" -> active.size.toString,
      "bufferedRecords" -> prefetcher.buffer.bufferedRecords.toString,
      "bufferedBytes" -> prefetcher.buffer.bufferedBytes.toString,
      "throttlingEvents" -> stats.values.map(_.throttles).sum.toString,
      "fetchRounds" -> prefetcher.completedRounds.toString,
      "avgFetchLatencyMs" -> (if (calls == 0) "0" else (stats.values.map(_.lastRoundCallMillis).sum / calls).toString)
    )).asJava
  }

  override def toString: String = s"KinesisV2[${options.streams.mkString(",")}]"
}

object KinesisMicroBatchStream {
  private val log = LoggerFactory.getLogger(classOf[KinesisMicroBatchStream])
  /** How long one wait for a prefetch round lasts in AvailableNow mode before the target is checked again. */
  private val AvailableNowWaitMs = 1000L
}
