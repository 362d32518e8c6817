package io.kinesisspark.aws

import java.io.ByteArrayInputStream
import java.nio.charset.StandardCharsets
import java.security.KeyStore
import java.security.cert.{CertificateFactory, X509Certificate}
import javax.net.ssl.{TrustManager, TrustManagerFactory}

import scala.jdk.CollectionConverters._

/**
 * TLS trust for the connector's HTTPS connections (Kinesis and STS). Certificates are verified by default against
 * the JVM's trust store. `caBundlePem` (option `caBundle`, read on the driver and shipped with the options, so
 * executors need no copy of the file) replaces that trust store with the given certificates, like the AWS CLI's
 * `AWS_CA_BUNDLE`. `trustAllCertificates` (option `insecureTrustAllCertificates`) turns verification off, for local
 * emulators with self-signed certificates only.
 *
 * {{{
 *   TlsSettings(caBundlePem = Some(pemText)).trustManagers  // Some(Array(X509TrustManager over pemText's certificates))
 * }}}
 */
final case class TlsSettings(caBundlePem: Option[String] = None, trustAllCertificates: Boolean = false) {
  /** Trust managers for `caBundlePem`, or None for the JVM's default. */
  def trustManagers: Option[Array[TrustManager]] = caBundlePem.map { pem =>
    val store = KeyStore.getInstance(KeyStore.getDefaultType)
    store.load(null, null)
    TlsSettings.certificates(pem).zipWithIndex.foreach { case (cert, i) => store.setCertificateEntry(s"ca-$i", cert) }
    val factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm)
    factory.init(store)
    factory.getTrustManagers
  }

  override def toString: String =
    s"TlsSettings(caBundle=${caBundlePem.map(p => s"${TlsSettings.certificates(p).size} certificate(s)").getOrElse("JVM default")}, " +
      s"trustAll=$trustAllCertificates)"
}

object TlsSettings {
  /** The X.509 certificates of a PEM text; fails when there are none. */
  def certificates(pem: String): Seq[X509Certificate] = {
    val certs = CertificateFactory.getInstance("X.509")
      .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII))).asScala.toSeq
      .collect { case c: X509Certificate => c }
    if (certs.isEmpty) throw new IllegalArgumentException("no PEM certificate found")
    certs
  }
}
