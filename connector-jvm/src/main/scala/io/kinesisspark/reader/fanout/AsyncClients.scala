package io.kinesisspark.reader.fanout

import java.util.Locale
import java.util.concurrent.ConcurrentHashMap

import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient

import io.kinesisspark.aws.{AwsConnection, CredentialsProviders, HttpClients, SdkLogging}

/**
 * One asynchronous Kinesis client per [[AwsConnection]] per JVM, on the HTTP/2 Netty client, for SubscribeToShard
 * (the only call that needs it). Built on first use on the executor that owns a shard's subscription, shared by
 * every subscription of that JVM, never serialized. The SDK's retries are off: [[ShardSubscription]] decides when
 * and how to subscribe again.
 */
object AsyncClients {
  private val clients = new ConcurrentHashMap[AwsConnection, KinesisAsyncClient]()

  def kinesis(connection: AwsConnection): KinesisAsyncClient =
    clients.computeIfAbsent(connection, c => {
      SdkLogging.capSecretLogging
      val plainText = c.endpoint.exists(_.getScheme.toLowerCase(Locale.ROOT) == "http")
      val builder = KinesisAsyncClient.builder()
        .region(Region.of(c.region))
        .credentialsProvider(CredentialsProviders.get(c.credentials, c.tls))
        .httpClient(HttpClients.http2(c.tls, plainText))
        .overrideConfiguration(ClientOverrideConfiguration.builder().retryStrategy(AwsRetryStrategy.doNotRetry()).build())
      c.endpoint.foreach(builder.endpointOverride)
      builder.build()
    })
}
