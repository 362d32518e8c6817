package io.kinesisspark.efo

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.KinesisSourceOptions

class EfoOptionsSuite extends AnyFunSuite {
  private val base = Map("streamName" -> "clicks", "region" -> "us-east-1", "consumerMode" -> "efo")
  private val queryId = "8c1e4f3a-2b9d-4c55-9f0e-3a6d2b7c1e90"

  private def efo(options: (String, String)*): EfoOptions = KinesisSourceOptions.parse(base ++ options).efo.get

  private def rejected(options: (String, String)*): String =
    intercept[IllegalArgumentException](KinesisSourceOptions.parse(base ++ options)).getMessage

  test("defaults follow the Databricks guide, with our own prefix and the query id as the name") {
    val o = efo()
    assert(o.consumerNames.isEmpty && o.consumerNamePrefix == "kinesis_spark_")
    assert(!o.requireConsumerDeregistration && o.consumerRefreshIntervalMs == 300000L && o.subscriptionMaxEvents.isEmpty)
    assert(o.consumerName(Seq("clicks"), "clicks", Some(queryId)) == s"kinesis_spark_$queryId")
  }

  test("polling is the default mode; the mode is case-insensitive") {
    assert(KinesisSourceOptions.parse(base - "consumerMode").efo.isEmpty)
    assert(KinesisSourceOptions.parse(base + ("consumerMode" -> " Polling ")).efo.isEmpty)
    assert(KinesisSourceOptions.parse(base + ("CONSUMERMODE" -> "EFO")).efo.isDefined)
  }

  test("one consumer name for every stream, or one per stream in streamName's order; an empty prefix is allowed") {
    val one = KinesisSourceOptions.parse(base ++ Map("streamName" -> "a,b", "consumerName" -> "app")).efo.get
    assert(Seq("a", "b").map(one.consumerName(Seq("a", "b"), _, None)) == Seq("kinesis_spark_app", "kinesis_spark_app"))
    val each = KinesisSourceOptions.parse(base ++ Map("streamName" -> "a,b", "consumerName" -> "x, y",
      "consumerNamePrefix" -> "")).efo.get
    assert(Seq("a", "b").map(each.consumerName(Seq("a", "b"), _, None)) == Seq("x", "y"))
  }

  test("the other EFO options are typed") {
    val o = efo("requireConsumerDeregistration" -> "TRUE", "consumerRefreshInterval" -> "1h",
      "consumerNamePrefix" -> "team.a-", "efoSubscriptionMaxEvents" -> "3")
    assert(o.requireConsumerDeregistration && o.consumerRefreshIntervalMs == 3600000L)
    assert(o.consumerNamePrefix == "team.a-" && o.subscriptionMaxEvents.contains(3))
  }

  test("without a query id or a consumerName the name cannot be made, and the error says which option to set") {
    val e = intercept[IllegalArgumentException](efo().consumerName(Seq("clicks"), "clicks", None))
    assert(e.getMessage.contains("'consumerName'"))
  }

  // Each bad value: the message names the option, the value and what is accepted.
  private val badValues = Seq(
    ("consumerMode", "push", "'polling' or 'efo'"),
    ("consumerName", "my consumer!", "a-z, A-Z, 0-9, '_', '.' and '-'"),
    ("consumerName", "a,,b", "a-z, A-Z, 0-9"),
    ("consumerName", "x" * 120, "1 to 114 characters"),
    ("consumerNamePrefix", "team/", "up to 127 characters"),
    ("consumerNamePrefix", "p" * 93, "at most 92 characters when the consumer is named by the streaming query id"),
    ("requireConsumerDeregistration", "yes", "'true' or 'false'"),
    ("consumerRefreshInterval", "2h", "from '1s' to '3600s'"),
    ("consumerRefreshInterval", "10ms", "at least 1000ms"),
    ("efoSubscriptionMaxEvents", "0", "an integer of at least 1"))

  badValues.foreach { case (option, value, accepted) =>
    test(s"rejects $option = ${value.take(20)}") {
      val m = rejected(option -> value)
      assert(m.contains(s"'$option'") && m.contains(value) && m.contains(accepted), m)
    }
  }

  test("a list of consumer names must match the streams") {
    val m = rejected("streamName" -> "a,b,c", "consumerName" -> "x,y")
    assert(m.contains("'consumerName'") && m.contains("'x,y'") && m.contains("one per stream"), m)
  }

  test("bad EFO values are rejected in polling mode too, where good ones are ignored") {
    assert(intercept[IllegalArgumentException](KinesisSourceOptions.parse(base ++ Map("consumerMode" -> "polling",
      "consumerName" -> "bad name"))).getMessage.contains("'consumerName'"))
    assert(KinesisSourceOptions.parse(base ++ Map("consumerMode" -> "polling", "consumerName" -> "ok")).efo.isEmpty)
  }
}
