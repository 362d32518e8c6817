package io.kinesisspark.aws

import scala.util.control.NonFatal

import org.apache.logging.log4j.Level
import org.apache.logging.log4j.core.config.Configurator

/**
 * Loggers inside our jar that write secrets at DEBUG, capped at INFO so that turning Spark's log level to DEBUG
 * never puts credentials in the logs:
 *  - the AWS SDK's request signer logs each canonical request, which holds the `x-amz-security-token` header (with
 *    `awsSessionToken` or an assumed role);
 *  - the Apache HTTP client's `wire` and `headers` loggers write every request's headers: `Authorization` (the
 *    access key id) and `X-Amz-Security-Token`.
 * Both are relocated into our own package (see the shade rules in build.sbt), so capping them touches nothing of the
 * user's own logging. Done once per JVM, before the first client is built.
 */
private[kinesisspark] object SdkLogging {
  /** The relocated package of the SDK's signers. */
  val SignerLoggers: String = classOf[software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner].getPackage.getName
    .stripSuffix(".signer").stripSuffix(".aws") // ...awssdk.http.auth

  /** The relocated package of the Apache HTTP client (its `wire` and `headers` loggers are below it). */
  val HttpClientLoggers: String = classOf[org.apache.http.HttpRequest].getPackage.getName

  lazy val capSecretLogging: Unit =
    try Seq(SignerLoggers, HttpClientLoggers).foreach(Configurator.setLevel(_, Level.INFO))
    catch {
      // Not log4j 2 underneath (a runtime with another SLF4J binding): its own configuration decides.
      case NonFatal(_) | _: LinkageError => ()
    }
}
