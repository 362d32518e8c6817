package io.kinesisspark.aws

import java.net.URI

/**
 * Everything needed to build AWS clients on any JVM: region, optional endpoint override, how to find
 * credentials, and TLS trust. It travels to executors inside tasks; clients and credential providers are built from it on
 * each JVM (see [[KinesisClients]]) and never serialized.
 *
 * @param streamArns stream name to ARN, for streams given by ARN: calls name them by ARN (which also reaches
 *                   streams of other accounts shared through a resource policy)
 */
final case class AwsConnection(
    region: String,
    endpoint: Option[URI],
    credentials: AwsCredentialsConfig,
    streamArns: Map[String, String] = Map.empty,
    tls: TlsSettings = TlsSettings()) {
  def endpointDescription: String = endpoint.map(_.toString).getOrElse(s"the default endpoint of $region")
}
