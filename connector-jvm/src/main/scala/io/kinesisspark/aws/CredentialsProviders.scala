package io.kinesisspark.aws

import java.time.Duration
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import software.amazon.awssdk.auth.credentials._
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.sts.StsClient
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider
import software.amazon.awssdk.services.sts.model.AssumeRoleRequest

import io.kinesisspark.KinesisErrors

/**
 * One SDK credentials provider per [[AwsCredentialsConfig]] (and TLS settings, which STS calls use too) per JVM,
 * shared by every client of that JVM: an assumed role is one STS session refreshed in the background, not one per
 * client or task. Providers are built from the options on each JVM and never serialized.
 */
object CredentialsProviders {
  private val providers = new ConcurrentHashMap[(AwsCredentialsConfig, TlsSettings), AwsCredentialsProvider]()

  /**
   * When an assumed role's credentials are refreshed: from `prefetch` before they expire, in the background, at a
   * moment the SDK spreads out (with jitter) until `stale` before expiry, after which a request waits for new ones.
   * Tests shorten the cycle with the system property `kinesisspark.sts.refreshBeforeExpirySeconds` (STS sessions
   * last at least 15 minutes), which also narrows the jitter to a second.
   */
  private def refreshWindow(sessionSeconds: Int): (Duration, Duration) =
    Option(System.getProperty("kinesisspark.sts.refreshBeforeExpirySeconds")).map(_.toLong) match {
      case Some(s) => (Duration.ofSeconds(s), Duration.ofSeconds(s - 1))
      case None =>
        val prefetch = Duration.ofSeconds(math.min(300L, sessionSeconds / 4L))
        (prefetch, prefetch.dividedBy(2))
    }

  def get(config: AwsCredentialsConfig, tls: TlsSettings): AwsCredentialsProvider = {
    val cached = providers.get((config, tls))
    if (cached != null) cached
    else {
      // An assumed role signs its STS calls with its base provider. That one is looked up (and cached) first, outside
      // computeIfAbsent: a map update may not start another update of the same map (it fails with "Recursive update").
      val base = config match {
        case role: AwsCredentialsConfig.AssumeRole => Some(get(role.base, tls))
        case _                                     => None
      }
      providers.computeIfAbsent((config, tls), _ => build(config, tls, base))
    }
  }

  private def build(config: AwsCredentialsConfig, tls: TlsSettings, base: Option[AwsCredentialsProvider])
      : AwsCredentialsProvider = config match {
    case AwsCredentialsConfig.DefaultChain => DefaultCredentialsProvider.builder().build()
    case AwsCredentialsConfig.StaticKeys(id, secret, None) =>
      StaticCredentialsProvider.create(AwsBasicCredentials.create(id, secret))
    case AwsCredentialsConfig.StaticKeys(id, secret, Some(token)) =>
      StaticCredentialsProvider.create(AwsSessionCredentials.create(id, secret, token))
    case role: AwsCredentialsConfig.AssumeRole => assumeRole(role, tls, base.get)
    case AwsCredentialsConfig.ProviderClass(name, param) => new UserProvider(instantiate(name, param))
  }

  private def assumeRole(role: AwsCredentialsConfig.AssumeRole, tls: TlsSettings, base: AwsCredentialsProvider)
      : AwsCredentialsProvider = {
    SdkLogging.capSecretLogging
    val sts = StsClient.builder()
      .region(Region.of(role.sts.region))
      .credentialsProvider(base)
      .httpClient(HttpClients.sync(tls))
    role.sts.endpoint.foreach(sts.endpointOverride)
    val request = AssumeRoleRequest.builder()
      .roleArn(role.roleArn)
      .roleSessionName(role.sessionName)
      .durationSeconds(role.sessionDurationSeconds)
    role.externalId.foreach(request.externalId)
    val (prefetch, stale) = refreshWindow(role.sessionDurationSeconds)
    StsAssumeRoleCredentialsProvider.builder()
      .stsClient(sts.build())
      .refreshRequest(request.build())
      .asyncCredentialUpdateEnabled(true) // refreshed in the background, so no request waits on STS
      .prefetchTime(prefetch)
      .staleTime(stale)
      .build()
  }

  private def instantiate(name: String, param: Option[String]): KinesisCredentialsProvider = {
    val cls =
      try Class.forName(name, true, Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader))
      catch { case NonFatal(_) => throw KinesisErrors.credentialsProviderClass(name, "the class cannot be found on the classpath") }
    if (!classOf[KinesisCredentialsProvider].isAssignableFrom(cls)) {
      throw KinesisErrors.credentialsProviderClass(name, s"it does not implement ${classOf[KinesisCredentialsProvider].getName} " +
        "(a provider written for the awslabs connector must be adapted to it)")
    }
    val instance =
      try cls.getConstructor(classOf[String]).newInstance(param.orNull)
      catch {
        case _: NoSuchMethodException =>
          try cls.getConstructor().newInstance()
          catch {
            case _: NoSuchMethodException => throw KinesisErrors.credentialsProviderClass(name,
              "it has neither a public constructor taking one String nor a public no-argument constructor")
          }
      }
    instance.asInstanceOf[KinesisCredentialsProvider]
  }

  /** A user's [[KinesisCredentialsProvider]] as an SDK provider. */
  private final class UserProvider(user: KinesisCredentialsProvider) extends AwsCredentialsProvider {
    override def resolveCredentials(): AwsCredentials = {
      val c = user.credentials()
      c.sessionToken match {
        case Some(token) => AwsSessionCredentials.create(c.accessKeyId, c.secretAccessKey, token)
        case None        => AwsBasicCredentials.create(c.accessKeyId, c.secretAccessKey)
      }
    }
  }
}
