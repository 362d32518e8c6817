package io.kinesisspark.aws

import java.time.Duration
import java.util.concurrent.ConcurrentHashMap

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, AwsCredentialsProvider, DefaultCredentialsProvider, StaticCredentialsProvider}
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.core.retry.RetryMode
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisClient

/**
 * One Kinesis client per [[AwsConnection]] per JVM (driver and each executor), built on first use and shared by
 * every task of that JVM. Clients hold connection pools and credential caches, so they are never rebuilt per
 * task and never serialized.
 */
object KinesisClients {
  private val apis = new ConcurrentHashMap[AwsConnection, KinesisApi]()

  def api(connection: AwsConnection): KinesisApi =
    apis.computeIfAbsent(connection, c => new SdkKinesisApi(syncClient(c), c))

  private def syncClient(connection: AwsConnection): KinesisClient = {
    val builder = KinesisClient.builder()
      .region(Region.of(connection.region))
      .credentialsProvider(credentialsProvider(connection.credentials))
      // An explicit HTTP client: the shaded jar must not depend on service-loader lookups of HTTP implementations.
      .httpClient(UrlConnectionHttpClient.builder()
        .connectionTimeout(Duration.ofSeconds(10))
        .socketTimeout(Duration.ofSeconds(30))
        .build())
      .overrideConfiguration(ClientOverrideConfiguration.builder().retryStrategy(RetryMode.STANDARD).build())
    connection.endpoint.foreach(builder.endpointOverride)
    builder.build()
  }

  private[aws] def credentialsProvider(config: AwsCredentialsConfig): AwsCredentialsProvider = config match {
    case AwsCredentialsConfig.DefaultChain => DefaultCredentialsProvider.builder().build()
    case AwsCredentialsConfig.StaticKeys(id, secret) =>
      StaticCredentialsProvider.create(AwsBasicCredentials.create(id, secret))
  }
}
