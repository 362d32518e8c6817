package io.kinesisspark.aws

import java.net.URI
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.util.Locale

import scala.util.Try

import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain

import io.kinesisspark.KinesisErrors
import io.kinesisspark.KinesisOptionKeys._
import io.kinesisspark.options.OptionSpec

/**
 * Parses the options every part of the connector that talks to AWS shares (source, sink, consumer manager) into
 * an [[AwsConnection]]: region and endpoint, credentials (keys, an assumed role, a provider class, or the default
 * chain), the STS endpoint, and TLS trust. Secret values are never put into an error message.
 *
 * {{{
 *   val get = Map("region" -> "eu-west-1", "roleArn" -> "arn:aws:iam::123456789012:role/reader").get _
 *   ConnectionOptions.parse(get).credentials  // AssumeRole(... base = DefaultChain, sts = StsLocation("eu-west-1", None))
 * }}}
 */
object ConnectionOptions {
  /** Default `roleSessionName`, so CloudTrail shows who assumed the role. */
  val DefaultRoleSessionName = "kinesis-spark"
  /** STS allows sessions of 15 minutes to 12 hours (the role's maximum may be lower). */
  val MinRoleSessionSeconds = 900
  val MaxRoleSessionSeconds = 43200
  val DefaultRoleSessionSeconds = 3600

  private[kinesisspark] val RegionAccepted = "an AWS region name such as 'us-east-1'"
  private[kinesisspark] def urlAccepted(example: String) = s"an http:// or https:// URL such as '$example'"
  private val KinesisUrlExample = "https://kinesis.us-east-1.amazonaws.com"
  private val StsUrlExample = "https://sts.us-east-1.amazonaws.com"
  private[kinesisspark] val RoleArnAccepted = "an IAM role ARN such as 'arn:aws:iam::123456789012:role/kinesis-reader'"
  private val SessionNameAccepted = "2 to 64 characters from a-z, A-Z, 0-9 and '=,.@-_'"
  private[kinesisspark] val ExternalIdAccepted = "2 to 1,224 characters from a-z, A-Z, 0-9 and '+=,.@:/-'"
  private val CaBundleAccepted = "the path of a readable PEM file of CA certificates"

  /** The options of every part that talks to AWS, with their defaults where one value is the default. */
  object Spec {
    import io.kinesisspark.options.OptionKind._

    val region: OptionSpec[String] = OptionSpec(Region, Text(RegionAccepted))
    val endpoint: OptionSpec[String] = OptionSpec(Endpoint, Text(urlAccepted(KinesisUrlExample)))
    val awsAccessKey: OptionSpec[String] = OptionSpec(AwsAccessKey, Text(s"an access key id, with '$AwsSecretKey'"))
    val awsSecretKey: OptionSpec[String] = OptionSpec(AwsSecretKey, Text(s"a secret access key, with '$AwsAccessKey'"))
    val awsSessionToken: OptionSpec[String] =
      OptionSpec(AwsSessionToken, Text(s"the session token of temporary keys, with '$AwsAccessKey'"))
    val roleArn: OptionSpec[String] = OptionSpec(RoleArn, Text(RoleArnAccepted))
    val roleExternalId: OptionSpec[String] = OptionSpec(RoleExternalId, Text(ExternalIdAccepted))
    val roleSessionName: OptionSpec[String] =
      OptionSpec(RoleSessionName, Text(SessionNameAccepted), Some(DefaultRoleSessionName))
    val roleSessionDuration: OptionSpec[Long] = OptionSpec(RoleSessionDuration,
      Duration(MinRoleSessionSeconds * 1000L, Some(MaxRoleSessionSeconds * 1000L -> "a duration from '15m' to '12h'")),
      Some(DefaultRoleSessionSeconds * 1000L))
    val stsEndpoint: OptionSpec[String] = OptionSpec(StsEndpoint, Text(urlAccepted(StsUrlExample)))
    val stsRegion: OptionSpec[String] = OptionSpec(StsRegion, Text(RegionAccepted))
    val credentialsProviderClass: OptionSpec[String] = OptionSpec(CredentialsProviderClass,
      Text("the name of a class implementing io.kinesisspark.aws.KinesisCredentialsProvider"))
    val credentialsProviderParam: OptionSpec[String] = OptionSpec(CredentialsProviderParam,
      Text(s"the one String argument of the constructor of '$CredentialsProviderClass'"))
    val caBundle: OptionSpec[String] = OptionSpec(CaBundle, Text(CaBundleAccepted))
    val insecureTrustAllCertificates: OptionSpec[Boolean] = OptionSpec(InsecureTrustAllCertificates, Flag, Some(false))

    val all: Seq[OptionSpec[_]] = Seq(region, endpoint, awsAccessKey, awsSecretKey, awsSessionToken, roleArn,
      roleExternalId, roleSessionName, roleSessionDuration, stsEndpoint, stsRegion, credentialsProviderClass,
      credentialsProviderParam, caBundle, insecureTrustAllCertificates)
  }

  /**
   * @param get         an option's value by name (case-insensitive lookup is the caller's)
   * @param impliedRegion a region implied by something else the user gave (e.g. stream ARNs), used when `region`
   *                    is not set
   * @param name        the name the user gives each option, where it differs (the lease table's DynamoDB connection
   *                    reads `dynamoDbRoleArn` for `roleArn`): looked up, and named in errors, by it
   * @param endpointExample the endpoint an error about the endpoint shows as an example
   */
  def parse(get: String => Option[String], impliedRegion: Option[String] = None,
      name: String => String = identity, endpointExample: String = KinesisUrlExample): AwsConnection = {
    val named: String => Option[String] = key => get(name(key))
    val endpoint = named(Endpoint).map(parseUrl(name(Endpoint), _, endpointExample))
    val region = named(Region).map(parseRegion(name(Region), _))
      .orElse(impliedRegion)
      .orElse(endpoint.flatMap(regionFromEndpoint))
      .orElse(Try(new DefaultAwsRegionProviderChain().getRegion.id()).toOption)
      .getOrElse(throw KinesisErrors.regionUnresolved())
    AwsConnection(region, endpoint, credentials(named, name, region), tls = tls(get))
  }

