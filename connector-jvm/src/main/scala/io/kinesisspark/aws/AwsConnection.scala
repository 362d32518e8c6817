package io.kinesisspark.aws

import java.net.URI

/**
 * Everything needed to build AWS clients on any JVM: region, optional endpoint override, and how to find
 * credentials. It travels to executors inside tasks; clients and credential providers are built from it on
 * each JVM (see [[KinesisClients]]) and never serialized.
 */
final case class AwsConnection(region: String, endpoint: Option[URI], credentials: AwsCredentialsConfig) {
  def endpointDescription: String = endpoint.map(_.toString).getOrElse(s"the default endpoint of $region")
}

/** How credentials are obtained. `toString` never shows a secret. */
sealed trait AwsCredentialsConfig extends Serializable

object AwsCredentialsConfig {
  /** The AWS SDK's default provider chain (environment, system properties, profiles, web identity, metadata). */
  case object DefaultChain extends AwsCredentialsConfig

  /** Keys given as options `awsAccessKey` / `awsSecretKey`. */
  final case class StaticKeys(accessKeyId: String, secretAccessKey: String) extends AwsCredentialsConfig {
    override def toString: String = "StaticKeys(<redacted>)"
  }
}
