package io.kinesisspark.aws

import java.time.Duration

import software.amazon.awssdk.http.apache.ApacheHttpClient
import software.amazon.awssdk.http.{Protocol, ProtocolNegotiation, SdkHttpClient, SdkHttpConfigurationOption, TlsTrustManagersProvider}
import software.amazon.awssdk.http.async.SdkAsyncHttpClient
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.utils.AttributeMap

import io.kinesisspark.TestSettings

/**
 * The HTTP clients of every SDK client the connector builds, with the connector's TLS trust: synchronous
 * (Apache's connection pool) for Kinesis and STS calls, and HTTP/2 (Netty) for SubscribeToShard. Explicit rather
 * than found by the SDK's service loader, which a shaded jar must not depend on.
 */
private[kinesisspark] object HttpClients {
  /**
   * One pool per client, and [[KinesisClients]] keeps one client per connection per JVM, so every reader an
   * executor runs reuses the same connections (and, against AWS, their TLS sessions). URLConnection, used before,
   * kept 5 idle connections per host for the whole JVM (`http.maxConnections`) and closed the rest after each call,
   * so an executor reading more shards at once made a new connection for many of its calls.
   */
  def sync(tls: TlsSettings): SdkHttpClient = {
    val builder = ApacheHttpClient.builder()
      .maxConnections(Integer.valueOf(MaxConnections))
      .connectionTimeout(Duration.ofSeconds(10))
      .socketTimeout(socketTimeout(Duration.ofSeconds(30)))
      .connectionMaxIdleTime(Duration.ofSeconds(60))
      .tcpKeepAlive(java.lang.Boolean.TRUE)
    tls.trustManagers.foreach(managers => builder.tlsTrustManagersProvider(trusting(managers)))
    builder.buildWithDefaults(defaults(tls))
  }

  /**
   * Connections one client opens at most: one per call in flight, so as many as the JVM's readers call at once
   * (a task reads its shards on one thread). The SDK's default of 50 would make the 51st concurrent reader wait
   * for a connection; connections are only opened when needed and closed after a minute idle.
   */
  private val MaxConnections = 1000

  /**
   * HTTP/2 for SubscribeToShard, which needs it. Over TLS the protocol is agreed by ALPN; on a plain `http://`
   * endpoint (local emulators) there is nothing to negotiate with, so the client speaks HTTP/2 at once (h2c with
   * prior knowledge). Each subscription holds one HTTP/2 stream for up to 5 minutes, so concurrency is not capped
   * at the SDK's default of 50 (an executor may own hundreds of shards).
   */
  def http2(tls: TlsSettings, plainText: Boolean): SdkAsyncHttpClient = {
    val builder = NettyNioAsyncHttpClient.builder()
      .protocol(Protocol.HTTP2)
      .protocolNegotiation(if (plainText) ProtocolNegotiation.ASSUME_PROTOCOL else ProtocolNegotiation.ALPN)
      .maxConcurrency(Integer.valueOf(MaxSubscriptions))
      .connectionTimeout(Duration.ofSeconds(10))
      .readTimeout(socketTimeout(Duration.ofSeconds(60)))
    tls.trustManagers.foreach(managers => builder.tlsTrustManagersProvider(trusting(managers)))
    builder.buildWithDefaults(defaults(tls))
  }

  private val MaxSubscriptions = 10000

  /** How long a call may go without a byte of answer: `production`, or the test-only setting (a hung connection is
   * then given up in seconds). */
  private def socketTimeout(production: Duration): Duration =
    TestSettings.long(TestSettings.SocketTimeoutMs).fold(production)(ms => Duration.ofMillis(ms))

  private def trusting(managers: Array[javax.net.ssl.TrustManager]): TlsTrustManagersProvider =
    new TlsTrustManagersProvider { override def trustManagers() = managers }

  private def defaults(tls: TlsSettings): AttributeMap =
    if (tls.trustAllCertificates) {
      AttributeMap.builder().put(SdkHttpConfigurationOption.TRUST_ALL_CERTIFICATES, java.lang.Boolean.TRUE).build()
    } else AttributeMap.empty()
}
