package io.kinesisspark.aws

import scala.util.control.NonFatal

import org.apache.logging.log4j.Level
import org.apache.logging.log4j.core.config.Configurator

/**
 * The AWS SDK's request signer logs each canonical request at DEBUG, and a canonical request holds the
 * `x-amz-security-token` header: with `awsSessionToken` or an assumed role, turning Spark's log level to DEBUG would
 * write the session token into the logs. The SDK inside our jar logs under our relocated package, so capping that
 * package's signer loggers at INFO touches nothing of the user's own logging. Done once per JVM, before the first
 * client is built.
 */
private[kinesisspark] object SdkLogging {
  /** The relocated package of the SDK's signers (see the shade rules in build.sbt). */
  val SignerLoggers: String = classOf[software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner].getPackage.getName
    .stripSuffix(".signer").stripSuffix(".aws") // ...awssdk.http.auth

  lazy val capSignerLogging: Unit =
    try Configurator.setLevel(SignerLoggers, Level.INFO)
    catch {
      // Not log4j 2 underneath (a runtime with another SLF4J binding): its own configuration decides.
      case NonFatal(_) | _: LinkageError => ()
    }
}