  private def credentials(named: String => Option[String], name: String => String, region: String): AwsCredentialsConfig = {
    val keys: Option[AwsCredentialsConfig] = (named(AwsAccessKey), named(AwsSecretKey), named(AwsSessionToken)) match {
      case (Some(a), Some(s), token) => Some(AwsCredentialsConfig.StaticKeys(a, s, token))
      case (Some(_), None, _)        => throw KinesisErrors.optionRequiresOther(name(AwsAccessKey), name(AwsSecretKey))
      case (None, Some(_), _)        => throw KinesisErrors.optionRequiresOther(name(AwsSecretKey), name(AwsAccessKey))
      case (None, None, Some(_))     => throw KinesisErrors.optionRequiresOther(name(AwsSessionToken), name(AwsAccessKey))
      case (None, None, None)        => None
    }
    val providerClass = named(CredentialsProviderClass).map { cls =>
      if (keys.isDefined) throw KinesisErrors.conflictingOptions(name(CredentialsProviderClass), name(AwsAccessKey))
      AwsCredentialsConfig.ProviderClass(cls.trim, named(CredentialsProviderParam))
    }
    if (providerClass.isEmpty && named(CredentialsProviderParam).isDefined) {
      throw KinesisErrors.optionRequiresOther(name(CredentialsProviderParam), name(CredentialsProviderClass))
    }
    val base = keys.orElse(providerClass).getOrElse(AwsCredentialsConfig.DefaultChain)

    named(RoleArn) match {
      case None =>
        Seq(RoleExternalId, RoleSessionName, RoleSessionDuration, StsEndpoint, StsRegion).find(named(_).isDefined)
          .foreach(o => throw KinesisErrors.optionRequiresOther(name(o), name(RoleArn)))
        base
      case Some(arn) =>
        if (!RoleArnPattern.pattern.matcher(arn.trim).matches()) {
          throw KinesisErrors.invalidOption(name(RoleArn), arn, RoleArnAccepted)
        }
        val sessionName = Spec.roleSessionName.valueOrDefault(named).trim
        if (!SessionNamePattern.pattern.matcher(sessionName).matches()) {
          throw KinesisErrors.invalidOption(name(RoleSessionName), sessionName, SessionNameAccepted)
        }
        val duration = (Spec.roleSessionDuration.valueOrDefault(named) / 1000).toInt
        val externalId = named(RoleExternalId).map(_.trim)
        externalId.filterNot(id => ExternalIdPattern.pattern.matcher(id).matches()).foreach { _ =>
          // The external id is a shared secret of sorts: describe what is wrong without echoing it.
          throw KinesisErrors.invalidOption(name(RoleExternalId), "<not shown>", ExternalIdAccepted)
        }
        val sts = StsLocation(
          named(StsRegion).map(parseRegion(name(StsRegion), _)).getOrElse(region),
          named(StsEndpoint).map(parseUrl(name(StsEndpoint), _, StsUrlExample)))
        AwsCredentialsConfig.AssumeRole(arn.trim, externalId, sessionName, duration, base, sts)
    }
  }

  private def tls(get: String => Option[String]): TlsSettings = {
    val trustAll = Spec.insecureTrustAllCertificates.valueOrDefault(get)
    val bundle = get(CaBundle).map { path =>
      if (trustAll) throw KinesisErrors.conflictingOptions(CaBundle, InsecureTrustAllCertificates)
      val pem = Try(new String(Files.readAllBytes(Paths.get(path.trim)), StandardCharsets.US_ASCII))
        .getOrElse(throw KinesisErrors.invalidOption(CaBundle, path, CaBundleAccepted))
      Try(TlsSettings.certificates(pem))
        .getOrElse(throw KinesisErrors.invalidOption(CaBundle, path, "a PEM file holding at least one X.509 certificate"))
      pem
    }
    TlsSettings(bundle, trustAll)
  }

  private val RegionPattern = "[a-z]{2}(-[a-z]+)+-[0-9]+".r
  private val EndpointRegion = """(?:[a-z0-9-]+\.)*kinesis(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-[0-9]+)\.amazonaws\.com(?:\.cn)?""".r
  private val RoleArnPattern = """arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}""".r
  private val SessionNamePattern = """[\w+=,.@-]{2,64}""".r
  private val ExternalIdPattern = """[\w+=,.@:/-]{2,1224}""".r

  private def parseRegion(option: String, value: String): String = {
    val v = value.trim
    if (!RegionPattern.pattern.matcher(v).matches()) {
      throw KinesisErrors.invalidOption(option, value, RegionAccepted)
    }
    v
  }

  private def parseUrl(option: String, value: String, example: String): URI = {
    val accepted = urlAccepted(example)
    val uri = Try(new URI(value.trim)).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (!Set("http", "https").contains(Option(uri.getScheme).map(_.toLowerCase(Locale.ROOT)).orNull) || uri.getHost == null) {
      throw KinesisErrors.invalidOption(option, value, accepted)
    }
    uri
  }

  private def regionFromEndpoint(uri: URI): Option[String] = uri.getHost match {
    case EndpointRegion(region) => Some(region)
    case _                      => None
  }
}
