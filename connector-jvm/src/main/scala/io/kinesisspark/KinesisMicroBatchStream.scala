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

import io.kinesisspark.ShardPosition.{AtTimestamp, TrimHorizon}
import io.kinesisspark.aws.{KinesisApi, KinesisClients}
import io.kinesisspark.fetch.{BlockRef, FetchLimits}

/**
 * The Kinesis micro-batch stream: prefetch, then expose.
 *
 * Offset semantics: a [[KinesisSourceOffset]] holds, per stream and shard, the position after which reading
 * continues. `latestOffset` runs a fetch round on the executors (records stay there as blocks) and returns, per
 * shard, the end of what is buffered; a batch is therefore fully described by its (start, end] positions, and
 * its records are the same whether they come from the blocks or, when blocks are gone, from Kinesis again.
 * Spark's offset log is the only record of progress. `commit` drops the blocks a batch no longer needs.
 *
 * Shards: every listed shard is in the offset. Shards present at the first start begin at `initialPosition`
 * (`latest` pinned to the first start time); shards that appear later begin at TRIM_HORIZON; a shard is read
 * only after all its parents are `Finished`.
 */
final class KinesisMicroBatchStream(
    options: KinesisSourceOptions,
    checkpointLocation: String,
    clock: Clock = Clock.systemUTC())
  extends MicroBatchStream with SupportsAdmissionControl with ReportsSourceMetrics {

  import KinesisMicroBatchStream._

  private val spark = SparkSession.active
  private def api: KinesisApi = KinesisClients.api(options.connection)
  private val limits = FetchLimits(options.maxRecordsPerFetch)
  private val buffer = new BufferIndex
  // Block ids are (streamId, counter); a random streamId per stream instance keeps restarts and concurrent
  // queries in one application from colliding.
  private val prefetcher = new Prefetcher(spark.sparkContext, Random.nextInt(Int.MaxValue))
  private var lastRoundEndMillis = Long.MinValue
  @volatile private var lastLag: Seq[Long] = Nil

  override def initialOffset(): Offset =
    new InitialOffsetStore(checkpointLocation, spark.sparkContext.hadoopConfiguration).getOrCreate {
      val start = options.initialPosition match {
        case InitialPosition.Latest          => AtTimestamp(clock.millis())
        case InitialPosition.TrimHorizon     => TrimHorizon
        case InitialPosition.AtTimestamp(ms) => AtTimestamp(ms)
      }
      val offset = KinesisSourceOffset(options.streams.map { stream =>
        stream -> api.listShards(stream, ShardPageSize).map(_.shardId -> (start: ShardPosition)).toMap
      }.toMap)
      log.info(s"Initial Kinesis offset (${options.initialPosition}): ${offset.json()}")
      offset
    }

  override def deserializeOffset(json: String): Offset = KinesisSourceOffset.fromJson(json)

  override def getDefaultReadLimit: ReadLimit = ReadLimit.allAvailable()

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("latestOffset(start, limit) is used by Spark for this source")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val startOffset = start.asInstanceOf[KinesisSourceOffset]
    waitForNextRound()
    val positions = options.streams.map(stream => stream -> currentShards(stream, startOffset)).toMap

    val toFetch = positions.toSeq.flatMap { case (stream, (graph, shards)) =>
      graph.readable(shards)
        .map(s => (stream, s.shardId, buffer.end(stream, s.shardId).getOrElse(shards(s.shardId))))
        .filter(_._3 != ShardPosition.Finished)
    }
    val fetched = prefetcher.fetch(options.connection, limits, toFetch)
    lastRoundEndMillis = clock.millis()
    fetched.foreach(buffer.append)
    lastLag = fetched.map(_.millisBehindLatest)

    KinesisSourceOffset(positions.map { case (stream, (_, shards)) =>
      stream -> shards.map { case (shard, pos) => shard -> buffer.end(stream, shard).getOrElse(pos) }
    })
  }

  /**
   * The stream's shards with their positions in `start`; shards not in `start` appeared since and begin at
   * TRIM_HORIZON. Shards in `start` that are no longer listed (aged out) stay recorded.
   */
  private def currentShards(stream: String, start: KinesisSourceOffset): (ShardGraph, Map[String, ShardPosition]) = {
    val graph = ShardGraph(api.listShards(stream, ShardPageSize))
    val known = start.streams.getOrElse(stream, Map.empty)
    (graph, known ++ graph.shards.collect { case s if !known.contains(s.shardId) => s.shardId -> TrimHorizon })
  }

  /** Keeps rounds at least `minFetchPeriod` apart so an idle stream is not polled in a tight loop. */
  private def waitForNextRound(): Unit = {
    if (lastRoundEndMillis != Long.MinValue) {
      val wait = lastRoundEndMillis + limits.minFetchPeriodMs - clock.millis()
      if (wait > 0) Thread.sleep(wait)
    }
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val startOffset = start.asInstanceOf[KinesisSourceOffset]
    val endOffset = end.asInstanceOf[KinesisSourceOffset]
    val partitions = for {
      (stream, shards) <- endOffset.streams.toSeq.sortBy(_._1)
      (shard, to) <- shards.toSeq.sortBy(_._1)
      from = startOffset.position(stream, shard).getOrElse(TrimHorizon)
      if from != to
    } yield KinesisInputPartition(options.connection, stream, shard, from, to,
      buffer.covering(stream, shard, from, to).getOrElse(Nil), limits, options.failOnDataLoss)
    partitions.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = KinesisPartitionReaderFactory

  override def commit(end: Offset): Unit = removeBlocks(buffer.dropThrough(end.asInstanceOf[KinesisSourceOffset]))

  override def stop(): Unit = removeBlocks(buffer.clear())

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val lag = lastLag
    val lagMetrics =
      if (lag.isEmpty) Map.empty[String, String]
      else Map(
        "avgMsBehindLatest" -> (lag.sum.toDouble / lag.size).toString,
        "maxMsBehindLatest" -> lag.max.toString,
        "minMsBehindLatest" -> lag.min.toString)
    (lagMetrics ++ Map(
      "bufferedRecords" -> buffer.bufferedRecords.toString,
      "bufferedBytes" -> buffer.bufferedBytes.toString)).asJava
  }

  override def toString: String = s"KinesisV2[${options.streams.mkString(",")}]"

  private def removeBlocks(blocks: Seq[BlockRef]): Unit =
    blocks.foreach(b => BlockStoreBridge.remove(b.streamId, b.uniqueId))
}

object KinesisMicroBatchStream {
  private val log = LoggerFactory.getLogger(classOf[KinesisMicroBatchStream])
  /** ListShards page size (the Databricks default of `maxShardsPerDescribe`). */
  private val ShardPageSize = 100
}
