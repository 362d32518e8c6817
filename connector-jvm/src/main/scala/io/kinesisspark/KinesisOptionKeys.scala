package io.kinesisspark

/** Option names, as users write them (matching is case-insensitive). Names follow the Databricks connector. */
object KinesisOptionKeys {
  val StreamName = "streamName"
  val Region = "region"
  val Endpoint = "endpoint"
  val InitialPosition = "initialPosition"
  val AwsAccessKey = "awsAccessKey"
  val AwsSecretKey = "awsSecretKey"
  /** Ours: the session token of temporary keys (Databricks has none; the AWS SDKs call it the session token). */
  val AwsSessionToken = "awsSessionToken"
  val RoleArn = "roleArn"
  val RoleExternalId = "roleExternalId"
  val RoleSessionName = "roleSessionName"
  /** Ours: how long an assumed role's session lasts before it is refreshed (STS's DurationSeconds). */
  val RoleSessionDuration = "roleSessionDuration"
  /** Ours: where STS is called for `roleArn` (private endpoints, tests); its region defaults to `region`. */
  val StsEndpoint = "stsEndpoint"
  val StsRegion = "stsRegion"
  /** Ours: a class implementing io.kinesisspark.aws.KinesisCredentialsProvider, and its constructor argument. */
  val CredentialsProviderClass = "credentialsProviderClass"
  val CredentialsProviderParam = "credentialsProviderParam"
  /** Ours: a PEM file of CA certificates to trust instead of the JVM's. */
  val CaBundle = "caBundle"
  /** Ours: no TLS certificate verification at all; for local emulators with self-signed certificates only. */
  val InsecureTrustAllCertificates = "insecureTrustAllCertificates"

  /** Ours: a KCL application's lease table (DynamoDB) to continue from at the query's first start. */
  val KclLeaseTable = "kclLeaseTable"
  /** Ours: an awslabs connector query's checkpoint to continue from at the query's first start, with its metadata
   * path (its `kinesis.metadataPath`) or its DynamoDB table (`kinesis.dynamodb.tableName`) where it set one. */
  val AwslabsCheckpointLocation = "awslabsCheckpointLocation"
  val AwslabsMetadataPath = "awslabsMetadataPath"
  val AwslabsDynamoDbTable = "awslabsDynamoDbTable"
  /** Ours: the DynamoDB connection of the lease table or the awslabs table, where it differs from the stream's (see
   * switching.DynamoDbConnectionOptions). */
  val DynamoDbRegion = "dynamoDbRegion"
  val DynamoDbEndpoint = "dynamoDbEndpoint"
  val DynamoDbAwsAccessKey = "dynamoDbAwsAccessKey"
  val DynamoDbAwsSecretKey = "dynamoDbAwsSecretKey"
  val DynamoDbAwsSessionToken = "dynamoDbAwsSessionToken"
  val DynamoDbRoleArn = "dynamoDbRoleArn"
  val DynamoDbRoleExternalId = "dynamoDbRoleExternalId"
  /**
   * Options whose values are secrets: never logged, shown in errors, or written anywhere by the connector. The role's
   * external id is a shared secret of sorts (its error says "<not shown>"). The option catalog marks them; the Python
   * package's own list of secrets (which `repr()` hides) is checked against it.
   */
  val Secret: Set[String] = Set(AwsAccessKey, AwsSecretKey, AwsSessionToken, RoleExternalId, DynamoDbAwsAccessKey,
    DynamoDbAwsSecretKey, DynamoDbAwsSessionToken, DynamoDbRoleExternalId)

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
  /** Ours, not Databricks': lets a restarted query drop streams its checkpoint has but `streamName` no longer lists. */
  val AllowStreamRemoval = "allowStreamRemoval"
  /**
   * Ours: add the column `subSequenceNumber` (a KPL user record's index in its aggregate) after the Databricks
   * connector's six, which are the rows' columns by default.
   */
  val IncludeSubSequenceNumber = "includeSubSequenceNumber"
  /**
   * Ours: in real-time mode (a real-time trigger, Spark 4.1+), how many long-running tasks read the shards (each holds
   * a task slot for the whole batch); by default one per task slot the cluster has, at most one per shard.
   */
  val RealTimeTasks = "realTimeTasks"
  /** The options that mean nothing in real-time mode (no prefetch rounds, no batch planned from a read limit). */
  val NotInRealTime: Seq[String] = Seq(MaxRecordsPerTrigger, MaxBytesPerTrigger, FetchBufferSize, ShardsPerTask,
    MaxFetchDuration, CoalesceThresholdBlockSize, CoalesceBinSize)

