package io.kinesisspark

import java.util.Locale

/**
 * Drop-in compatibility with the awslabs connector (`format("aws-kinesis")`): its `kinesis.*` option names are
 * translated to ours before parsing, values included (`kinesis.startingPosition` = `AT_TIMESTAMP 2023-08-30T19:00:05Z`
 * becomes our `at_timestamp` JSON, `kinesis.consumerType` = `SubscribeToShard` our `consumerMode` = `efo`).
 * `kinesis.consumerName` is registered as given, without our default prefix, so an awslabs query's consumer is
 * reused.
 *
 * {{{
 *   AwslabsOptions.translate(Map("kinesis.streamName" -> "s", "kinesis.startingPosition" -> "TRIM_HORIZON"))
 *   // Map("streamName" -> "s", "initialPosition" -> "trim_horizon")
 * }}}
 */
object AwslabsOptions {
  import KinesisOptionKeys._

  private val Renamed: Map[String, String] = Map(
    "kinesis.streamname" -> StreamName,
    "kinesis.endpointurl" -> Endpoint,
    "kinesis.region" -> Region,
    "kinesis.kinesisregion" -> Region,
    "kinesis.startingposition" -> InitialPosition,
    "kinesis.failondataloss" -> FailOnDataLoss,
    "kinesis.awsaccesskeyid" -> AwsAccessKey,
    "kinesis.awssecretkey" -> AwsSecretKey,
    "kinesis.getrecords.numberofrecordsperfetch" -> MaxRecordsPerFetch,
    "kinesis.getrecords.fetchintervalms" -> MinFetchPeriod,
    "kinesis.describeshardinterval" -> ShardFetchInterval,
    "kinesis.stsrolearn" -> RoleArn,
    "kinesis.stssessionname" -> RoleSessionName,
    "kinesis.stsendpointurl" -> StsEndpoint,
    "kinesis.credentialproviderclass" -> CredentialsProviderClass,
    "kinesis.credentialproviderparam" -> CredentialsProviderParam,
    "kinesis.consumername" -> ConsumerName,
    "kinesis.sink.aggregationenabled" -> Aggregation,
    "kinesis.sink.maxconnections" -> MaxInflightRequests)

  private val NoMetadataStore = "kinesis-spark keeps its progress only in Spark's checkpoint (no HDFS side files, " +
    "no DynamoDB table), so there is no metadata store to configure; to continue where an awslabs query stopped, " +
    "give its checkpoint location as 'awslabsCheckpointLocation' (with its metadata path as 'awslabsMetadataPath' " +
    "or its table as 'awslabsDynamoDbTable')"
  private val OwnRetries = "kinesis-spark retries Kinesis calls itself, per shard, with jittered back-off (see the " +
    "README: throttling and transient errors)"

  /** awslabs options that have no meaning in our design, with why; accepted, and explained in a warning. */
  private val NotNeeded: Map[String, String] = Map(
    "kinesis.metadatacommittertype" -> NoMetadataStore,
    "kinesis.metadatapath" -> NoMetadataStore,
    "kinesis.metadatanumretries" -> NoMetadataStore,
    "kinesis.metadataretryintervalsms" -> NoMetadataStore,
    "kinesis.metadatamaxretryintervalms" -> NoMetadataStore,
    "kinesis.dynamodb.tablename" -> NoMetadataStore,
    "kinesis.minbatchestoretain" -> NoMetadataStore,
    "kinesis.checknewrecordthreads" -> ("a background prefetcher already knows what is new, so the driver never " +
      "probes shards for new records"),
    "kinesis.clientnumretries" -> OwnRetries,
    "kinesis.clientretryintervalsms" -> OwnRetries,
    "kinesis.clientmaxretryintervalms" -> OwnRetries,
    "kinesis.maxfetchrecordspershard" -> ("batches take what the prefetcher has buffered; bound them with " +
      "'maxRecordsPerTrigger' or 'maxBytesPerTrigger' (per batch, over all shards)"),
    "kinesis.maxfetchtimepershardsec" -> ("batches never wait on fetching: records are prefetched in the " +
      "background ('maxFetchDuration' bounds one prefetch round)"),
    "kinesis.sink.flushwaittimems" -> ("a writer task's commit waits until Kinesis has acknowledged every row, " +
      "however long that takes, instead of polling at an interval"),
    "kinesis.sink.recordmaxbufferedtimems" -> ("rows are never held for a time: calls go out as soon as they are " +
      "full, and everything left goes out when the task commits"),
    "kinesis.sink.recordttl" -> ("kinesis-spark never drops a row (the awslabs sink drops rows not written within " +
      "this time); a row Kinesis keeps refusing fails the task after 'maxPutRetries' retries"))

  /** A warning for each awslabs option given that has no meaning here, saying why it is not needed. */
  def notNeededWarnings(options: Iterable[String]): Seq[String] =
    options.toSeq.sorted.flatMap { key =>
      NotNeeded.get(key.toLowerCase(Locale.ROOT)).map(why => s"Option '$key' of the awslabs connector is not needed and is ignored: $why.")
    }

  private val AtTimestamp = """(?i)AT_TIMESTAMP\s+(\S+)""".r

  def translate(options: Map[String, String]): Map[String, String] = {
    val (theirs, ours) = options.partition { case (k, _) => k.toLowerCase(Locale.ROOT).startsWith("kinesis.") }
    val translated = theirs.toSeq.flatMap { case (key, value) =>
      val lower = key.toLowerCase(Locale.ROOT)
      lower match {
        case "kinesis.consumertype" =>
          if (value.trim.equalsIgnoreCase("GetRecords")) Seq(ConsumerMode -> "polling")
          else if (value.trim.equalsIgnoreCase("SubscribeToShard")) Seq(ConsumerMode -> "efo")
          else throw KinesisErrors.invalidOption(key, value, "'GetRecords' or 'SubscribeToShard'")
        // awslabs registers the consumer under exactly the name given: no prefix, so its consumer is reused.
        case "kinesis.consumername" if !ours.keys.exists(_.equalsIgnoreCase(ConsumerNamePrefix)) =>
          Seq(ConsumerName -> value, ConsumerNamePrefix -> "")
        // "kinesis.region" names where the connector runs, "kinesis.kinesisRegion" the stream: the stream's wins.
        case "kinesis.region" if theirs.keys.exists(_.equalsIgnoreCase("kinesis.kinesisRegion")) => Nil
        case _ => Renamed.get(lower).map(ours => ours -> translateValue(ours, key, value)).toSeq
      }
    }
    translated.foreach { case (k, _) =>
      ours.keys.find(_.equalsIgnoreCase(k)).foreach { mine =>
        throw new IllegalArgumentException(s"Options '$mine' and its awslabs alias are both set: keep one.")
      }
    }
    val unknown = theirs.filterNot { case (k, _) =>
      val lower = k.toLowerCase(Locale.ROOT)
      Renamed.contains(lower) || lower == "kinesis.consumertype" || NotNeeded.contains(lower)
    }
    ours ++ unknown ++ translated
  }

  private def translateValue(ours: String, key: String, value: String): String = ours match {
    case InitialPosition => value.trim match {
      case AtTimestamp(time) => s"""{"at_timestamp": "$time", "format": "yyyy-MM-dd'T'HH:mm:ssXXX"}"""
      case other             => other.toLowerCase(Locale.ROOT)
    }
    case MinFetchPeriod => s"${value.trim}ms"
    case _              => value
  }
}
