package io.kinesisspark

import java.net.URI
import java.util.Locale

import scala.util.Try

import org.apache.spark.network.util.JavaUtils

import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig}
import io.kinesisspark.fetch.FetchLimits
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain

/**
 * The source's options, parsed once and validated when the table is created, so a bad option fails at
 * `load()`, before any query runs.
 *
 * {{{
 *   val opts = KinesisSourceOptions.parse(Map(
 *     "streamName" -> "clicks", "region" -> "us-east-1", "initialPosition" -> "trim_horizon"))
 *   opts.streams            // Seq("clicks")
 *   opts.maxRecordsPerFetch // 10000
 * }}}
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
    maxBytesPerTrigger: Option[Long]) {

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
  val DefaultMaxShardsPerDescribe = 100

  /** @param options user options; keys are matched case-insensitively. */
  def parse(options: Map[String, String]): KinesisSourceOptions = {
    val opts = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    def get(key: String): Option[String] = opts.get(key.toLowerCase(Locale.ROOT)).filter(_ != null)

    NotYetSupported.find(k => get(k).isDefined).foreach { k =>
      throw new IllegalArgumentException(s"Option '$k' is not supported by this version of kinesis-spark yet; " +
        "remove it (see the README's option table for what is supported).")
    }
    get(ConsumerMode).foreach { mode =>
      if (!mode.trim.equalsIgnoreCase("polling")) {
        throw KinesisErrors.invalidOption(ConsumerMode, mode, "'polling' (enhanced fan-out, 'efo', is not supported by " +
          "this version yet)")
      }
    }
    val streams = get(StreamName).map(_.split(",").map(_.trim).toSeq).getOrElse(Nil)
    if (streams.isEmpty) throw KinesisErrors.missingOption(StreamName, "a Kinesis stream name, or a comma-separated list")
    streams.foreach { s =>
      if (!StreamNamePattern.matches(s)) {
        throw KinesisErrors.invalidOption(StreamName, get(StreamName).get,
          "comma-separated stream names of 1-128 characters from a-z, A-Z, 0-9, '_', '-' and '.'")
      }
    }
    if (streams.distinct.size != streams.size) {
      throw KinesisErrors.invalidOption(StreamName, get(StreamName).get, "each stream listed once")
    }

    val endpoint = get(Endpoint).map(parseEndpoint)
    val region = get(Region).map(parseRegion)
      .orElse(endpoint.flatMap(regionFromEndpoint))
      .orElse(Try(new DefaultAwsRegionProviderChain().getRegion.id()).toOption)
      .getOrElse(throw KinesisErrors.regionUnresolved())

    val credentials = (get(AwsAccessKey), get(AwsSecretKey)) match {
      case (Some(a), Some(s)) => AwsCredentialsConfig.StaticKeys(a, s)
      case (Some(_), None)    => throw KinesisErrors.optionRequiresOther(AwsAccessKey, AwsSecretKey)
      case (None, Some(_))    => throw KinesisErrors.optionRequiresOther(AwsSecretKey, AwsAccessKey)
      case (None, None)       => AwsCredentialsConfig.DefaultChain
    }

    KinesisSourceOptions(
      streams = streams,
      connection = AwsConnection(region, endpoint, credentials),
      initialPosition = get(KinesisOptionKeys.InitialPosition).map(io.kinesisspark.InitialPosition.parse)
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
      maxBytesPerTrigger = get(MaxBytesPerTrigger).map(parseBytes(MaxBytesPerTrigger, _)))
  }

  private val StreamNamePattern = "[a-zA-Z0-9_.-]{1,128}".r
  private val RegionPattern = "[a-z]{2}(-[a-z]+)+-[0-9]+".r
  private val EndpointRegion = """(?:[a-z0-9-]+\.)*kinesis(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-[0-9]+)\.amazonaws\.com(?:\.cn)?""".r

  private def parseRegion(value: String): String = {
    val v = value.trim
    if (!RegionPattern.matches(v)) throw KinesisErrors.invalidOption(Region, value, "an AWS region name such as 'us-east-1'")
    v
  }

  private def parseEndpoint(value: String): URI = {
    val accepted = "an http:// or https:// URL such as 'https://kinesis.us-east-1.amazonaws.com'"
    val uri = Try(new URI(value.trim)).getOrElse(throw KinesisErrors.invalidOption(Endpoint, value, accepted))
    if (!Set("http", "https").contains(Option(uri.getScheme).map(_.toLowerCase(Locale.ROOT)).orNull) || uri.getHost == null) {
      throw KinesisErrors.invalidOption(Endpoint, value, accepted)
    }
    uri
  }

  private def regionFromEndpoint(uri: URI): Option[String] = uri.getHost match {
    case EndpointRegion(region) => Some(region)
    case _                      => None
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
  private def parseDuration(option: String, value: String, minMs: Long): Long = {
    val accepted = s"a duration such as '${math.max(minMs, 1)}ms', '1s' or '2m', of at least ${minMs}ms"
    val ms = Try(JavaUtils.timeStringAsMs(value.trim)).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (ms < minMs) throw KinesisErrors.invalidOption(option, value, accepted)
    ms
  }

  /** A byte size as Spark accepts it ("10mb", "2gb", "512k"); a bare number means bytes. */
  private def parseBytes(option: String, value: String): Long = {
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
