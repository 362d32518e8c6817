package io.kinesisspark

/**
 * Every error the connector raises is built here, one method per condition, so messages stay uniform:
 * they name the option (or stream and shard), the value given, and what is accepted or what to do.
 *
 * Secret option values are never passed to these methods; callers hand over only option names.
 */
private[kinesisspark] object KinesisErrors {

  def invalidOption(option: String, value: String, accepted: String): IllegalArgumentException =
    new IllegalArgumentException(s"Invalid value '$value' for option '$option': expected $accepted.")

  def missingOption(option: String, accepted: String): IllegalArgumentException =
    new IllegalArgumentException(s"Option '$option' is required: $accepted.")

  def optionRequiresOther(option: String, required: String): IllegalArgumentException =
    new IllegalArgumentException(s"Option '$option' is set but '$required' is not: set both or neither.")

  def regionUnresolved(): IllegalArgumentException =
    new IllegalArgumentException(
      "Option 'region' is not set and no region could be resolved locally (AWS_REGION, aws.region, the AWS " +
        "profile or instance metadata): set option 'region', e.g. 'us-east-1'.")

  def streamNotFound(stream: String, region: String, endpoint: String): KinesisSparkException =
    new KinesisSparkException(
      s"Kinesis stream '$stream' does not exist in region $region (endpoint $endpoint): check option " +
        "'streamName', 'region' and 'endpoint'.")

  def unsupportedOffsetVersion(version: Int, supported: Int): KinesisSparkException =
    new KinesisSparkException(
      s"The checkpoint holds a Kinesis offset of version $version, but this kinesis-spark reads versions up to " +
        s"$supported: upgrade kinesis-spark, or start from a new checkpoint location.")

  def malformedOffset(json: String, cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"Cannot read Kinesis offset from the checkpoint: '$json' (${cause.getMessage}).", cause)

  def dataLoss(stream: String, shardId: String, what: String): KinesisSparkException =
    new KinesisSparkException(
      s"Data loss in Kinesis stream '$stream', shard $shardId: $what. Records the query still needed are no " +
        "longer in the stream (expired by retention, or the stream was deleted or recreated). To skip what is " +
        "gone and continue from the oldest available record, set option 'failOnDataLoss' to 'false'; to start " +
        "over, use a new checkpoint location.")
}

/** The connector's own runtime error, so callers (and the Python package) can tell ours from Spark's. */
class KinesisSparkException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)
