package io.kinesisspark

/** Option names, as users write them (matching is case-insensitive). Names follow the Databricks connector. */
object KinesisOptionKeys {
  val StreamName = "streamName"
  val Region = "region"
  val Endpoint = "endpoint"
  val InitialPosition = "initialPosition"
  val AwsAccessKey = "awsAccessKey"
  val AwsSecretKey = "awsSecretKey"
  val MaxRecordsPerFetch = "maxRecordsPerFetch"
  val FailOnDataLoss = "failOnDataLoss"
  val MaxFetchRate = "maxFetchRate"
  val MinFetchPeriod = "minFetchPeriod"
  val MaxFetchDuration = "maxFetchDuration"
  val FetchBufferSize = "fetchBufferSize"
  val ShardsPerTask = "shardsPerTask"
  val ShardFetchInterval = "shardFetchInterval"
  val CoalesceThresholdBlockSize = "coalesceThresholdBlockSize"
  val CoalesceBinSize = "coalesceBinSize"
  val MaxShardsPerDescribe = "maxShardsPerDescribe"
  val MaxRecordsPerTrigger = "maxRecordsPerTrigger"
  val MaxBytesPerTrigger = "maxBytesPerTrigger"

  val ConsumerMode = "consumerMode"

  /**
   * Databricks options for features this version does not have yet. Setting one is refused: silently ignoring,
   * say, `roleArn` would run the query with other credentials than the user asked for.
   */
  val NotYetSupported: Seq[String] = Seq("roleArn", "roleExternalId", "roleSessionName", "consumerName",
    "consumerNamePrefix", "requireConsumerDeregistration", "consumerRefreshInterval")

  /** Every option the source reads. */
  val All: Seq[String] = Seq(StreamName, Region, Endpoint, InitialPosition, AwsAccessKey, AwsSecretKey,
    MaxRecordsPerFetch, FailOnDataLoss, MaxFetchRate, MinFetchPeriod, MaxFetchDuration, FetchBufferSize, ShardsPerTask,
    ShardFetchInterval, CoalesceThresholdBlockSize, CoalesceBinSize, MaxShardsPerDescribe, MaxRecordsPerTrigger,
    MaxBytesPerTrigger, ConsumerMode)
}
