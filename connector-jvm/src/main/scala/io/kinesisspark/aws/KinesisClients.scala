package io.kinesisspark.aws

import java.util.concurrent.ConcurrentHashMap

import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.retries.api.RetryStrategy
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisClient

/**
 * One set of Kinesis clients per [[AwsConnection]] per JVM (driver and each executor), built on first use and shared by
 * every task of that JVM. Clients hold connection pools and credential caches, so they are never rebuilt per
 * task and never serialized.
 */
object KinesisClients {
  private val apis = new ConcurrentHashMap[AwsConnection, KinesisApi]()

  def api(connection: AwsConnection): KinesisApi =
    apis.computeIfAbsent(connection, c =>
      new SdkKinesisApi(control = syncClient(c, controlPlaneRetries),
        data = syncClient(c, AwsRetryStrategy.doNotRetry()), c))

  /**
   * Makes `api` the one every call for `connection` gets in this JVM (driver and, in local mode, the executors):
   * benchmarks and tests of the driver at shard counts no emulator holds, against an in-memory Kinesis.
   */
  private[kinesisspark] def install(connection: AwsConnection, api: KinesisApi): Unit = apis.put(connection, api)

  /** Attempts of a control-plane call: with the SDK's throttling back-off (exponential from 1 s up to 20 s, jittered),
   * about a minute of a quota shared with other applications before the error reaches the caller. */
  val ControlPlaneMaxAttempts = 8

  /**
   * The control plane's retries: the SDK's standard ones, and every throttling [[ErrorClassifier]] knows, with the
   * SDK's throttling back-off. The SDK does not count `LimitExceededException` as throttling, and it is what
   * DescribeStreamSummary, ListShards and the consumer APIs answer over their quotas (20 calls per second per
   * account for DescribeStreamSummary): without this, a query started on a busy account failed in `load()`.
   */
  private def controlPlaneRetries: RetryStrategy =
    AwsRetryStrategy.standardRetryStrategy().toBuilder
      .retryOnException((e: Throwable) => ErrorClassifier.isThrottling(e))
      .treatAsThrottling((e: Throwable) => ErrorClassifier.isThrottling(e))
      .maxAttempts(ControlPlaneMaxAttempts)
      .build()

  /**
   * @param retries the SDK's own retries: standard for control-plane calls; none for the data path, where
   *                [[io.kinesisspark.reader.polling.PollingShardReader]] decides (it must see throttling to slow down, and
   *                back off per shard rather than inside one blocked call)
   */
  private def syncClient(connection: AwsConnection, retries: RetryStrategy): KinesisClient = {
    SdkLogging.capSecretLogging
    val builder = KinesisClient.builder()
      .region(Region.of(connection.region))
      .credentialsProvider(CredentialsProviders.get(connection.credentials, connection.tls))
      .httpClient(HttpClients.sync(connection.tls))
      .overrideConfiguration(ClientOverrideConfiguration.builder().retryStrategy(retries).build())
    connection.endpoint.foreach(builder.endpointOverride)
    builder.build()
  }
}
