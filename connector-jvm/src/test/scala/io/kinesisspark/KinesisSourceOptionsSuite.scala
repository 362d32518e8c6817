package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.aws.AwsCredentialsConfig

class KinesisSourceOptionsSuite extends AnyFunSuite {
  private val base = Map("streamName" -> "clicks", "region" -> "us-east-1")

  private def rejected(options: Map[String, String]): String =
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(options)).getMessage

  test("defaults follow the Databricks guide") {
    val o = KinesisSourceOptions.parse(base)
    assert(o.streams == Seq("clicks"))
    assert(o.connection.region == "us-east-1")
    assert(o.connection.endpoint.isEmpty)
    assert(o.initialPosition == InitialPosition.Latest)
    assert(o.maxRecordsPerFetch == 10000)
    assert(o.failOnDataLoss)
    assert(o.connection.credentials == AwsCredentialsConfig.DefaultChain)
    assert(o.maxFetchRateBytesPerSec == 1024 * 1024)
    assert(o.minFetchPeriodMs == 400 && o.maxFetchDurationMs == 10000 && o.shardFetchIntervalMs == 1000)
    assert(o.fetchBufferSizeBytes == (20L << 30) && o.shardsPerTask == 5 && o.maxShardsPerDescribe == 1000)
    assert(o.coalesceThresholdBlockSize == 10000000L && o.coalesceBinSize == 128000000L)
    assert(o.maxRecordsPerTrigger.isEmpty && o.maxBytesPerTrigger.isEmpty)
  }

  test("durations and byte sizes take the guide's string forms") {
    val o = KinesisSourceOptions.parse(base ++ Map("minFetchPeriod" -> "210ms", "maxFetchDuration" -> "2m",
      "shardFetchInterval" -> "1s", "fetchBufferSize" -> "10mb", "maxBytesPerTrigger" -> "2gb", "maxFetchRate" -> "2.0",
      "maxRecordsPerTrigger" -> "500", "shardsPerTask" -> "2", "maxShardsPerDescribe" -> "10000",
      "coalesceThresholdBlockSize" -> "1,000", "coalesceBinSize" -> "5000"))
    assert(o.minFetchPeriodMs == 210 && o.maxFetchDurationMs == 120000 && o.shardFetchIntervalMs == 1000)
    assert(o.fetchBufferSizeBytes == 10L * 1024 * 1024 && o.maxBytesPerTrigger.contains(2L << 30))
    assert(o.maxFetchRateBytesPerSec == 2 * 1024 * 1024 && o.maxRecordsPerTrigger.contains(500L))
    assert(o.shardsPerTask == 2 && o.maxShardsPerDescribe == 10000)
    assert(o.coalesceThresholdBlockSize == 1000 && o.coalesceBinSize == 5000)
    assert(o.fetchLimits.maxRecordsPerFetch == 500) // a call never asks for more than a trigger may take
  }

  test("real-time readers follow records every 210 ms unless minFetchPeriod was set, which then holds for every call") {
    val defaults = KinesisSourceOptions.parse(base).realTimeFetchLimits
    assert(defaults.catchUpAtOnce && defaults.minFetchPeriodMs == 400L && defaults.afterRecordsPeriodMs.contains(210L))
    val given = KinesisSourceOptions.parse(base + ("MinFetchPeriod" -> "1s"))
    // The period after every call, catching up included: the same limits as micro-batch's.
    assert(given.realTimeFetchLimits == given.fetchLimits)
    assert(given.fetchLimits.minFetchPeriodMs == 1000L && given.fetchLimits.afterRecordsPeriodMs.isEmpty &&
      !given.fetchLimits.catchUpAtOnce)
  }

  test("option names are case-insensitive and values are typed") {
    val o = KinesisSourceOptions.parse(Map(
      "STREAMNAME" -> "a, b", "Region" -> "eu-west-1", "endpoint" -> "http://127.0.0.1:4568",
      "initialposition" -> "TRIM_HORIZON", "maxrecordsperfetch" -> "2,500", "FailOnDataLoss" -> "False",
      "awsaccesskey" -> "AKIDEXAMPLE", "AWSSECRETKEY" -> "s3cr3t"))
    assert(o.streams == Seq("a", "b"))
    assert(o.connection.region == "eu-west-1")
    assert(o.connection.endpoint.map(_.toString).contains("http://127.0.0.1:4568"))
    assert(o.initialPosition == InitialPosition.TrimHorizon)
    assert(o.maxRecordsPerFetch == 2500)
    assert(!o.failOnDataLoss)
    assert(o.connection.credentials == AwsCredentialsConfig.StaticKeys("AKIDEXAMPLE", "s3cr3t"))
  }

  test("earliest is an alias of trim_horizon") {
    assert(KinesisSourceOptions.parse(base + ("initialPosition" -> "earliest")).initialPosition == InitialPosition.TrimHorizon)
  }

  test("region is taken from an AWS endpoint when not given") {
    val o = KinesisSourceOptions.parse(Map("streamName" -> "s", "endpoint" -> "https://kinesis.ap-southeast-2.amazonaws.com"))
    assert(o.connection.region == "ap-southeast-2")
  }

  test("a missing streamName names the option") {
    val m = rejected(Map("region" -> "us-east-1"))
    assert(m.contains("'streamName'") && m.contains("required"))
    assert(rejected(Map("streamName" -> " , ", "region" -> "us-east-1")).contains("'streamName'"))
  }

  // Each bad value: the message names the option, the value and what is accepted.
  private val badValues = Seq(
    ("streamName", "bad name!", "1-128 characters"),
    ("streamName", "a,a", "each stream listed once"),
    ("region", "mars", "an AWS region name"),
    ("endpoint", "not a url", "http:// or https:// URL"),
    ("endpoint", "ftp://host", "http:// or https:// URL"),
    ("initialPosition", "bogus", "'latest', 'trim_horizon', 'earliest'"),
    ("initialPosition", """{"at_timestamp": "yesterday"}""", "in the format \"MM/dd/yyyy HH:mm:ss ZZZ\""),
    ("initialPosition", """{"at": "06/25/2020 10:23:45 PDT"}""", "a string field \"at_timestamp\""),
    ("initialPosition", """{"at_timestamp": "2020", "format": "QQQ!"}""", "a valid SimpleDateFormat pattern"),
    ("maxRecordsPerFetch", "0", "an integer from 1 to 10000"),
    ("maxRecordsPerFetch", "10001", "an integer from 1 to 10000"),
    ("maxRecordsPerFetch", "ten", "an integer from 1 to 10000"),
    ("failOnDataLoss", "yes", "'true' or 'false'"),
    ("maxFetchRate", "2.5", "at most 2.0"),
    ("maxFetchRate", "0", "greater than 0.0"),
    ("maxFetchRate", "fast", "a decimal number"),
    ("minFetchPeriod", "100ms", "at least 200ms"),
    ("minFetchPeriod", "soon", "a duration such as"),
    ("maxFetchDuration", "0ms", "at least 1ms"),
    ("shardFetchInterval", "1 fortnight", "a duration such as"),
    ("fetchBufferSize", "lots", "a positive byte size"),
    ("fetchBufferSize", "0", "a positive byte size"),
    ("shardsPerTask", "0", "an integer of at least 1"),
    ("maxShardsPerDescribe", "10001", "an integer from 1 to 10000"),
    ("coalesceThresholdBlockSize", "-5", "an integer of at least 1"),
    ("coalesceBinSize", "big", "an integer of at least 1"),
    ("maxRecordsPerTrigger", "0", "an integer of at least 1"),
    ("maxBytesPerTrigger", "-1", "a positive byte size"))

  badValues.foreach { case (option, value, accepted) =>
    test(s"rejects $option = $value") {
      val m = rejected(base + (option -> value))
      assert(m.contains(s"'$option'"), m)
      assert(m.contains(value), m)
      assert(m.contains(accepted), m)
    }
  }

  test("one key without the other is rejected without echoing either secret") {
    val m1 = rejected(base + ("awsAccessKey" -> "AKIDSECRETID"))
    assert(m1.contains("'awsAccessKey'") && m1.contains("'awsSecretKey'") && !m1.contains("AKIDSECRETID"))
    val m2 = rejected(base + ("awsSecretKey" -> "verysecret"))
    assert(m2.contains("'awsSecretKey'") && !m2.contains("verysecret"))
  }

  test("credentials never show in the parsed options' string form") {
    val o = KinesisSourceOptions.parse(base ++ Map("awsAccessKey" -> "AKIDSECRETID", "awsSecretKey" -> "verysecret"))
    assert(!o.toString.contains("AKIDSECRETID") && !o.toString.contains("verysecret"))
  }
}
