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

  private val RegionAccepted = "an AWS region name such as 'us-east-1'"
  private def urlAccepted(example: String) = s"an http:// or https:// URL such as '$example'"
  private val KinesisUrlExample = "https://kinesis.us-east-1.amazonaws.com"
  private val StsUrlExample = "https://sts.us-east-1.amazonaws.com"
  private val RoleArnAccepted = "an IAM role ARN such as 'arn:aws:iam::123456789012:role/kinesis-reader'"
  private val SessionNameAccepted = "2 to 64 characters from a-z, A-Z, 0-9 and '=,.@-_'"
  private val ExternalIdAccepted = "2 to 1,224 characters from a-z, A-Z, 0-9 and '+=,.@:/-'"
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
   */
  def parse(get: String => Option[String], impliedRegion: Option[String] = None): AwsConnection = {
    val endpoint = get(Endpoint).map(parseUrl(Endpoint, _, KinesisUrlExample))
    val region = get(Region).map(parseRegion(Region, _))
      .orElse(impliedRegion)
      .orElse(endpoint.flatMap(regionFromEndpoint))
      .orElse(Try(new DefaultAwsRegionProviderChain().getRegion.id()).toOption)
      .getOrElse(throw KinesisErrors.regionUnresolved())
    AwsConnection(region, endpoint, credentials(get, region), tls = tls(get))
  }

  private def credentials(get: String => Option[String], region: String): AwsCredentialsConfig = {
    val keys: Option[AwsCredentialsConfig] = (get(AwsAccessKey), get(AwsSecretKey), get(AwsSessionToken)) match {
      case (Some(a), Some(s), token) => Some(AwsCredentialsConfig.StaticKeys(a, s, token))
      case (Some(_), None, _)        => throw KinesisErrors.optionRequiresOther(AwsAccessKey, AwsSecretKey)
      case (None, Some(_), _)        => throw KinesisErrors.optionRequiresOther(AwsSecretKey, AwsAccessKey)
      case (None, None, Some(_))     => throw KinesisErrors.optionRequiresOther(AwsSessionToken, AwsAccessKey)
      case (None, None, None)        => None
    }
    val providerClass = get(CredentialsProviderClass).map { name =>
      if (keys.isDefined) throw KinesisErrors.conflictingOptions(CredentialsProviderClass, AwsAccessKey)
      AwsCredentialsConfig.ProviderClass(name.trim, get(CredentialsProviderParam))
    }
    if (providerClass.isEmpty && get(CredentialsProviderParam).isDefined) {
      throw KinesisErrors.optionRequiresOther(CredentialsProviderParam, CredentialsProviderClass)
    }
    val base = keys.orElse(providerClass).getOrElse(AwsCredentialsConfig.DefaultChain)

    get(RoleArn) match {
      case None =>
        Seq(RoleExternalId, RoleSessionName, RoleSessionDuration, StsEndpoint, StsRegion).find(get(_).isDefined)
          .foreach(o => throw KinesisErrors.optionRequiresOther(o, RoleArn))
        base
      case Some(arn) =>
        if (!RoleArnPattern.pattern.matcher(arn.trim).matches()) {
          throw KinesisErrors.invalidOption(RoleArn, arn, RoleArnAccepted)
        }
        val sessionName = Spec.roleSessionName.valueOrDefault(get).trim
        if (!SessionNamePattern.pattern.matcher(sessionName).matches()) {
          throw KinesisErrors.invalidOption(RoleSessionName, sessionName, SessionNameAccepted)
        }
        val duration = (Spec.roleSessionDuration.valueOrDefault(get) / 1000).toInt
        val externalId = get(RoleExternalId).map(_.trim)
        externalId.filterNot(id => ExternalIdPattern.pattern.matcher(id).matches()).foreach { _ =>
          // The external id is a shared secret of sorts: describe what is wrong without echoing it.
          throw KinesisErrors.invalidOption(RoleExternalId, "<not shown>", ExternalIdAccepted)
        }
        val sts = StsLocation(
          get(StsRegion).map(parseRegion(StsRegion, _)).getOrElse(region),
          get(StsEndpoint).map(parseUrl(StsEndpoint, _, StsUrlExample)))
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
