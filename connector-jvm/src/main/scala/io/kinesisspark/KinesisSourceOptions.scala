package io.kinesisspark

import java.util.Locale

import io.kinesisspark.aws.{AwsConnection, ConnectionOptions}
import io.kinesisspark.efo.EfoOptions
import io.kinesisspark.options.{OptionSpec, StreamNames}
import io.kinesisspark.reader.FetchLimits
import io.kinesisspark.switching.{AwslabsCheckpointOptions, DynamoDbConnectionOptions, KclLeaseTableOptions}

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
 * @param kclLeaseTable the KCL application's lease table the first start continues from, when one is named; then
 *                      `initialPosition` is where the shards the application never saw start
 * @param awslabsCheckpoint the awslabs connector query's checkpoint the first start continues from, when one is
 *                          named; then `initialPosition` is where the shards that query never saw start
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
    kclLeaseTable: Option[KclLeaseTableOptions] = None,
    awslabsCheckpoint: Option[AwslabsCheckpointOptions] = None,
    recordSchema: KinesisRecordSchema = KinesisRecordSchema.Databricks,
    realTimeTasks: Option[Int] = None,
    givenOptions: Set[String] = Set.empty) {

  /** Whether the user set `option` (any case), rather than leaving it to its default. */
  def isGiven(option: String): Boolean = givenOptions.contains(option.toLowerCase(Locale.ROOT))

  /** What one shard's reader may do, from these options. */
  def fetchLimits: FetchLimits = FetchLimits(
    maxRecordsPerFetch = maxRecordsPerTrigger.fold(maxRecordsPerFetch)(t => math.min(t, maxRecordsPerFetch.toLong).toInt),
    minFetchPeriodMs = minFetchPeriodMs,
    maxRoundMillis = maxFetchDurationMs,
    maxFetchRateBytesPerSec = maxFetchRateBytesPerSec)

  /**
   * What one shard's reader in a real-time task may do: catch up a backlog at once, and follow a shard that is being
   * written to at about Kinesis's call rate (a call every 210 ms while responses bring records or a lag,
   * `minFetchPeriod` after an empty one). A `minFetchPeriod` the user set holds after every call instead, as in
   * micro-batch: the way to leave calls to another polling consumer of the stream.
   */
  def realTimeFetchLimits: FetchLimits =
    if (isGiven(KinesisOptionKeys.MinFetchPeriod)) fetchLimits
    else fetchLimits.copy(catchUpAtOnce = true,
      afterRecordsPeriodMs = Some(KinesisSourceOptions.RealTimeAfterRecordsPeriodMs))
}

object KinesisSourceOptions {
  import KinesisOptionKeys._

  /** Kinesis' "MB" in its limits is 2^20 bytes. */
  val MiB: Double = 1024 * 1024
  /** Kinesis serves each shard at most 2 MB/s. */
  val MaxFetchRateMBs = 2.0
  /** Kinesis allows 5 GetRecords calls per second per shard. */
  val MinFetchPeriodMs = 200L
  /**
   * A real-time reader's period after a call that brought records: 5 calls a second per shard (GetRecords's quota,
   * https://docs.aws.amazon.com/kinesis/latest/APIReference/API_GetRecords.html), with 10 ms to spare for calls that
   * reach Kinesis closer together than they left (the Databricks guide's low-latency setting is 210 ms too).
   */
  val RealTimeAfterRecordsPeriodMs = 210L
  /** ListShards pages hold at most 10,000 shards. */
  val MaxShardsPerDescribeLimit = 10000
  /** GetRecords returns at most 10,000 records per call. */
  val MaxRecordsPerFetchLimit = 10000

  /**
   * The source's own options, with their defaults: those of the Databricks connector (minFetchPeriod's and
   * maxFetchDuration's are FetchLimits'), except `maxShardsPerDescribe`'s. The connection's are
   * [[ConnectionOptions.Spec]], enhanced fan-out's [[EfoOptions.Spec]].
   */
  object Spec {
    import io.kinesisspark.options.OptionKind._

    val streamName: OptionSpec[String] = OptionSpec(StreamName, Text(StreamNames.Accepted))
    val initialPosition: OptionSpec[String] =
      OptionSpec(KinesisOptionKeys.InitialPosition, Text(io.kinesisspark.InitialPosition.Accepted), Some("latest"))
    val maxRecordsPerFetch: OptionSpec[Long] =
      OptionSpec(MaxRecordsPerFetch, Integer(1, MaxRecordsPerFetchLimit), Some(10000L))
    val failOnDataLoss: OptionSpec[Boolean] = OptionSpec(FailOnDataLoss, Flag, Some(true))
    val maxFetchRate: OptionSpec[Double] = OptionSpec(MaxFetchRate, Decimal(0.0, MaxFetchRateMBs), Some(1.0))
    val minFetchPeriod: OptionSpec[Long] =
      OptionSpec(MinFetchPeriod, Duration(MinFetchPeriodMs), Some(FetchLimits.DefaultMinFetchPeriodMs))
    val maxFetchDuration: OptionSpec[Long] =
      OptionSpec(MaxFetchDuration, Duration(1L), Some(FetchLimits.DefaultMaxRoundMillis))
    val fetchBufferSize: OptionSpec[Long] = OptionSpec(FetchBufferSize, ByteSize(), Some(20L << 30))
    val shardsPerTask: OptionSpec[Long] = OptionSpec(ShardsPerTask, Integer(1, Int.MaxValue), Some(5L))
    val shardFetchInterval: OptionSpec[Long] = OptionSpec(ShardFetchInterval, Duration(1L), Some(1000L))
    val coalesceThresholdBlockSize: OptionSpec[Long] =
      OptionSpec(CoalesceThresholdBlockSize, Integer(1, Long.MaxValue), Some(10000000L))
    val coalesceBinSize: OptionSpec[Long] = OptionSpec(CoalesceBinSize, Integer(1, Long.MaxValue), Some(128000000L))
    // Databricks lists 100 shards per page; 1,000 lists a stream of thousands of shards in a few calls (ListShards
    // takes up to 10,000), well within its quota of 1,000 calls per second per stream.
    val maxShardsPerDescribe: OptionSpec[Long] =
      OptionSpec(MaxShardsPerDescribe, Integer(1, MaxShardsPerDescribeLimit), Some(1000L))
    val maxRecordsPerTrigger: OptionSpec[Long] = OptionSpec(MaxRecordsPerTrigger, Integer(1, Long.MaxValue))
    val maxBytesPerTrigger: OptionSpec[Long] = OptionSpec(MaxBytesPerTrigger, ByteSize())
    val allowStreamRemoval: OptionSpec[Boolean] = OptionSpec(AllowStreamRemoval, Flag, Some(false))
    val includeSubSequenceNumber: OptionSpec[Boolean] = OptionSpec(IncludeSubSequenceNumber, Flag, Some(false))
    val realTimeTasks: OptionSpec[Long] = OptionSpec(RealTimeTasks, Integer(1, Int.MaxValue))

