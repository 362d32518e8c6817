package io.kinesisspark.sink

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{AwslabsOptions, UnknownOptions, KinesisOptionKeys}
import io.kinesisspark.aws.AwsCredentialsConfig

class KinesisSinkOptionsSuite extends AnyFunSuite {
  private val base = Map("streamName" -> "clicks", "region" -> "us-east-1")

  private def rejected(options: Map[String, String]): String =
    intercept[IllegalArgumentException](KinesisSinkOptions.parse(options)).getMessage

  test("defaults") {
    val o = KinesisSinkOptions.parse(base)
    assert(o.stream.contains("clicks") && o.connection.region == "us-east-1")
    assert(o.partitionKeyFallback == PartitionKeyFallback.Fail && o.maxInflightRequests == 4 && o.maxPutRetries == 20)
    assert(!o.aggregation && o.aggregationMaxBytes == 51200 && !o.preserveKeyOrder)
    assert(o.connection.credentials == AwsCredentialsConfig.DefaultChain)
    assert(o.pacing.contains(ShardWriteLimits(1000, 1024L * 1024)))
  }

  test("aggregates are filled to tile a shard's second when paced, to aggregationMaxBytes otherwise") {
    def fill(options: (String, String)*) = KinesisSinkOptions.parse(base ++ options).aggregateFill().bytes
    assert(fill() == 49432)
    assert(fill("pacing" -> "false") == 51200)
    assert(fill("preserveKeyOrder" -> "true") == 51200)
    assert(fill("aggregationMaxBytes" -> "100000") == 94371) // 11 of them
    assert(fill("maxBytesPerShardPerSecond" -> "512k") == 47185)
  }

  test("pacing: on by default at Kinesis's limits, other limits for other quotas, off on request") {
    assert(KinesisSinkOptions.parse(base ++ Map("maxRecordsPerShardPerSecond" -> "500",
      "maxBytesPerShardPerSecond" -> "512k")).pacing.contains(ShardWriteLimits(500, 512 * 1024)))
    assert(KinesisSinkOptions.parse(base ++ Map("PACING" -> "false")).pacing.isEmpty)
    assert(rejected(base ++ Map("pacing" -> "yes")) == "Invalid value 'yes' for option 'pacing': expected 'true' or 'false'.")
    assert(rejected(base ++ Map("maxRecordsPerShardPerSecond" -> "0")) == "Invalid value '0' for option " +
      "'maxRecordsPerShardPerSecond': expected an integer from 1 to 1000000.")
    assert(rejected(base ++ Map("maxBytesPerShardPerSecond" -> "100")) == "Invalid value '100' for option " +
      "'maxBytesPerShardPerSecond': expected a byte size of at least 1024 bytes such as '1mb' or '524288'.")
    assert(rejected(base ++ Map("pacing" -> "false", "maxRecordsPerShardPerSecond" -> "500")) == "Invalid value " +
      "'false' for option 'pacing': expected 'true' when 'maxRecordsPerShardPerSecond' is set (the limits are what " +
      "pacing keeps each shard to).")
  }

  test("every sink option, case-insensitively, with the source's connection options") {
    val o = KinesisSinkOptions.parse(Map("STREAMNAME" -> "arn:aws:kinesis:eu-west-1:123456789012:stream/orders",
      "endpoint" -> "http://127.0.0.1:4568", "awsAccessKey" -> "AKID", "awsSecretKey" -> "secret",
      "partitionkeyfallback" -> "RANDOM", "maxInflightRequests" -> "16", "maxPutRetries" -> "0", "aggregation" -> "true",
      "aggregationMaxBytes" -> "1048576", "preserveKeyOrder" -> "TRUE"))
    assert(o.stream.contains("orders") && o.connection.region == "eu-west-1")
    assert(o.connection.streamArns == Map("orders" -> "arn:aws:kinesis:eu-west-1:123456789012:stream/orders"))
    assert(o.connection.credentials == AwsCredentialsConfig.StaticKeys("AKID", "secret"))
    assert(o.partitionKeyFallback == PartitionKeyFallback.Random && o.maxInflightRequests == 16 && o.maxPutRetries == 0)
    assert(o.aggregation && o.aggregationMaxBytes == 1048576 && o.preserveKeyOrder)
  }

