package io.kinesisspark.sink

import java.util.Locale

import io.kinesisspark.KinesisErrors
import io.kinesisspark.{KinesisOptionKeys => Keys}
import io.kinesisspark.aws.{AwsConnection, ConnectionOptions}
import io.kinesisspark.options.{OptionValues, StreamNames}

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
   * @param options user options (awslabs names already translated); keys are matched case-insensitively
   * @param flavour `format("kinesis")`'s, or `format("aws-kinesis")`'s (aggregating by default)
   */
  def parse(options: Map[String, String], flavour: SinkFlavour = SinkFlavour.Kinesis): KinesisSinkOptions = {
    val opts = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    def get(key: String): Option[String] = opts.get(key.toLowerCase(Locale.ROOT)).filter(_ != null)

    val streamRef = get(Keys.StreamName).map { value =>
      StreamNames.parse(value) match {
        case Seq(one) => one
        case _ => throw KinesisErrors.invalidOption(Keys.StreamName, value, "one stream name or stream ARN (the sink " +
          "writes each row to one stream: route rows to several with a 'streamName' column)")
      }
    }
    val connection = ConnectionOptions.parse(get, streamRef.flatMap(_.arn).map(_.region))
    streamRef.flatMap(_.arn).filter(_.region != connection.region).foreach { _ =>
      throw KinesisErrors.invalidOption(Keys.StreamName, get(Keys.StreamName).get,
        s"a stream ARN in the region the sink connects to (${connection.region}), like the option 'region'")
    }
    val aggregation = get(Keys.Aggregation).map(OptionValues.parseBoolean(Keys.Aggregation, _)).getOrElse(flavour.defaultAggregation)
    KinesisSinkOptions(
      stream = streamRef.map(_.name),
      connection = connection.copy(streamArns = streamRef.flatMap(r => r.arn.map(a => r.name -> a.arn)).toMap),
      partitionKeyFallback = get(Keys.PartitionKeyFallback).map(parseFallback).getOrElse(PartitionKeyFallback.Fail),
      maxInflightRequests = get(Keys.MaxInflightRequests)
        .map(OptionValues.parseInt(Keys.MaxInflightRequests, _, 1, MaxInflightRequestsLimit))
        .getOrElse(DefaultMaxInflightRequests),
      maxPutRetries = get(Keys.MaxPutRetries).map(OptionValues.parseInt(Keys.MaxPutRetries, _, 0, 1000))
        .getOrElse(DefaultMaxPutRetries),
      aggregation = aggregation,
      aggregationMaxBytes = get(Keys.AggregationMaxBytes)
        .map(OptionValues.parseInt(Keys.AggregationMaxBytes, _, MinAggregationMaxBytes, PutRecordsLimits.MaxRecordBytes))
        .getOrElse(DefaultAggregationMaxBytes),
      preserveKeyOrder = get(Keys.PreserveKeyOrder).exists(OptionValues.parseBoolean(Keys.PreserveKeyOrder, _)),
      streamNameColumn = flavour.routesByStreamNameColumn,
      pacing = parsePacing(get))
  }

  private def parsePacing(get: String => Option[String]): Option[ShardWriteLimits] = {
    val records = get(Keys.MaxRecordsPerShardPerSecond)
      .map(OptionValues.parseInt(Keys.MaxRecordsPerShardPerSecond, _, 1, MaxShardRecordsPerSecond))
    val bytes = get(Keys.MaxBytesPerShardPerSecond).map { value =>
      val n = OptionValues.parseBytes(Keys.MaxBytesPerShardPerSecond, value)
      // A paced shard must take its largest record (1 MiB with its key) within a few seconds.
      if (n < MinAggregationMaxBytes) throw KinesisErrors.invalidOption(Keys.MaxBytesPerShardPerSecond, value,
        s"a byte size of at least $MinAggregationMaxBytes bytes such as '1mb' or '524288'")
      n
    }
    val on = get(Keys.Pacing).forall(OptionValues.parseBoolean(Keys.Pacing, _))
    if (!on) {
      records.map(_ => Keys.MaxRecordsPerShardPerSecond).orElse(bytes.map(_ => Keys.MaxBytesPerShardPerSecond))
        .foreach { option =>
          throw KinesisErrors.invalidOption(Keys.Pacing, get(Keys.Pacing).get,
            s"'true' when '$option' is set (the limits are what pacing keeps each shard to)")
        }
      None
    } else Some(ShardWriteLimits(records.getOrElse(ShardWriteLimits.KinesisRecordsPerSecond),
      bytes.getOrElse(ShardWriteLimits.KinesisBytesPerSecond)))
  }

  private def parseFallback(value: String): PartitionKeyFallback = value.trim.toLowerCase(Locale.ROOT) match {
    case "fail"   => PartitionKeyFallback.Fail
    case "random" => PartitionKeyFallback.Random
    case _ => throw KinesisErrors.invalidOption(Keys.PartitionKeyFallback, value,
      "'fail' (a row without a partition key fails the write) or 'random' (such rows get a random key)")
  }
}