  /** `polling` (GetRecords) or `efo` (enhanced fan-out, SubscribeToShard). */
  val ConsumerMode = "consumerMode"
  val ConsumerName = "consumerName"
  val ConsumerNamePrefix = "consumerNamePrefix"
  val RequireConsumerDeregistration = "requireConsumerDeregistration"
  val ConsumerRefreshInterval = "consumerRefreshInterval"

  /**
   * Ours, for tests only: each EFO subscription is ended client-side after this many events, so resubscription
   * can be exercised without waiting for the service to end subscriptions after 5 minutes.
   */
  val EfoSubscriptionMaxEvents = "efoSubscriptionMaxEvents"

  /** The options that only mean something with `consumerMode` = `efo`. */
  val EfoOnly: Seq[String] = Seq(ConsumerName, ConsumerNamePrefix, RequireConsumerDeregistration,
    ConsumerRefreshInterval, EfoSubscriptionMaxEvents)

  // The sink's own options (ours; the awslabs `kinesis.sink.*` names map onto some of them).
  /** What to do with a row that has no partition key (no column, or null): `fail` or `random`. */
  val PartitionKeyFallback = "partitionKeyFallback"
  /** PutRecords calls one writer task keeps in flight at once. */
  val MaxInflightRequests = "maxInflightRequests"
  /** Times a record is put again after Kinesis refused it, before the task fails. */
  val MaxPutRetries = "maxPutRetries"
  /** Pack rows into KPL aggregates, one per shard at a time. */
  val Aggregation = "aggregation"
  /** Largest KPL aggregate, in bytes, counting its partition key. */
  val AggregationMaxBytes = "aggregationMaxBytes"
  /** Keep the rows of a partition key (of a shard, with aggregation) in order through retries and concurrency. */
  val PreserveKeyOrder = "preserveKeyOrder"
  /** Pace each shard's writes to its limits (`true`), or find them by being throttled (`false`). */
  val Pacing = "pacing"
  /** The records per second a paced writer sends each shard at most (Kinesis: 1,000). */
  val MaxRecordsPerShardPerSecond = "maxRecordsPerShardPerSecond"
  /** The bytes (data and partition keys) per second a paced writer sends each shard at most (Kinesis: 1 MiB). */
  val MaxBytesPerShardPerSecond = "maxBytesPerShardPerSecond"

  /** Options of every part that talks to AWS: where, and with which credentials and trust. */
  val Connection: Seq[String] = Seq(Region, Endpoint, AwsAccessKey, AwsSecretKey, AwsSessionToken, RoleArn,
    RoleExternalId, RoleSessionName, RoleSessionDuration, StsEndpoint, StsRegion, CredentialsProviderClass,
    CredentialsProviderParam, CaBundle, InsecureTrustAllCertificates)

  /** The options of a start where another consumer stopped: a KCL lease table or an awslabs checkpoint, and the
   * connection to DynamoDB that reads either. */
  val Switching: Seq[String] = Seq(KclLeaseTable, AwslabsCheckpointLocation, AwslabsMetadataPath, AwslabsDynamoDbTable,
    DynamoDbRegion, DynamoDbEndpoint, DynamoDbAwsAccessKey, DynamoDbAwsSecretKey, DynamoDbAwsSessionToken,
    DynamoDbRoleArn, DynamoDbRoleExternalId)

  /** Every option the sink reads. */
  val SinkAll: Seq[String] = Seq(StreamName) ++ Connection ++ Seq(PartitionKeyFallback, MaxInflightRequests,
    MaxPutRetries, Aggregation, AggregationMaxBytes, PreserveKeyOrder, Pacing, MaxRecordsPerShardPerSecond,
    MaxBytesPerShardPerSecond)

  /** Every option the source reads. */
  val All: Seq[String] = Seq(StreamName, Region, Endpoint, InitialPosition, AwsAccessKey, AwsSecretKey, AwsSessionToken,
    RoleArn, RoleExternalId, RoleSessionName, RoleSessionDuration, StsEndpoint, StsRegion, CredentialsProviderClass,
    CredentialsProviderParam, CaBundle, InsecureTrustAllCertificates,
    MaxRecordsPerFetch, FailOnDataLoss, MaxFetchRate, MinFetchPeriod, MaxFetchDuration, FetchBufferSize, ShardsPerTask,
    ShardFetchInterval, CoalesceThresholdBlockSize, CoalesceBinSize, MaxShardsPerDescribe, MaxRecordsPerTrigger,
    MaxBytesPerTrigger, AllowStreamRemoval, IncludeSubSequenceNumber, RealTimeTasks, ConsumerMode) ++ EfoOnly ++
    Switching
}
