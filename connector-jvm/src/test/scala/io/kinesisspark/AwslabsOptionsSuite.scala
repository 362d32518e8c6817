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

  test("features this version lacks are refused, not ignored") {
    val efo = intercept[IllegalArgumentException](AwslabsOptions.translate(Map("kinesis.consumerType" -> "SubscribeToShard")))
    assert(efo.getMessage.contains("'kinesis.consumerType'") && efo.getMessage.contains("SubscribeToShard"))
    val sts = intercept[IllegalArgumentException](AwslabsOptions.translate(Map("kinesis.stsRoleArn" -> "arn:aws:iam::1:role/r")))
    assert(sts.getMessage.contains("'kinesis.stsRoleArn'") && !sts.getMessage.contains("arn:aws"))
  }

  test("an option and its alias together are refused") {
    val e = intercept[IllegalArgumentException](AwslabsOptions.translate(Map("streamName" -> "a", "kinesis.streamName" -> "b")))
    assert(e.getMessage.contains("'streamName'"))
  }

  test("other kinesis.* options pass through, to be warned about as unknown") {
    val t = AwslabsOptions.translate(Map("kinesis.metadataCommitterType" -> "HDFS", "kinesis.streamName" -> "s"))
    assert(t == Map("kinesis.metadataCommitterType" -> "HDFS", "streamName" -> "s"))
    assert(UnknownOptions.warnings(t.keys).map(_.take(45)) == Seq("Option 'kinesis.metadataCommitterType' is not"))
  }
}
