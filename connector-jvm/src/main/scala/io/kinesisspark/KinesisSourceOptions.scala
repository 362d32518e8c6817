package io.kinesisspark

import java.util.Locale

import io.kinesisspark.aws.{AwsConnection, ConnectionOptions}
import io.kinesisspark.efo.EfoOptions
import io.kinesisspark.options.OptionValues._
import io.kinesisspark.options.StreamNames
import io.kinesisspark.reader.FetchLimits

/**
 * The source's options, parsed once and validated when the table is created, so a bad option fails at
 * `load()`, before any query runs.
 *
 * {{{
 *   val opts = KinesisSourceOptions.parse(Map(
 *     "streamName" -> "clicks", "region" -> "us-east-1", "initialPosition" -> "trim_horizon"))
 *   opts.streams            // Seq("clicks")
 *
 *   // Stream ARNs work too; the stream is then called by its name in offsets and the `stream` column.
 *   KinesisSourceOptions.parse(Map("streamName" -> "arn:aws:kinesis:us-east-1:123456789012:stream/clicks,orders"))
 *   opts.maxRecordsPerFetch // 10000
 * }}}
 *
 * @param efo the enhanced fan-out options when `consumerMode` is `efo`; `None` when polling
 */
final case class KinesisSourceOptions(
    streams: Seq[String],
    connection: AwsConnection,
    initialPosition: InitialPosition,
    maxRecordsPerFetch: Int,
    failOnDataLoss: Boolean,
    maxFetchRateBytesPerSec: Double,
    minFetchPeriodMs: Long,
    maxFetchDurationMs: Long,
    fetchBufferSizeBytes: Long,
    shardsPerTask: Int,
    shardFetchIntervalMs: Long,
    coalesceThresholdBlockSize: Long,
    coalesceBinSize: Long,
    maxShardsPerDescribe: Int,
    maxRecordsPerTrigger: Option[Long],
    maxBytesPerTrigger: Option[Long],
    allowStreamRemoval: Boolean = false,
    efo: Option[EfoOptions] = None,
    recordSchema: KinesisRecordSchema = KinesisRecordSchema.Databricks) {

  /** What one shard's reader may do, from these options. */
  def fetchLimits: FetchLimits = FetchLimits(
    maxRecordsPerFetch = maxRecordsPerTrigger.fold(maxRecordsPerFetch)(t => math.min(t, maxRecordsPerFetch.toLong).toInt),
    minFetchPeriodMs = minFetchPeriodMs,
    maxRoundMillis = maxFetchDurationMs,
    maxFetchRateBytesPerSec = maxFetchRateBytesPerSec)
}

object KinesisSourceOptions {
  import KinesisOptionKeys._

  /** Kinesis' "MB" in its limits is 2^20 bytes. */
  val MiB: Double = 1024 * 1024
  val DefaultMaxFetchRateMBs = 1.0
  /** Kinesis serves each shard at most 2 MB/s. */
  val MaxFetchRateMBs = 2.0
  /** Kinesis allows 5 GetRecords calls per second per shard. */
  val MinFetchPeriodMs = 200L
  /** ListShards pages hold at most 10,000 shards. */
  val MaxShardsPerDescribeLimit = 10000

  /** GetRecords returns at most 10,000 records per call. */
  val MaxRecordsPerFetchLimit = 10000

  // Defaults: those of the Databricks connector (minFetchPeriod's and maxFetchDuration's are FetchLimits').
  val DefaultMaxRecordsPerFetch = 10000
  val DefaultFetchBufferSizeBytes: Long = 20L << 30
  val DefaultShardsPerTask = 5
  val DefaultShardFetchIntervalMs = 1000L
  val DefaultCoalesceThresholdBlockSize = 10000000L
  val DefaultCoalesceBinSize = 128000000L
  // Databricks lists 100 shards per page; 1,000 lists a stream of thousands of shards in a few calls (ListShards
  // takes up to 10,000), well within its quota of 1,000 calls per second per stream.
  val DefaultMaxShardsPerDescribe = 1000

