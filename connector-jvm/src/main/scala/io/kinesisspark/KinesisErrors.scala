package io.kinesisspark

import scala.collection.immutable.ListMap
import scala.util.matching.Regex

/**
 * Every error the connector raises is built here, one method per condition, so messages stay uniform:
 * they name the option (or stream and shard), the value given, and what is accepted or what to do.
 *
 * Secret option values are never passed to these methods; callers hand over only option names.
 */
private[kinesisspark] object KinesisErrors {

  /**
   * The forms of the option errors' messages, with `{option}`, `{value}`, `{accepted}` and `{other}` to fill in. The
   * option catalog ([[io.kinesisspark.options.OptionCatalog]]) carries them to the Python package, which words its
   * errors the same way.
   */
  val OptionMessageForms: ListMap[String, String] = ListMap(
    "invalid" -> "Invalid value '{value}' for option '{option}': expected {accepted}.",
    "missing" -> "Option '{option}' is required: {accepted}.",
    "requiresOther" -> "Option '{option}' is set but '{other}' is not: set both or neither.",
    "conflicting" -> "Options '{option}' and '{other}' cannot be used together: keep one.")

  private val Placeholder = """\{(\w+)\}""".r

  private def optionMessage(form: String, fields: (String, String)*): IllegalArgumentException = {
    val values = fields.toMap
    // One pass, so a value that itself holds "{accepted}" is shown as it is.
    new IllegalArgumentException(Placeholder.replaceAllIn(OptionMessageForms(form),
      m => Regex.quoteReplacement(values(m.group(1)))))
  }

  def invalidOption(option: String, value: String, accepted: String): IllegalArgumentException =
    optionMessage("invalid", "option" -> option, "value" -> value, "accepted" -> accepted)

  def missingOption(option: String, accepted: String): IllegalArgumentException =
    optionMessage("missing", "option" -> option, "accepted" -> accepted)

  def optionRequiresOther(option: String, required: String): IllegalArgumentException =
    optionMessage("requiresOther", "option" -> option, "other" -> required)

  def conflictingOptions(option: String, other: String): IllegalArgumentException =
    optionMessage("conflicting", "option" -> option, "other" -> other)

  def regionUnresolved(): IllegalArgumentException =
    new IllegalArgumentException(
      "Option 'region' is not set and no region could be resolved locally (AWS_REGION, aws.region, the AWS " +
        "profile or instance metadata): set option 'region', e.g. 'us-east-1'.")

  def streamNotFound(stream: String, region: String, endpoint: String): StreamNotFoundException =
    new StreamNotFoundException(stream,
      s"Kinesis stream '$stream' does not exist in region $region (endpoint $endpoint): check option " +
        "'streamName', 'region' and 'endpoint'.")

  def unsupportedOffsetVersion(version: Int, supported: Int): KinesisSparkException =
    new KinesisSparkException(
      s"The checkpoint holds a Kinesis offset of version $version, but this kinesis-spark reads versions up to " +
        s"$supported: upgrade kinesis-spark, or start from a new checkpoint location.")

  def malformedOffset(json: String, cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"Cannot read Kinesis offset from the checkpoint: '$json' (${cause.getMessage}).", cause)

  def streamsRemoved(removed: Seq[String], streams: Seq[String]): KinesisSparkException =
    new KinesisSparkException(
      s"The checkpoint reads stream(s) ${removed.map(s => s"'$s'").mkString(", ")} that option 'streamName' no " +
        s"longer lists (it lists ${streams.map(s => s"'$s'").mkString(", ")}). To stop reading them and keep the " +
        "progress of the others, set option 'allowStreamRemoval' to 'true'; otherwise add them back to " +
        "'streamName', or use a new checkpoint location.")

  def credentialsProviderClass(className: String, problem: String): IllegalArgumentException =
    new IllegalArgumentException(s"Invalid value '$className' for option 'credentialsProviderClass': $problem. " +
      "Expected a class implementing io.kinesisspark.aws.KinesisCredentialsProvider with a public constructor " +
      "taking one String (option 'credentialsProviderParam') or none.")

  /**
   * AWS refused the credentials, or none could be found. `tried` describes the credentials (never a secret); the
   * detail is AWS's own message, which names no secret either.
   */
  def credentialsFailed(tried: String, call: String, detail: String, cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"$call failed because of the AWS credentials: tried $tried; AWS said: $detail. " +
      "Check options 'awsAccessKey'/'awsSecretKey'/'awsSessionToken', 'roleArn' (and the STS endpoint), " +
      "'credentialsProviderClass', or the default chain's sources.", cause)

  /**
   * AWS denied a call because no policy of the credentials allows its IAM action `action` (see
   * [[aws.ErrorClassifier.isAccessDenied]]): names the call, what it was about, the credentials tried (when the caller
   * knows them) and the action to allow, with AWS's own answer, which names the principal and the resource.
   */
  def permissionDenied(call: String, subject: String, action: String, tried: Option[String], detail: String,
      cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"$call on $subject was denied: the AWS credentials" +
      tried.fold("")(t => s" ($t)") + s" lack the IAM permission $action; AWS said: $detail. Allow $action for " +
      "these credentials on the resource AWS named (docs/permissions.md lists the actions each way of reading and " +
      "writing needs).", cause)

  /** Kinesis kept failing transiently (unreachable, timing out, 5xx) past the retry budget of [[reader.TransientBackoff]]. */
  def unavailable(call: String, attempts: Int, cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"$call failed $attempts times in a row, over about a minute of retries with back-off: " +
      s"Kinesis was unreachable or kept failing (last error: ${cause.getClass.getSimpleName}: ${cause.getMessage}). " +
      "Check that the endpoint is reachable; nothing was lost, so restarting the query from its checkpoint resumes " +
      "where it stopped.", cause)

  def tlsFailed(endpoint: String, call: String, detail: String, cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"$call failed: the TLS connection to $endpoint could not be verified ($detail). If " +
      "the endpoint uses a private CA, set option 'caBundle' to a PEM file of its certificate(s); for a local " +
      "emulator with a self-signed certificate only, 'insecureTrustAllCertificates' = 'true'.", cause)

  def consumerNameUnresolved(): IllegalArgumentException =
    new IllegalArgumentException("Option 'consumerName' is not set and no streaming query id is known to name the " +
      "enhanced fan-out consumer by (the source is not running in a streaming query): set option 'consumerName'.")

  def invalidConsumerName(name: String): IllegalArgumentException =
    new IllegalArgumentException(s"Invalid consumer name '$name': expected 1 to 128 characters from a-z, A-Z, 0-9, " +
      "'_', '.' and '-'.")

  def consumerNotActive(stream: String, name: String, status: String, waitedMs: Long): KinesisSparkException =
    new KinesisSparkException(s"The enhanced fan-out consumer '$name' of Kinesis stream '$stream' is still $status " +
      s"after ${waitedMs / 1000} s of waiting for it to become ACTIVE. Check it with ListStreamConsumers (or " +
      "KinesisConsumerManager.listConsumers), or name another consumer with option 'consumerName'.")

  def consumerRegistrationFailed(stream: String, name: String, detail: String, cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"Cannot register the enhanced fan-out consumer '$name' of Kinesis stream '$stream': " +
      s"$detail. A stream has at most 20 consumers: deregister unused ones (KinesisConsumerManager.deregisterConsumer) " +
      "or reuse one with option 'consumerName'.", cause)

  def subscriptionRefused(stream: String, shardId: String, consumerArn: String, times: Int, cause: Throwable)
      : KinesisSparkException =
    new KinesisSparkException(s"SubscribeToShard on Kinesis stream '$stream', $shardId was refused $times times in a " +
      s"row (${cause.getMessage}): another subscriber keeps taking over consumer $consumerArn on this shard. Two " +
      "queries (or other applications) must not share an enhanced fan-out consumer: give each its own with option " +
      "'consumerName'.", cause)

  def notInRealTimeMode(option: String, why: String): IllegalArgumentException =
    new IllegalArgumentException(s"Option '$option' has no meaning in real-time mode (a real-time trigger): $why. " +
      "Remove it, or run the query with another trigger.")

  def realTimeTasksExceedSlots(tasks: Int, slots: Int): IllegalArgumentException =
    new IllegalArgumentException(s"Invalid value '$tasks' for option '${KinesisOptionKeys.RealTimeTasks}': expected " +
      s"at most $slots, the task slots of this cluster now (its executors' cores over spark.task.cpus). Each " +
      "real-time task holds a slot for the whole batch, and a task without one would wait, never reading its shards.")

  def dataLoss(stream: String, shardId: String, what: String): KinesisSparkException =
    new KinesisSparkException(
      s"Data loss in Kinesis stream '$stream', shard $shardId: $what. Records the query still needed are no " +
        "longer in the stream (expired by retention, or the stream was deleted or recreated). To skip what is " +
        "gone and continue from the oldest available record, set option 'failOnDataLoss' to 'false'; to start " +
        "over, use a new checkpoint location.")

  /** The first few of some shard ids, for a message. */
  private def some(ids: Seq[String]): String = ids.sorted.take(5).mkString(", ") + (if (ids.size > 5) ", ..." else "")

  // ---- a start where a KCL application stopped (option 'kclLeaseTable')

  def leaseTableNotFound(table: String, region: String, endpoint: String): IllegalArgumentException =
    new IllegalArgumentException(s"DynamoDB table '$table' (option 'kclLeaseTable') does not exist in region $region " +
      s"(endpoint $endpoint): a KCL application's lease table is named after the application; check options " +
      "'kclLeaseTable', 'dynamoDbRegion' and 'dynamoDbEndpoint'.")

  def notALease(table: String, key: String, why: String): IllegalArgumentException =
    new IllegalArgumentException(s"The item with leaseKey '$key' of DynamoDB table '$table' is not a KCL lease: " +
      s"$why. Option 'kclLeaseTable' names a KCL application's lease table (named after the application).")

  def noLeases(table: String): IllegalArgumentException =
    new IllegalArgumentException(s"Lease table '$table' (option 'kclLeaseTable') holds no lease: the KCL application " +
      "has not started, or the table belongs to another application. Without leases there is nowhere to continue " +
      "from: remove option 'kclLeaseTable' and choose a start with 'initialPosition'.")

  def leasesOfOtherStreams(table: String, stream: String, streams: Seq[String]): IllegalArgumentException =
    new IllegalArgumentException(s"Lease table '$table' (option 'kclLeaseTable') holds leases of streams " +
      s"${streams.map(s => s"'$s'").mkString(", ")} but none of stream '$stream': check options 'kclLeaseTable' and " +
      "'streamName'.")

  def singleStreamLeaseTable(table: String, streams: Seq[String]): IllegalArgumentException =
    new IllegalArgumentException(s"Lease table '$table' (option 'kclLeaseTable') is a single-stream KCL " +
      s"application's: its leases do not say which stream they belong to, and the query reads " +
      s"${streams.map(s => s"'$s'").mkString(", ")}. Read the application's one stream with this option.")

  def leasesOfAnotherStream(table: String, stream: String, leased: Seq[String], listed: Seq[String])
      : IllegalArgumentException = {
    new IllegalArgumentException(s"Lease table '$table' (option 'kclLeaseTable') holds leases of shards " +
      s"${some(leased)}, none of which stream '$stream' has (its shards: ${some(listed)}): the table belongs to " +
      "another stream, or to one deleted and created again, or retention has removed every shard the application " +
      "read. Check options 'kclLeaseTable' and 'streamName'; to start without the table, remove 'kclLeaseTable' and " +
      "choose a start with 'initialPosition'.")
  }

  def leasesOfSeveralStreams(table: String, stream: String, keys: Seq[String]): IllegalArgumentException =
    new IllegalArgumentException(s"Lease table '$table' (option 'kclLeaseTable') holds leases of the same shard of " +
      s"more than one stream named '$stream' (${keys.map(k => s"'$k'").mkString(", ")}): a stream deleted and created " +
      "again, or one of another account. Remove the other stream's leases from the table, or give each shard its " +
      "start with 'initialPosition' instead.")

  def notAnOptionsObject(tool: String): IllegalArgumentException =
    new IllegalArgumentException(s"$tool reads a JSON object of option names to values on standard input, such as " +
      """{"streamName": "orders", "kclLeaseTable": "orders-app"}.""")

  def checkpointRecordUnanswered(stream: String, shardId: String, sequenceNumber: String, calls: Int)
      : KinesisSparkException =
    new KinesisSparkException(s"Kinesis returned no record in $calls GetRecords calls at sequence number " +
      s"$sequenceNumber of shard '$shardId' in stream '$stream' (option 'kclLeaseTable': a checkpoint at user " +
      "record 0, which the start reads to tell a plain record from a KPL aggregate), though the shard holds more: " +
      "start the query again.")

  def checkpointOutsideShard(table: String, stream: String, shardId: String, sequenceNumber: String,
      range: io.kinesisspark.aws.SequenceNumberRange): IllegalArgumentException =
    new IllegalArgumentException(s"Lease table '$table' (option 'kclLeaseTable') checkpoints shard '$shardId' of " +
      s"stream '$stream' at sequence number $sequenceNumber, outside the shard's sequence numbers $range: the table " +
      "belongs to another stream, or to one deleted and created again. Check options 'kclLeaseTable' and 'streamName'.")

  def checkpointTrimmed(table: String, stream: String, shardId: String, sequenceNumber: String): KinesisSparkException =
    dataLoss(stream, shardId, s"the checkpoint of lease table '$table' (option 'kclLeaseTable'), sequence number " +
      s"$sequenceNumber, is no longer in the shard, so records between it and the oldest one left are lost")

  def leasedShardsGone(table: String, stream: String, shards: Seq[String]): KinesisSparkException =
    dataLoss(stream, shards.mkString(", "), s"lease table '$table' (option 'kclLeaseTable') holds checkpoints in " +
      "shards that retention has removed from the stream, so the records after those checkpoints are lost")

  // ---- a start where an awslabs connector query stopped (option 'awslabsCheckpointLocation')

  private val AwslabsOption = "option 'awslabsCheckpointLocation'"

  def notAnAwslabsCheckpoint(where: String, why: String): IllegalArgumentException =
    new IllegalArgumentException(s"$where is not an awslabs connector shard position: $why. Option " +
      "'awslabsCheckpointLocation' names the checkpoint location of a query of the awslabs connector " +
      "(spark-sql-kinesis-connector); 'awslabsMetadataPath' and 'awslabsDynamoDbTable' where it kept its positions.")

  def awslabsCheckpointNotFound(location: String): IllegalArgumentException =
    new IllegalArgumentException(s"Checkpoint location '$location' ($AwslabsOption) does not exist: give the " +
      "awslabs connector query's 'checkpointLocation' as it was set (a path or URI Spark's file systems read).")

  def awslabsNothingCommitted(location: String): IllegalArgumentException =
    new IllegalArgumentException(s"Checkpoint location '$location' ($AwslabsOption) holds no committed batch (no " +
      "file in its commits/ folder): the old query never finished a batch, or the location is not its checkpoint. " +
      "Without one there is nowhere to continue from: remove 'awslabsCheckpointLocation' and choose a start with " +
      "'initialPosition'.")

  def awslabsNoOffsets(location: String, batchId: Long): IllegalArgumentException =
    new IllegalArgumentException(s"Checkpoint location '$location' ($AwslabsOption) has committed batch $batchId " +
      s"but no offsets/$batchId file: the checkpoint is incomplete; check the path.")

  def awslabsNoSourceOf(location: String, batchId: Long, stream: String, streams: Seq[String])
      : IllegalArgumentException =
    new IllegalArgumentException(s"The offsets of batch $batchId in checkpoint location '$location' " +
      s"($AwslabsOption) hold no awslabs connector source of stream '$stream'" +
      (if (streams.isEmpty) " (none of the query's sources is the awslabs connector's)"
       else s" (its awslabs sources read ${streams.map(s => s"'$s'").mkString(", ")})") +
      ": check options 'awslabsCheckpointLocation' and 'streamName'.")

  def awslabsSeveralSourcesOf(location: String, batchId: Long, stream: String): IllegalArgumentException =
    new IllegalArgumentException(s"The offsets of batch $batchId in checkpoint location '$location' " +
      s"($AwslabsOption) hold more than one awslabs connector source of stream '$stream': which one to continue " +
      "cannot be told. Give each shard its start with 'initialPosition' instead (the command line prints one " +
      "source's when given its 'awslabsMetadataPath').")

  def awslabsNoShardPositions(location: String, log: String, batchId: Long): IllegalArgumentException =
    new IllegalArgumentException(s"$log holds no shard position for awslabs batch $batchId (the connector's own " +
      s"number of the last batch committed in checkpoint location '$location', $AwslabsOption): the old query " +
      "kept its positions elsewhere. Set " +
      "'awslabsMetadataPath' to its 'kinesis.metadataPath', or 'awslabsDynamoDbTable' to its " +
      "'kinesis.dynamodb.tableName' when its 'kinesis.metadataCommitterType' was DYNAMODB.")

  def awslabsTableNotFound(table: String, region: String, endpoint: String): IllegalArgumentException =
    new IllegalArgumentException(s"DynamoDB table '$table' (option 'awslabsDynamoDbTable') does not exist in region " +
      s"$region (endpoint $endpoint): the awslabs connector names it kdsc_<region>_<stream> unless its " +
      "'kinesis.dynamodb.tableName' is set; check options 'awslabsDynamoDbTable', 'dynamoDbRegion' and " +
      "'dynamoDbEndpoint'.")

  def awslabsShardsOfAnotherStream(source: String, stream: String, named: Seq[String], listed: Seq[String])
      : IllegalArgumentException = {
    new IllegalArgumentException(s"The awslabs $source ($AwslabsOption) holds positions in shards ${some(named)}, " +
      s"none of which stream '$stream' has (its shards: ${some(listed)}): the checkpoint belongs to another stream, " +
      "or to one deleted and created again, or retention has removed every shard the old query read. Check options " +
      "'awslabsCheckpointLocation' and 'streamName'.")
  }

  def awslabsPositionOutsideShard(source: String, stream: String, shardId: String, sequenceNumber: String,
      range: io.kinesisspark.aws.SequenceNumberRange): IllegalArgumentException =
    new IllegalArgumentException(s"The awslabs $source ($AwslabsOption) puts shard '$shardId' of stream '$stream' " +
      s"at sequence number $sequenceNumber, outside the shard's sequence numbers $range: the checkpoint belongs to " +
      "another stream, or to one deleted and created again. Check options 'awslabsCheckpointLocation' and " +
      "'streamName'.")

  def awslabsShardsGone(source: String, stream: String, shards: Seq[String]): KinesisSparkException =
    dataLoss(stream, shards.mkString(", "), s"the awslabs $source ($AwslabsOption) holds positions in shards that " +
      "retention has removed from the stream, so the records after those positions are lost")

  // ---- the sink

  def missingColumn(column: String, accepted: String, alternative: String): IllegalArgumentException =
    new IllegalArgumentException(s"The DataFrame written to Kinesis has no column '$column' ($accepted)$alternative.")

  def wrongColumnType(column: String, actual: String, accepted: String): IllegalArgumentException =
    new IllegalArgumentException(s"Column '$column' of the DataFrame written to Kinesis is of type $actual: expected " +
      s"$accepted.")

  def ambiguousColumn(column: String, found: Seq[String]): IllegalArgumentException =
    new IllegalArgumentException(s"The DataFrame written to Kinesis has ${found.size} columns named '$column' " +
      s"(${found.map(c => s"'$c'").mkString(", ")}; names are matched case-insensitively): keep one.")

  /** A row that no retry could ever write; `row` says which (task and row number), `stream` where it was going. */
  def unwritableRow(row: String, stream: String, problem: String): KinesisSparkException =
    new KinesisSparkException(s"Cannot write $row to Kinesis stream '$stream': $problem.")

  def rowWithoutStream(row: String): KinesisSparkException =
    new KinesisSparkException(s"Cannot write $row to Kinesis: its column 'streamName' is null and option " +
      "'streamName' is not set; give every row a stream, or set option 'streamName' for rows without one.")

  def putRetriesExhausted(stream: String, records: Long, attempts: Int, maxRetries: Int, errorCode: String,
      errorMessage: String, stillPending: Long): KinesisSparkException =
    new KinesisSparkException(s"$records record(s) could not be written to Kinesis stream '$stream' in $attempts " +
      s"attempts (option 'maxPutRetries' allows $maxRetries retries); the last error was $errorCode: " +
      s"$errorMessage. $stillPending other record(s) of this task were still unacknowledged. Records acknowledged " +
      "before stay in the stream; when Spark retries the task they are written again (delivery is at-least-once).")

  def putFailed(stream: String, records: Long, errorCode: String, errorMessage: String, cause: Throwable): KinesisSparkException =
    new KinesisSparkException(s"PutRecords of $records record(s) to Kinesis stream '$stream' failed with an error " +
      s"that retrying cannot fix: $errorCode: $errorMessage.", cause)
}

/** The connector's own runtime error, so callers (and the Python package) can tell ours from Spark's. */
class KinesisSparkException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)

/** Kinesis answered that a stream does not exist: at load() a mistake, while reading a deleted stream. */
final class StreamNotFoundException(val stream: String, message: String) extends KinesisSparkException(message)