    val all: Seq[OptionSpec[_]] = Seq(streamName, initialPosition, maxRecordsPerFetch, failOnDataLoss, maxFetchRate,
      minFetchPeriod, maxFetchDuration, fetchBufferSize, shardsPerTask, shardFetchInterval, coalesceThresholdBlockSize,
      coalesceBinSize, maxShardsPerDescribe, maxRecordsPerTrigger, maxBytesPerTrigger, allowStreamRemoval,
      includeSubSequenceNumber, realTimeTasks)
  }

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

    val initialPosition = io.kinesisspark.InitialPosition.parse(Spec.initialPosition.valueOrDefault(get), streams)
    // The lease table's name, then the awslabs options, then DynamoDB's connection, as the Python package orders
    // them. (Python checks DynamoDB's own region, endpoint and role when they are set; here they are read only with
    // a table, so a bad one beside another error may be named second.)
    KclLeaseTableOptions.table(get)
    val awslabsCheckpoint = AwslabsCheckpointOptions.parse(get, connection)
    val kclLeaseTable = KclLeaseTableOptions.parse(get, connection)
    DynamoDbConnectionOptions.checkUsed(get)
    if (kclLeaseTable.isDefined && awslabsCheckpoint.isDefined) {
      throw KinesisErrors.conflictingOptions(KclLeaseTable, AwslabsCheckpointLocation)
    }
    Seq(kclLeaseTable.map(_ => KclLeaseTable), awslabsCheckpoint.map(_ => AwslabsCheckpointLocation)).flatten
      .foreach { from =>
        // The old consumer's positions give each shard its start; per-shard positions beside them would say two things.
        if (initialPosition.isInstanceOf[io.kinesisspark.InitialPosition.PerShard]) {
          throw KinesisErrors.conflictingOptions(from, KinesisOptionKeys.InitialPosition)
        }
        if (streams.size > 1 && from == AwslabsCheckpointLocation) {
          // An awslabs query reads one stream; its checkpoint says where in that one.
          throw KinesisErrors.invalidOption(StreamName, get(StreamName).get,
            s"one stream with '$AwslabsCheckpointLocation' (an awslabs connector query reads one stream)")
        }
      }
    KinesisSourceOptions(
      streams = streams,
      connection = connection.copy(streamArns = streamRefs.flatMap(r => r.arn.map(a => r.name -> a.arn)).toMap),
      initialPosition = initialPosition,
      maxRecordsPerFetch = Spec.maxRecordsPerFetch.valueOrDefault(get).toInt,
      failOnDataLoss = Spec.failOnDataLoss.valueOrDefault(get),
      maxFetchRateBytesPerSec = MiB * Spec.maxFetchRate.valueOrDefault(get),
      minFetchPeriodMs = Spec.minFetchPeriod.valueOrDefault(get),
      maxFetchDurationMs = Spec.maxFetchDuration.valueOrDefault(get),
      fetchBufferSizeBytes = Spec.fetchBufferSize.valueOrDefault(get),
      shardsPerTask = Spec.shardsPerTask.valueOrDefault(get).toInt,
      shardFetchIntervalMs = Spec.shardFetchInterval.valueOrDefault(get),
      coalesceThresholdBlockSize = Spec.coalesceThresholdBlockSize.valueOrDefault(get),
      coalesceBinSize = Spec.coalesceBinSize.valueOrDefault(get),
      maxShardsPerDescribe = Spec.maxShardsPerDescribe.valueOrDefault(get).toInt,
      maxRecordsPerTrigger = Spec.maxRecordsPerTrigger.read(get),
      maxBytesPerTrigger = Spec.maxBytesPerTrigger.read(get),
      allowStreamRemoval = Spec.allowStreamRemoval.valueOrDefault(get),
      efo = EfoOptions.parse(get, streams),
      kclLeaseTable = kclLeaseTable,
      awslabsCheckpoint = awslabsCheckpoint,
      recordSchema = KinesisRecordSchema(RecordLayout.Databricks,
        subSequenceNumber = Spec.includeSubSequenceNumber.valueOrDefault(get)),
      realTimeTasks = Spec.realTimeTasks.read(get).map(_.toInt),
      givenOptions = opts.keySet)
  }
}
