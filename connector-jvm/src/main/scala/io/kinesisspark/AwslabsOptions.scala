package io.kinesisspark

import java.util.Locale

/**
 * Drop-in compatibility with the awslabs connector (`format("aws-kinesis")`): its `kinesis.*` option names are
 * translated to ours before parsing, values included (`kinesis.startingPosition` = `AT_TIMESTAMP 2023-08-30T19:00:05Z`
 * becomes our `at_timestamp` JSON). Its options for features this version does not have are refused rather than
 * ignored, because ignoring them would change what the query does (e.g. which credentials it uses).
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
    "kinesis.describeshardinterval" -> ShardFetchInterval)

  private val NotYetSupported: Set[String] = Set("kinesis.stsrolearn", "kinesis.stssessionname",
    "kinesis.stsendpointurl", "kinesis.credentialproviderclass", "kinesis.credentialproviderparam", "kinesis.consumername")

  private val AtTimestamp = """(?i)AT_TIMESTAMP\s+(\S+)""".r

  def translate(options: Map[String, String]): Map[String, String] = {
    val (theirs, ours) = options.partition { case (k, _) => k.toLowerCase(Locale.ROOT).startsWith("kinesis.") }
    val translated = theirs.toSeq.flatMap { case (key, value) =>
      val lower = key.toLowerCase(Locale.ROOT)
      if (NotYetSupported(lower)) {
        throw new IllegalArgumentException(s"Option '$key' of the awslabs connector is not supported by this " +
          "version of kinesis-spark; remove it (see the README's option table for what is supported).")
      }
      lower match {
        case "kinesis.consumertype" =>
          if (value.trim.equalsIgnoreCase("GetRecords")) Nil
          else throw KinesisErrors.invalidOption(key, value, "'GetRecords' (enhanced fan-out, 'SubscribeToShard', " +
            "is not supported by this version)")
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
      Renamed.contains(lower) || lower == "kinesis.consumertype"
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
