package io.kinesisspark

import scala.io.Source

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._

class KinesisSourceOffsetSuite extends AnyFunSuite {
  private val offset = KinesisSourceOffset(Map(
    "clicks" -> Map(
      "shardId-000000000000" -> AfterRecord("49590338271490256608559692538361571095921575989136588898"),
      "shardId-000000000001" -> AfterRecord("49590338271490256608559692538361571095921575989136588899", Some(3L)),
      "shardId-000000000002" -> TrimHorizon,
      "shardId-000000000003" -> AtTimestamp(1593105825000L),
      "shardId-000000000004" -> Finished),
    "orders" -> Map("shardId-000000000000" -> TrimHorizon)))

  test("JSON round trip keeps every kind of position") {
    assert(KinesisSourceOffset.fromJson(offset.json()) == offset)
  }

  test("JSON is versioned, sorted and stable") {
    val json = offset.json()
    assert(json.startsWith("""{"v":1,"streams":{"clicks":{"shardId-000000000000":"""))
    assert(json == KinesisSourceOffset.fromJson(json).json())
    assert(json.indexOf("orders") > json.indexOf("clicks"))
  }

  test("a version-1 checkpoint written earlier is still read") {
    val saved = Source.fromResource("checkpoints/offset-v1.json").mkString.trim
    assert(KinesisSourceOffset.fromJson(saved) == offset)
  }

  test("a newer version is refused with a clear message") {
    val e = intercept[KinesisSparkException](KinesisSourceOffset.fromJson("""{"v":2,"streams":{}}"""))
    assert(e.getMessage.contains("version 2") && e.getMessage.contains("up to 1"))
  }

  test("malformed offsets are refused naming the content") {
    Seq("""not json""", """{"streams":{}}""", """{"v":1,"streams":{"s":{"shard":{"after":"12x"}}}}""",
      """{"v":1,"streams":{"s":{"shard":{"what":true}}}}""").foreach { bad =>
      val e = intercept[KinesisSparkException](KinesisSourceOffset.fromJson(bad))
      assert(e.getMessage.contains("Cannot read Kinesis offset"), bad)
    }
  }

  test("record positions order by sequence number, then sub-sequence, a whole record last") {
    val a = AfterRecord("100")
    val b = AfterRecord("99", None)
    val c = AfterRecord("100", Some(2L))
    assert(compareRecords(b, c) < 0) // numeric, not lexicographic
    assert(compareRecords(c, a) < 0)
    assert(compareRecords(AfterRecord("100", Some(1L)), c) < 0)
    assert(isAfter(a, TrimHorizon) && isAfter(a, AtTimestamp(0)) && !isAfter(a, Finished))
    assert(reaches(Finished, a) && !reaches(a, Finished) && reaches(a, TrimHorizon) && !reaches(TrimHorizon, a))
  }
}
