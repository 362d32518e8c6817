package io.kinesisspark.sink

import java.util.Locale

import io.kinesisspark.KinesisErrors
import io.kinesisspark.{KinesisOptionKeys => Keys}
import io.kinesisspark.aws.{AwsConnection, ConnectionOptions}
import io.kinesisspark.options.{OptionSpec, StreamNames}

/**
 * The sink's options, parsed once and validated when the write is set up (`start()` / `save()`), so a bad option
 * fails before any row is written. Connection and credential options are the source's ([[ConnectionOptions]]).
 *
 * {{{
 *   val opts = KinesisSinkOptions.parse(Map("streamName" -> "clicks", "region" -> "us-east-1", "aggregation" -> "true"))
 *   opts.stream               // Some("clicks")
 *   opts.maxInflightRequests  // 4
 * }}}
 *
 * @param stream              where rows without a `streamName` column value go; `None` when every row names its own
 * @param aggregationMaxBytes the largest KPL aggregate, counting its partition key
 * @param streamNameColumn    whether a `streamName` column routes rows (see [[SinkFlavour]])
 * @param pacing              each shard's writes paced to `shardLimits` ([[ShardWritePacer]]); `None`: unpaced
 */
final case class KinesisSinkOptions(
    stream: Option[String],
    connection: AwsConnection,
    partitionKeyFallback: PartitionKeyFallback,
    maxInflightRequests: Int,
    maxPutRetries: Int,
    aggregation: Boolean,
    aggregationMaxBytes: Int,
    preserveKeyOrder: Boolean,
    streamNameColumn: Boolean = true,
    pacing: Option[ShardWriteLimits] = Some(ShardWriteLimits())) {

  /**
   * What a writer task's KPL aggregates are filled to ([[AggregateFill]], one per task: it watches the task's rows):
   * paced, sized to carry the most rows through a shard's second; unpaced, or under `preserveKeyOrder` (a shard then
   * has one aggregate in flight at a time, at most one per paced call, about 20 a second, so smaller ones would
   * carry less), `aggregationMaxBytes`.
   */
  def aggregateFill(): AggregateFill = pacing.filter(_ => !preserveKeyOrder)
    .fold(AggregateFill.fixed(aggregationMaxBytes))(AggregateFill.paced(_, aggregationMaxBytes))
}

/** What the sink does with a row that has no partition key (no `partitionKey` column, or a null in it). */
sealed trait PartitionKeyFallback

object PartitionKeyFallback {
  /** The write fails, naming the row (the default: a missing key is usually a mistake). */
  case object Fail extends PartitionKeyFallback
  /** A random key, so such rows spread evenly over the shards. */
  case object Random extends PartitionKeyFallback
}

object KinesisSinkOptions {
  val DefaultMaxInflightRequests = 4
  /** More concurrent calls per task only add contention: each shard takes 1,000 records/s. */
  val MaxInflightRequestsLimit = 64
  val DefaultMaxPutRetries = 20
  /** The KPL's default AggregationMaxSize. */
  val DefaultAggregationMaxBytes = 51200
  /** Small enough that a few rows fit; anything smaller defeats aggregating. */
  val MinAggregationMaxBytes = 1024
  /** Limits above Kinesis's are accepted for Kinesis-compatible services with other quotas. */
  val MaxShardRecordsPerSecond = 1000000

  /**
   * The sink's own options, with their defaults (`aggregation`'s is the format's: see [[SinkFlavour]]); the
   * connection's are [[ConnectionOptions.Spec]].
   */
  object Spec {
    import io.kinesisspark.options.OptionKind._