  /** @param options user options; keys are matched case-insensitively. */
  def parse(options: Map[String, String]): KinesisSourceOptions = {
    val opts = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    def get(key: String): Option[String] = opts.get(key.toLowerCase(Locale.ROOT)).filter(_ != null)

    val streamRefs = get(StreamName).map(StreamNames.parse).getOrElse(Nil)
    val streams = streamRefs.map(_.name)
    if (streams.isEmpty) throw KinesisErrors.missingOption(StreamName, "a Kinesis stream name, or a comma-separated list")
    if (streams.distinct.size != streams.size) {
      throw KinesisErrors.invalidOption(StreamName, get(StreamName).get, "each stream listed once (by name or ARN)")
    }
    val arnRegions = streamRefs.flatMap(_.arn).map(_.region).distinct

    val connection = ConnectionOptions.parse(get, arnRegions.headOption)
    val region = connection.region

    // One client per query serves every stream, so every ARN must name the region the query connects to.
    (arnRegions.filter(_ != region) ++ arnRegions.drop(1)).headOption.foreach { _ =>
      throw KinesisErrors.invalidOption(StreamName, get(StreamName).get,
        s"stream ARNs in the region the query connects to ($region), like the option 'region'")
    }

    KinesisSourceOptions(
      streams = streams,
      connection = connection.copy(streamArns = streamRefs.flatMap(r => r.arn.map(a => r.name -> a.arn)).toMap),
      initialPosition = get(KinesisOptionKeys.InitialPosition).map(io.kinesisspark.InitialPosition.parse(_, streams))
        .getOrElse(io.kinesisspark.InitialPosition.Latest),
      maxRecordsPerFetch = get(MaxRecordsPerFetch).map(parseInt(MaxRecordsPerFetch, _, 1, MaxRecordsPerFetchLimit))
        .getOrElse(DefaultMaxRecordsPerFetch),
      failOnDataLoss = get(FailOnDataLoss).map(parseBoolean(FailOnDataLoss, _)).getOrElse(true),
      maxFetchRateBytesPerSec = MiB * get(MaxFetchRate).map(parseDouble(MaxFetchRate, _, 0.0, MaxFetchRateMBs))
        .getOrElse(DefaultMaxFetchRateMBs),
      minFetchPeriodMs = get(MinFetchPeriod).map(parseDuration(MinFetchPeriod, _, MinFetchPeriodMs))
        .getOrElse(FetchLimits.DefaultMinFetchPeriodMs),
      maxFetchDurationMs = get(MaxFetchDuration).map(parseDuration(MaxFetchDuration, _, 1L))
        .getOrElse(FetchLimits.DefaultMaxRoundMillis),
      fetchBufferSizeBytes = get(FetchBufferSize).map(parseBytes(FetchBufferSize, _)).getOrElse(DefaultFetchBufferSizeBytes),
      shardsPerTask = get(ShardsPerTask).map(parseInt(ShardsPerTask, _, 1, Int.MaxValue)).getOrElse(DefaultShardsPerTask),
      shardFetchIntervalMs = get(ShardFetchInterval).map(parseDuration(ShardFetchInterval, _, 1L))
        .getOrElse(DefaultShardFetchIntervalMs),
      coalesceThresholdBlockSize = get(CoalesceThresholdBlockSize)
        .map(parseLong(CoalesceThresholdBlockSize, _, 1L, Long.MaxValue)).getOrElse(DefaultCoalesceThresholdBlockSize),
      coalesceBinSize = get(CoalesceBinSize).map(parseLong(CoalesceBinSize, _, 1L, Long.MaxValue))
        .getOrElse(DefaultCoalesceBinSize),
      maxShardsPerDescribe = get(MaxShardsPerDescribe)
        .map(parseInt(MaxShardsPerDescribe, _, 1, MaxShardsPerDescribeLimit)).getOrElse(DefaultMaxShardsPerDescribe),
      maxRecordsPerTrigger = get(MaxRecordsPerTrigger).map(parseLong(MaxRecordsPerTrigger, _, 1L, Long.MaxValue)),
      maxBytesPerTrigger = get(MaxBytesPerTrigger).map(parseBytes(MaxBytesPerTrigger, _)),
      allowStreamRemoval = get(AllowStreamRemoval).exists(parseBoolean(AllowStreamRemoval, _)),
      efo = EfoOptions.parse(get, streams),
      recordSchema = KinesisRecordSchema(RecordLayout.Databricks,
        subSequenceNumber = get(IncludeSubSequenceNumber).exists(parseBoolean(IncludeSubSequenceNumber, _))))
  }
}
