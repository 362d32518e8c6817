package io.kinesisspark.aws

import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.model.{ExpiredNextTokenException, KmsThrottlingException,
  LimitExceededException, ProvisionedThroughputExceededException}

import io.kinesisspark.KinesisSparkException

/**
 * What a failed Kinesis call means for whoever made it, for every caller: the source's readers and subscriptions,
 * the driver's listings, the sink's sender and the control-plane client's own retries. Three kinds:
 *
 *  - '''throttling''': Kinesis refused the call for now and will take it later. Besides the data plane's
 *    `ProvisionedThroughputExceededException`, the control plane answers `LimitExceededException` (HTTP 400) for
 *    calls over an API's quota, e.g. DescribeStreamSummary's 20 per second per account or ListShards' 1,000 per
 *    second per stream (the Kinesis API reference lists LimitExceededException under each control-plane action
 *    for too many requests or resources; the quotas are in the Developer Guide's "Quotas and limits"); a stream
 *    encrypted with a KMS key answers `KMSThrottlingException` when KMS throttles the stream's requests to it
 *    (listed under GetRecords, PutRecords and SubscribeToShard in the API reference). The AWS SDK counts only some
 *    of these codes as throttling (not `LimitExceededException`, not `KMSThrottlingException`), so this list is
 *    ours;
 *  - '''transient''': throttling, a 5xx, no answer at all (refused, reset, timed out), or a listing's expired
 *    pagination token (`ExpiredNextTokenException`: its pages took over 300 seconds; listing again from the first
 *    page works): worth a retry after a back-off;
 *  - everything else (a missing stream, refused credentials, a malformed request), which no retry fixes. The
 *    connector's own exceptions are never transient: they already say what to do. Among these, a call the
 *    caller's IAM policy does not allow ([[isAccessDenied]]): `AccessDeniedException`, which AWS answers with "User:
 *    ... is not authorized to perform: kinesis:<Operation> on resource: ..." (the IAM User Guide's "Troubleshoot
 *    access denied error messages"), and `KMSAccessDeniedException` for a stream encrypted with a KMS key the
 *    caller may not use (listed under GetRecords, PutRecords and SubscribeToShard in the Kinesis API reference).
 *    Every caller reports it by [[io.kinesisspark.KinesisErrors.permissionDenied]], which names the IAM action.
 *
 * {{{
 *   try api.describeStream("clicks")
 *   catch { case e: Exception if ErrorClassifier.isTransient(e) => retryLater() }
 *   ErrorClassifier.isThrottling(e)   // back off longer: the quota refills within a second
 * }}}
 */
object ErrorClassifier {

  /** Error codes of throttling, from Kinesis and from the services and SDK paths in front of it. */
  val ThrottlingCodes: Set[String] = Set("ProvisionedThroughputExceededException", "LimitExceededException",
    "KMSThrottlingException", "ThrottlingException", "Throttling", "TooManyRequestsException",
    "RequestLimitExceeded", "SlowDown")

  /** Kinesis (or the SDK in front of it) refused the call for now: it will be taken later. */
  def isThrottling(e: Throwable): Boolean = e match {
    case _: KinesisSparkException => false
    case _: ProvisionedThroughputExceededException | _: LimitExceededException | _: KmsThrottlingException => true
    case s: AwsServiceException   => s.isThrottlingException || s.statusCode() == 429 || ThrottlingCodes(errorCode(s))
    case _                        => false
  }

  /** Error codes of a call the caller's IAM policy (or the stream's KMS key policy) does not allow. */
  val AccessDeniedCodes: Set[String] = Set("AccessDeniedException", "KMSAccessDeniedException")

  /** The caller may not make this call: a permission is missing (see [[AccessDeniedCodes]]). */
  def isAccessDenied(e: Throwable): Boolean = e match {
    case s: AwsServiceException => AccessDeniedCodes(errorCode(s))
    case _                      => false
  }

  /**
   * The IAM action a denied call lacks: `kms:Decrypt` (reading) or `kms:GenerateDataKey` (writing) for a stream's
   * KMS key, which Kinesis uses on the caller's behalf (the Developer Guide's "Permissions to use user-generated KMS
   * keys"), otherwise `kinesis:` and the call's operation.
   */
  def deniedAction(operation: String, e: Throwable): String =
    if (errorCode(e) != "KMSAccessDeniedException") s"kinesis:$operation"
    else if (operation.startsWith("Put")) "kms:GenerateDataKey"
    else "kms:Decrypt"

  /**
   * Worth retrying after a back-off: throttling, a 5xx, no answer at all, an expired listing token, or no free
   * connection in the HTTP/2 client's pool.
   */
  def isTransient(e: Throwable): Boolean = e match {
    case _: KinesisSparkException => false
    case _: ExpiredNextTokenException => true
    case s: AwsServiceException   => isThrottling(s) || s.statusCode() >= 500
    case _: SdkClientException    => true
    case _ if isConnectionPoolFull(e) => true
    case _                        => false
  }

  /**
   * The SDK's Netty client found no connection for a call: none freed within its acquire timeout (a `TimeoutException`
   * underneath), or too many calls already waiting for one (an `IllegalStateException`). It hands an event stream's
   * handler (SubscribeToShard) these as a bare `Throwable` around that cause, not as an `SdkClientException` as it
   * does for other calls; seen when a thousand subscriptions start at once against a busy endpoint.
   */
  private def isConnectionPoolFull(e: Throwable): Boolean =
    e.getClass == classOf[Throwable] && (e.getCause match {
      case _: java.util.concurrent.TimeoutException | _: IllegalStateException => true
      case _ => false
    })

  /** The error code Kinesis answered (`LimitExceededException`, ...), or the exception's class name without one. */
  def errorCode(e: Throwable): String = e match {
    case s: AwsServiceException if s.awsErrorDetails() != null && s.awsErrorDetails().errorCode() != null =>
      s.awsErrorDetails().errorCode()
    case other => other.getClass.getSimpleName
  }

  /** The message Kinesis answered, without the SDK's request details, or the exception's own message. */
  def errorMessage(e: Throwable): String = e match {
    case s: AwsServiceException if s.awsErrorDetails() != null && s.awsErrorDetails().errorMessage() != null =>
      s.awsErrorDetails().errorMessage()
    case other => String.valueOf(other.getMessage)
  }
}
