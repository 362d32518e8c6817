package io.kinesisspark.aws

/**
 * Implement this to hand the connector credentials of your own (option `credentialsProviderClass`). It is our own
 * interface rather than the AWS SDK's, because the SDK inside the connector's jar is relocated: a class compiled
 * against the SDK's `AwsCredentialsProvider` would not match it.
 *
 * The class needs a public constructor taking one `String` (given option `credentialsProviderParam`, or null when
 * it is not set) or a public no-argument constructor. One instance is made per JVM (driver and each executor) and
 * [[credentials]] is called for every request, so cache inside and refresh temporary credentials before they expire.
 *
 * {{{
 *   class VaultCredentials(path: String) extends KinesisCredentialsProvider {
 *     override def credentials(): KinesisCredentials = {
 *       val secret = Vault.read(path)
 *       KinesisCredentials(secret("id"), secret("key"), Some(secret("token")))
 *     }
 *   }
 *   // .option("credentialsProviderClass", "com.example.VaultCredentials")
 *   // .option("credentialsProviderParam", "secret/kinesis")
 * }}}
 */
trait KinesisCredentialsProvider {
  def credentials(): KinesisCredentials
}

/** Credentials returned by a [[KinesisCredentialsProvider]]; `sessionToken` for temporary ones. */
final case class KinesisCredentials(accessKeyId: String, secretAccessKey: String, sessionToken: Option[String] = None) {
  override def toString: String = "KinesisCredentials(<redacted>)"
}

object KinesisCredentials {
  /** For Java callers. */
  def of(accessKeyId: String, secretAccessKey: String, sessionToken: String): KinesisCredentials =
    KinesisCredentials(accessKeyId, secretAccessKey, Option(sessionToken))
}