    val streamName: OptionSpec[String] = OptionSpec(Keys.StreamName, Text(OneStreamAccepted))
    val partitionKeyFallback: OptionSpec[String] = OptionSpec(Keys.PartitionKeyFallback, Choice(Seq("fail", "random"),
      "'fail' (a row without a partition key fails the write) or 'random' (such rows get a random key)"), Some("fail"))
    val maxInflightRequests: OptionSpec[Long] =
      OptionSpec(Keys.MaxInflightRequests, Integer(1, MaxInflightRequestsLimit), Some(DefaultMaxInflightRequests.toLong))
    val maxPutRetries: OptionSpec[Long] =
      OptionSpec(Keys.MaxPutRetries, Integer(0, 1000), Some(DefaultMaxPutRetries.toLong))
    val aggregation: OptionSpec[Boolean] = OptionSpec(Keys.Aggregation, Flag)
    val aggregationMaxBytes: OptionSpec[Long] = OptionSpec(Keys.AggregationMaxBytes,
      Integer(MinAggregationMaxBytes, PutRecordsLimits.MaxRecordBytes), Some(DefaultAggregationMaxBytes.toLong))
    val preserveKeyOrder: OptionSpec[Boolean] = OptionSpec(Keys.PreserveKeyOrder, Flag, Some(false))
    val pacing: OptionSpec[Boolean] = OptionSpec(Keys.Pacing, Flag, Some(true))
    val maxRecordsPerShardPerSecond: OptionSpec[Long] = OptionSpec(Keys.MaxRecordsPerShardPerSecond,
      Integer(1, MaxShardRecordsPerSecond), Some(ShardWriteLimits.KinesisRecordsPerSecond.toLong))
    // A paced shard must take its largest record (1 MiB with its key) within a few seconds.
    val maxBytesPerShardPerSecond: OptionSpec[Long] = OptionSpec(Keys.MaxBytesPerShardPerSecond,
      ByteSize(Some(MinAggregationMaxBytes.toLong ->
        s"a byte size of at least $MinAggregationMaxBytes bytes such as '1mb' or '524288'")),
      Some(ShardWriteLimits.KinesisBytesPerSecond.toLong))

    val all: Seq[OptionSpec[_]] = Seq(streamName, partitionKeyFallback, maxInflightRequests, maxPutRetries,
      aggregation, aggregationMaxBytes, preserveKeyOrder, pacing, maxRecordsPerShardPerSecond,
      maxBytesPerShardPerSecond)
  }

  private val OneStreamAccepted = "one stream name or stream ARN (the sink writes each row to one stream: route rows " +
    "to several with a 'streamName' column)"

  /**
   * @param options user options (awslabs names already translated); keys are matched case-insensitively
   * @param flavour `format("kinesis")`'s, or `format("aws-kinesis")`'s (aggregating by default)
   */
  def parse(options: Map[String, String], flavour: SinkFlavour = SinkFlavour.Kinesis): KinesisSinkOptions = {
    val opts = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    def get(key: String): Option[String] = opts.get(key.toLowerCase(Locale.ROOT)).filter(_ != null)

    val streamRef = get(Keys.StreamName).map { value =>
      StreamNames.parse(value) match {
        case Seq(one) => one
        case _ => throw KinesisErrors.invalidOption(Keys.StreamName, value, OneStreamAccepted)
      }
    }
    val connection = ConnectionOptions.parse(get, streamRef.flatMap(_.arn).map(_.region))
    streamRef.flatMap(_.arn).filter(_.region != connection.region).foreach { _ =>
      throw KinesisErrors.invalidOption(Keys.StreamName, get(Keys.StreamName).get,
        s"a stream ARN in the region the sink connects to (${connection.region}), like the option 'region'")
    }
    val aggregation = Spec.aggregation.read(get).getOrElse(flavour.defaultAggregation)
    KinesisSinkOptions(
      stream = streamRef.map(_.name),
      connection = connection.copy(streamArns = streamRef.flatMap(r => r.arn.map(a => r.name -> a.arn)).toMap),
      partitionKeyFallback = Spec.partitionKeyFallback.valueOrDefault(get) match {
        case "random" => PartitionKeyFallback.Random
        case _        => PartitionKeyFallback.Fail
      },
      maxInflightRequests = Spec.maxInflightRequests.valueOrDefault(get).toInt,
      maxPutRetries = Spec.maxPutRetries.valueOrDefault(get).toInt,
      aggregation = aggregation,
      aggregationMaxBytes = Spec.aggregationMaxBytes.valueOrDefault(get).toInt,
      preserveKeyOrder = Spec.preserveKeyOrder.valueOrDefault(get),
      streamNameColumn = flavour.routesByStreamNameColumn,
      pacing = parsePacing(get))
  }

  private def parsePacing(get: String => Option[String]): Option[ShardWriteLimits] = {
    val records = Spec.maxRecordsPerShardPerSecond.read(get)
    val bytes = Spec.maxBytesPerShardPerSecond.read(get)
    val on = Spec.pacing.valueOrDefault(get)
    if (!on) {
      records.map(_ => Keys.MaxRecordsPerShardPerSecond).orElse(bytes.map(_ => Keys.MaxBytesPerShardPerSecond))
        .foreach { option =>
          throw KinesisErrors.invalidOption(Keys.Pacing, get(Keys.Pacing).get,
            s"'true' when '$option' is set (the limits are what pacing keeps each shard to)")
        }
      None
    } else Some(ShardWriteLimits(Spec.maxRecordsPerShardPerSecond.orDefault(records).toInt,
      Spec.maxBytesPerShardPerSecond.orDefault(bytes)))
  }
}
