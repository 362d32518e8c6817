package io.kinesisspark

import java.net.URI
import java.util.Locale

import scala.util.Try

import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig}
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
    failOnDataLoss: Boolean)

object KinesisSourceOptions {
  import KinesisOptionKeys._

  /** GetRecords returns at most 10,000 records per call. */
  val MaxRecordsPerFetchLimit = 10000
  val DefaultMaxRecordsPerFetch = 10000

  /** @param options user options; keys are matched case-insensitively. */
  def parse(options: Map[String, String]): KinesisSourceOptions = {
    val opts = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    def get(key: String): Option[String] = opts.get(key.toLowerCase(Locale.ROOT)).filter(_ != null)

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
      failOnDataLoss = get(FailOnDataLoss).map(parseBoolean(FailOnDataLoss, _)).getOrElse(true))
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

  private[kinesisspark] def parseInt(option: String, value: String, min: Int, max: Int): Int = {
    val accepted = s"an integer from $min to $max"
    val n = Try(value.trim.replace(",", "").replace("_", "").toInt)
      .getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (n < min || n > max) throw KinesisErrors.invalidOption(option, value, accepted)
    n
  }

  private[kinesisspark] def parseBoolean(option: String, value: String): Boolean =
    value.trim.toLowerCase(Locale.ROOT) match {
      case "true"  => true
      case "false" => false
      case _       => throw KinesisErrors.invalidOption(option, value, "'true' or 'false'")
    }
}
