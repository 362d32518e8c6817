package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

class AwslabsOptionsSuite extends AnyFunSuite {
  private def parse(options: (String, String)*): KinesisSourceOptions =
    KinesisSourceOptions.parse(AwslabsOptions.translate(options.toMap))

  test("the awslabs names map onto ours, values included") {
    val o = parse("kinesis.streamName" -> "s", "kinesis.endpointUrl" -> "http://127.0.0.1:4568",
      "kinesis.region" -> "us-east-2", "kinesis.startingPosition" -> "TRIM_HORIZON", "kinesis.failOnDataLoss" -> "false",
      "kinesis.awsAccessKeyId" -> "AKID", "kinesis.awsSecretKey" -> "secret", "kinesis.consumerType" -> "GetRecords",
      "kinesis.getRecords.numberOfRecordsPerFetch" -> "500", "kinesis.getRecords.fetchIntervalMs" -> "250",
      "kinesis.describeShardInterval" -> "5s")
    assert(o.streams == Seq("s") && o.connection.region == "us-east-2")
    assert(o.connection.endpoint.map(_.toString).contains("http://127.0.0.1:4568"))
    assert(o.initialPosition == InitialPosition.TrimHorizon && !o.failOnDataLoss)
    assert(o.connection.credentials == aws.AwsCredentialsConfig.StaticKeys("AKID", "secret"))
    assert(o.maxRecordsPerFetch == 500 && o.minFetchPeriodMs == 250 && o.shardFetchIntervalMs == 5000)
  }

  test("starting positions in the awslabs forms") {
    assert(parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1", "kinesis.startingposition" -> "LATEST")
      .initialPosition == InitialPosition.Latest)
    assert(parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1", "kinesis.startingPosition" -> "EARLIEST")
      .initialPosition == InitialPosition.TrimHorizon)
    assert(parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1",
      "kinesis.startingPosition" -> "AT_TIMESTAMP 2023-08-30T19:00:05-08:00").initialPosition ==
      InitialPosition.AtTimestamp(java.time.OffsetDateTime.parse("2023-08-30T19:00:05-08:00").toInstant.toEpochMilli))
    assert(parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1",
      "kinesis.startingPosition" -> "AT_TIMESTAMP 2023-08-30T19:00:05Z").initialPosition ==
      InitialPosition.AtTimestamp(java.time.Instant.parse("2023-08-30T19:00:05Z").toEpochMilli))
  }

  test("the stream's region wins over the connector's") {
    assert(parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1", "kinesis.kinesisRegion" -> "eu-west-1")
      .connection.region == "eu-west-1")
  }

  test("SubscribeToShard is enhanced fan-out, under the awslabs consumer name exactly as given (no prefix)") {
    val o = parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1",
      "kinesis.consumerType" -> "SubscribeToShard", "kinesis.consumerName" -> "TestConsumer")
    assert(o.efo.map(_.consumerName(Seq("s"), "s", None)).contains("TestConsumer"))
    val prefixed = parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1", "consumerNamePrefix" -> "p_",
      "kinesis.consumerType" -> "subscribetoshard", "kinesis.consumerName" -> "TestConsumer")
    assert(prefixed.efo.map(_.consumerName(Seq("s"), "s", None)).contains("p_TestConsumer"))
    assert(parse("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1", "kinesis.consumerType" -> "GetRecords")
      .efo.isEmpty)
    val bad = intercept[IllegalArgumentException](AwslabsOptions.translate(Map("kinesis.consumerType" -> "Push")))
    assert(bad.getMessage.contains("'kinesis.consumerType'") && bad.getMessage.contains("'SubscribeToShard'"))
  }

  test("the awslabs STS and provider-class options become ours") {
    val t = AwslabsOptions.translate(Map("kinesis.stsRoleArn" -> "arn:aws:iam::123456789012:role/r",
      "kinesis.stsSessionName" -> "s1", "kinesis.stsEndpointUrl" -> "http://127.0.0.1:5000",
      "kinesis.credentialProviderClass" -> "a.B", "kinesis.credentialProviderParam" -> "p"))
    assert(t == Map("roleArn" -> "arn:aws:iam::123456789012:role/r", "roleSessionName" -> "s1",
      "stsEndpoint" -> "http://127.0.0.1:5000", "credentialsProviderClass" -> "a.B", "credentialsProviderParam" -> "p"))
  }

  test("an option and its alias together are refused") {
    val e = intercept[IllegalArgumentException](AwslabsOptions.translate(Map("streamName" -> "a", "kinesis.streamName" -> "b")))
    assert(e.getMessage.contains("'streamName'"))
  }

  test("options without meaning here are dropped with a warning saying why; other kinesis.* options pass through") {
    val t = AwslabsOptions.translate(Map("kinesis.metadataCommitterType" -> "HDFS", "kinesis.streamName" -> "s",
      "kinesis.typoOption" -> "x"))
    assert(t == Map("kinesis.typoOption" -> "x", "streamName" -> "s"))
    val warnings = AwslabsOptions.notNeededWarnings(Seq("kinesis.metadataCommitterType", "kinesis.streamName"))
    assert(warnings.size == 1 && warnings.head.contains("'kinesis.metadataCommitterType'") &&
      warnings.head.contains("checkpoint"), warnings)
    assert(UnknownOptions.warnings(t.keys).map(_.take(35)) == Seq("Option 'kinesis.typoOption' is not "))
  }
}
