package io.kinesisspark.aws

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.awscore.exception.AwsErrorDetails
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.model.{ExpiredNextTokenException, InvalidArgumentException, KinesisException,
  KmsThrottlingException, LimitExceededException, ProvisionedThroughputExceededException, ResourceNotFoundException}

import io.kinesisspark.KinesisErrors

class ErrorClassifierSuite extends AnyFunSuite {

  private def answered(status: Int, code: String): KinesisException =
    KinesisException.builder().statusCode(status)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage("Rate exceeded").build()).build()
      .asInstanceOf[KinesisException]

  test("every throttling Kinesis answers is throttling, and transient: data plane, control plane, KMS") {
    val throttles = Seq(
      ProvisionedThroughputExceededException.builder().statusCode(400).message("shard").build(),
      // What DescribeStreamSummary over 20 calls per second per account answers; the SDK does not retry it.
      LimitExceededException.builder().statusCode(400).message("Rate exceeded for DescribeStreamSummary").build(),
      KmsThrottlingException.builder().statusCode(400).message("KMS").build(),
      answered(400, "LimitExceededException"),
      answered(400, "KMSThrottlingException"),
      answered(429, "TooManyRequestsException"))
    throttles.foreach { e =>
      assert(ErrorClassifier.isThrottling(e), e)
      assert(ErrorClassifier.isTransient(e), e)
    }
    assert(ErrorClassifier.errorCode(answered(400, "LimitExceededException")) == "LimitExceededException")
    assert(ErrorClassifier.errorMessage(answered(400, "LimitExceededException")) == "Rate exceeded")
  }

  test("no answer and 5xx pass without being throttling; refusals and our own errors do not pass") {
    val passing = Seq(SdkClientException.create("Connection refused"), answered(503, "ServiceUnavailable"),
      answered(500, "InternalFailure"),
      // A listing's pages took over 300 seconds: listing again from the first page works.
      ExpiredNextTokenException.builder().statusCode(400).message("token expired").build(),
      // How the SDK's Netty client hands SubscribeToShard's handler a pool with no connection to give.
      new Throwable("Acquire operation took longer than the configured maximum time.",
        new java.util.concurrent.TimeoutException("Acquire operation took longer than 10000 milliseconds.")),
      new Throwable("Too many outstanding acquire operations.",
        new IllegalStateException("Too many outstanding acquire operations")))
    passing.foreach { e =>
      assert(ErrorClassifier.isTransient(e), e)
      assert(!ErrorClassifier.isThrottling(e), e)
    }
    val final_ = Seq(InvalidArgumentException.builder().statusCode(400).message("bad").build(),
      ResourceNotFoundException.builder().statusCode(400).message("no stream").build(),
      answered(400, "AccessDeniedException"), new IllegalStateException("bug"),
      new Throwable("bug", new IllegalArgumentException("bad")), new java.util.concurrent.TimeoutException("ours"),
      KinesisErrors.streamNotFound("clicks", "us-east-1", "http://127.0.0.1:1"))
    final_.foreach { e =>
      assert(!ErrorClassifier.isTransient(e), e)
      assert(!ErrorClassifier.isThrottling(e), e)
    }
    assert(ErrorClassifier.errorCode(new IllegalStateException("bug")) == "IllegalStateException")
  }

  test("a denied permission is told apart from refused credentials, and the message names the IAM action") {
    assert(ErrorClassifier.isAccessDenied(answered(400, "AccessDeniedException")))
    assert(ErrorClassifier.isAccessDenied(answered(400, "KMSAccessDeniedException")))
    assert(!ErrorClassifier.isAccessDenied(answered(400, "UnrecognizedClientException")))
    assert(!ErrorClassifier.isAccessDenied(new IllegalStateException("AccessDeniedException")))
    assert(ErrorClassifier.deniedAction("GetRecords", answered(400, "AccessDeniedException")) == "kinesis:GetRecords")
    // Kinesis uses the stream's KMS key on the caller's behalf: decrypting to read, a data key to write.
    assert(ErrorClassifier.deniedAction("GetRecords", answered(400, "KMSAccessDeniedException")) == "kms:Decrypt")
    assert(ErrorClassifier.deniedAction("PutRecords", answered(400, "KMSAccessDeniedException")) == "kms:GenerateDataKey")
    val cause = answered(400, "AccessDeniedException")
    val e = KinesisErrors.permissionDenied("ListShards", "Kinesis stream 'clicks'", "kinesis:ListShards",
      Some("the keys of options 'awsAccessKey' and 'awsSecretKey'"), "AccessDeniedException: User: u is not authorized", cause)
    assert(e.getMessage == "ListShards on Kinesis stream 'clicks' was denied: the AWS credentials (the keys of options " +
      "'awsAccessKey' and 'awsSecretKey') lack the IAM permission kinesis:ListShards; AWS said: AccessDeniedException: " +
      "User: u is not authorized. Allow kinesis:ListShards for these credentials on the resource AWS named " +
      "(docs/permissions.md lists the actions each way of reading and writing needs).")
    assert(e.getCause eq cause)
  }
}
