package io.kinesisspark.aws

import java.net.URI

/**
 * How credentials are obtained, parsed from the options once and shipped to executors inside tasks; the SDK
 * providers are built from it on each JVM ([[CredentialsProviders]]). `toString` never shows a secret, and
 * neither do the messages of errors about it.
 *
 * {{{
 *   AwsCredentialsConfig.AssumeRole("arn:aws:iam::123456789012:role/reader", externalId = None,
 *     sessionName = "kinesis-spark", sessionDurationSeconds = 3600,
 *     base = AwsCredentialsConfig.DefaultChain, sts = StsLocation("us-east-1", None))
 * }}}
 */
sealed trait AwsCredentialsConfig extends Serializable {
  /** What the credentials are, for error messages: never a secret. */
  def description: String
}

object AwsCredentialsConfig {
  /** The AWS SDK's default provider chain (environment, system properties, profiles, web identity, metadata). */
  case object DefaultChain extends AwsCredentialsConfig {
    override def description: String =
      "the AWS SDK's default credentials chain (environment variables, Java system properties, web identity " +
        "token, profile files, container and instance metadata)"
  }

  /** Keys given as options `awsAccessKey` / `awsSecretKey`, and `awsSessionToken` for temporary keys. */
  final case class StaticKeys(accessKeyId: String, secretAccessKey: String, sessionToken: Option[String] = None)
      extends AwsCredentialsConfig {
    override def toString: String = "StaticKeys(<redacted>)"
    override def description: String =
      if (sessionToken.isDefined) "the temporary keys of options 'awsAccessKey', 'awsSecretKey' and 'awsSessionToken'"
      else "the keys of options 'awsAccessKey' and 'awsSecretKey'"
  }

  /**
   * STS AssumeRole (`roleArn`), with `base` credentials (keys or the default chain) assuming the role. The
   * session is refreshed before it expires.
   */
  final case class AssumeRole(
      roleArn: String,
      externalId: Option[String],
      sessionName: String,
      sessionDurationSeconds: Int,
      base: AwsCredentialsConfig,
      sts: StsLocation) extends AwsCredentialsConfig {
    override def toString: String =
      s"AssumeRole($roleArn, externalId=${externalId.map(_ => "<redacted>")}, session=$sessionName, base=$base)"
    override def description: String =
      s"role '$roleArn' assumed through STS at ${sts.description} with ${base.description}"
  }

  /** A class of the user's implementing [[KinesisCredentialsProvider]], made on each JVM with `param`. */
  final case class ProviderClass(className: String, param: Option[String]) extends AwsCredentialsConfig {
    override def toString: String = s"ProviderClass($className)"
    override def description: String = s"the credentials provider class '$className' (option 'credentialsProviderClass')"
  }
}

/** Where STS is called: its region and, for tests and private endpoints, an endpoint override. */
final case class StsLocation(region: String, endpoint: Option[URI]) {
  def description: String = endpoint.map(_.toString).getOrElse(s"the regional endpoint of $region")
}
