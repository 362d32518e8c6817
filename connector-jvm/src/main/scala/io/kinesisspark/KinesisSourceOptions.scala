package io.kinesisspark

import java.util.Locale

import scala.util.Try

import org.apache.spark.network.util.JavaUtils

import io.kinesisspark.aws.{AwsConnection, ConnectionOptions}
import io.kinesisspark.efo.EfoOptions
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

  // Defaults: those of the Databricks connector.
  val DefaultMaxRecordsPerFetch = 10000
  val DefaultMinFetchPeriodMs = 400L
  val DefaultMaxFetchDurationMs = 10000L
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

    val streamRefs = get(StreamName).map(v => parseStreams(v)).getOrElse(Nil)
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
        .getOrElse(DefaultMinFetchPeriodMs),
      maxFetchDurationMs = get(MaxFetchDuration).map(parseDuration(MaxFetchDuration, _, 1L))
        .getOrElse(DefaultMaxFetchDurationMs),
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

  private val StreamNamePattern = "[a-zA-Z0-9_.-]{1,128}".r
  private val StreamArnPattern = "arn:(aws[a-z-]*):kinesis:([a-z]{2}(?:-[a-z]+)+-[0-9]+):([0-9]{12}):stream/([a-zA-Z0-9_.-]{1,128})".r

  private[kinesisspark] final case class StreamArn(arn: String, region: String)
  private[kinesisspark] final case class StreamRef(name: String, arn: Option[StreamArn])

  /** Whether `name` is a valid Kinesis stream name (not an ARN). */
  private[kinesisspark] def isStreamName(name: String): Boolean = StreamNamePattern.pattern.matcher(name).matches()

  /** A comma-separated list of stream names and stream ARNs. */
  private[kinesisspark] def parseStreams(value: String): Seq[StreamRef] =
    value.split(",").map(_.trim).toSeq.map {
      case arn @ StreamArnPattern(_, region, _, name) => StreamRef(name, Some(StreamArn(arn, region)))
      case name if StreamNamePattern.pattern.matcher(name).matches() => StreamRef(name, None)
      case _ => throw KinesisErrors.invalidOption(StreamName, value,
        "comma-separated stream names (1-128 characters from a-z, A-Z, 0-9, '_', '-' and '.') or stream ARNs " +
          "('arn:aws:kinesis:<region>:<account>:stream/<name>')")
    }
  private[kinesisspark] def parseInt(option: String, value: String, min: Int, max: Int): Int =
    parseLong(option, value, min.toLong, max.toLong).toInt

  private[kinesisspark] def parseLong(option: String, value: String, min: Long, max: Long): Long = {
    val accepted = if (max == Long.MaxValue || max == Int.MaxValue) s"an integer of at least $min" else s"an integer from $min to $max"
    val n = Try(value.trim.replace(",", "").replace("_", "").toLong)
      .getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (n < min || n > max) throw KinesisErrors.invalidOption(option, value, accepted)
    n
  }

  /** A decimal in (`exclusiveMin`, `max`]. */
  private def parseDouble(option: String, value: String, exclusiveMin: Double, max: Double): Double = {
    val accepted = s"a decimal number greater than $exclusiveMin and at most $max"
    val n = Try(value.trim.toDouble).filter(d => !d.isNaN).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (n <= exclusiveMin || n > max) throw KinesisErrors.invalidOption(option, value, accepted)
    n
  }

  /** A duration string as Spark accepts it ("210ms", "1s", "2m", "1h"); a bare number means milliseconds. */
  private[kinesisspark] def parseDuration(option: String, value: String, minMs: Long): Long = {
    val accepted = s"a duration such as '${math.max(minMs, 1)}ms', '1s' or '2m', of at least ${minMs}ms"
    val ms = Try(JavaUtils.timeStringAsMs(value.trim)).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (ms < minMs) throw KinesisErrors.invalidOption(option, value, accepted)
    ms
  }

  /** A byte size as Spark accepts it ("10mb", "2gb", "512k"); a bare number means bytes. */
  private[kinesisspark] def parseBytes(option: String, value: String): Long = {
    val accepted = "a positive byte size such as '10mb' or '2gb'"
    val bytes = Try(JavaUtils.byteStringAsBytes(value.trim)).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (bytes <= 0) throw KinesisErrors.invalidOption(option, value, accepted)
    bytes
  }

  private[kinesisspark] def parseBoolean(option: String, value: String): Boolean =
    value.trim.toLowerCase(Locale.ROOT) match {
      case "true"  => true
      case "false" => false
      case _       => throw KinesisErrors.invalidOption(option, value, "'true' or 'false'")
    }
}