  test("streamName is optional (rows may name their streams) but must be one stream") {
    assert(KinesisSinkOptions.parse(Map("region" -> "us-east-1")).stream.isEmpty)
    assert(rejected(base ++ Map("streamName" -> "a,b")) == "Invalid value 'a,b' for option 'streamName': expected one " +
      "stream name or stream ARN (the sink writes each row to one stream: route rows to several with a 'streamName' column).")
    assert(rejected(base ++ Map("streamName" -> "no spaces")).contains("Invalid value 'no spaces' for option 'streamName'"))
    assert(rejected(Map("region" -> "us-east-1", "streamName" -> "arn:aws:kinesis:eu-west-1:123456789012:stream/x"))
      .contains("a stream ARN in the region the sink connects to (us-east-1)"))
  }

  test("bad values name the option, the value and what is accepted") {
    assert(rejected(base + ("partitionKeyFallback" -> "hash")) == "Invalid value 'hash' for option " +
      "'partitionKeyFallback': expected 'fail' (a row without a partition key fails the write) or 'random' (such rows " +
      "get a random key).")
    assert(rejected(base + ("maxInflightRequests" -> "0")) ==
      "Invalid value '0' for option 'maxInflightRequests': expected an integer from 1 to 64.")
    assert(rejected(base + ("maxPutRetries" -> "-1")) ==
      "Invalid value '-1' for option 'maxPutRetries': expected an integer from 0 to 1000.")
    assert(rejected(base + ("aggregation" -> "yes")) == "Invalid value 'yes' for option 'aggregation': expected 'true' or 'false'.")
    assert(rejected(base + ("aggregationMaxBytes" -> "2000000")) ==
      "Invalid value '2000000' for option 'aggregationMaxBytes': expected an integer from 1024 to 1048576.")
    assert(rejected(base + ("preserveKeyOrder" -> "1")).contains("option 'preserveKeyOrder': expected 'true' or 'false'"))
    assert(rejected(base + ("awsAccessKey" -> "AKID")) ==
      "Option 'awsAccessKey' is set but 'awsSecretKey' is not: set both or neither.")
  }

  test("the awslabs alias aggregates by default; its sink options map onto ours or are explained") {
    assert(KinesisSinkOptions.parse(base, SinkFlavour.Awslabs).aggregation)
    val o = KinesisSinkOptions.parse(AwslabsOptions.translate(Map("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-2",
      "kinesis.endpointUrl" -> "http://127.0.0.1:4568", "kinesis.sink.aggregationEnabled" -> "false",
      "kinesis.sink.maxConnections" -> "2", "kinesis.sink.recordTtl" -> "30000")), SinkFlavour.Awslabs)
    assert(o.stream.contains("s") && o.connection.region == "us-east-2" && !o.aggregation && o.maxInflightRequests == 2)
    val warnings = AwslabsOptions.notNeededWarnings(Seq("kinesis.sink.flushWaitTimeMs", "kinesis.sink.recordMaxBufferedTimeMs",
      "kinesis.sink.recordTtl"))
    assert(warnings.size == 3)
    assert(warnings.exists(w => w.startsWith("Option 'kinesis.sink.recordTtl' of the awslabs connector is not needed") &&
      w.contains("never drops a row")))
  }

  test("options unknown to the sink are warned about with the closest sink option") {
    assert(UnknownOptions.warnings(Seq("aggregaton", "streamName"), KinesisOptionKeys.SinkAll) ==
      Seq("Option 'aggregaton' is not a kinesis-spark option and is ignored; did you mean 'aggregation'?"))
  }
}
