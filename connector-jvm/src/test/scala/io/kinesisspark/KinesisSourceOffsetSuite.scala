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

  test("JSON is versioned, sorted, compact and stable") {
    val json = offset.json()
    assert(json.startsWith("""{"v":3,"streams":{"clicks":{"0":"ags3rdusd6teh04lp23n4rcjangyrafx80jtu","1":"""))
    assert(json.contains(""""1":"ags3rdusd6teh04lp23n4rcjangyrafx80jtv.3","2":"t","3":"@1593105825000","4":"f"}"""))
    assert(json == KinesisSourceOffset.fromJson(json).json())
    assert(json.indexOf("orders") > json.indexOf("clicks"))
  }

  test("an open shard of a thousand takes at most 64 bytes of the offset log (version 1 took about 95)") {
    val shards = (0 until 1000).map(i => f"shardId-$i%012d" ->
      (AfterRecord(s"4959033827149025660855969253836157109592157598913658${8000 + i}", if (i % 2 == 0) Some(17L) else None): ShardPosition)).toMap
    val big = KinesisSourceOffset(Map("clicks" -> shards), Map("clicks" -> 1593105800000L))
    val bytes = big.json().getBytes(java.nio.charset.StandardCharsets.UTF_8).length
    assert(bytes <= 64 * 1000, s"$bytes bytes for 1,000 shards")
    assert(KinesisSourceOffset.fromJson(big.json()) == big)
  }

  test("shard ids of another form, and the longest sequence numbers, survive the compact form") {
    val odd = KinesisSourceOffset(Map("s" -> Map(
      "shardId-1" -> TrimHorizon, "123" -> Finished, "=x" -> Finished, "shard-a" -> AtTimestamp(5),
      "shardId-999999999999" -> AfterRecord("9" * 129, Some(Long.MaxValue)),
      "shardId-000000000007" -> AfterRecord("0"))))
    assert(KinesisSourceOffset.fromJson(odd.json()) == odd)
    assert(odd.json().contains(""""=123":"f"""") && odd.json().contains(""""==x":"f"""") && odd.json().contains(""""7":"a0""""))
  }

  test("checkpoints written earlier, of every version, are still read") {
    Seq("checkpoints/offset-v1.json", "checkpoints/offset-v2.json", "checkpoints/offset-v3.json").foreach { file =>
      val saved = Source.fromResource(file).mkString.trim
      assert(KinesisSourceOffset.fromJson(saved) == offset, file)
    }
  }

  test("a newer version is refused with a clear message") {
    val e = intercept[KinesisSparkException](KinesisSourceOffset.fromJson("""{"v":4,"streams":{}}"""))
    assert(e.getMessage.contains("version 4") && e.getMessage.contains("up to 3"))
    val zero = intercept[KinesisSparkException](KinesisSourceOffset.fromJson("""{"v":0,"streams":{}}"""))
    assert(zero.getMessage.contains("version 0"))
    val unknown = intercept[KinesisSparkException](KinesisSourceOffset.fromJson("""{"v":2,"streams":{"s":{"0":"x"}}}"""))
    assert(unknown.getMessage.contains("'x'") && unknown.getMessage.contains("accepted: t, f, @<epoch millis>"))
  }

  test("malformed offsets are refused naming the content") {
    Seq("""not json""", """{"streams":{}}""", """{"v":1,"streams":{"s":{"shard":{"after":"12x"}}}}""",
      """{"v":1,"streams":{"s":{"shard":{"what":true}}}}""", """{"v":2,"streams":{"s":{"0":"aXY"}}}""",
      """{"v":2,"streams":{"s":{"0":"x"}}}""", """{"v":2,"streams":{"s":{"0":{"after":"1"}}}}""",
      """{"v":2,"streams":{"s":{"0":"a1.2.3"}}}""", """{"v":2,"streams":{"s":{"1234567890123":"t"}}}""",
      """{"v":2,"streams":{"s":{"0":"a"}}}""", """{"v":2,"streams":{"s":{"0":"tt"}}}""",
      """{"v":2,"streams":{"s":{"0":"a1."}}}""",
      // Digits of another script: positions compare as ASCII decimal strings
      "{\"v\":1,\"streams\":{\"s\":{\"shard\":{\"after\":\"\uff11\uff12\"}}}}").foreach { bad =>
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

  test("offsets of the same positions and creation times are the same, built apart or not") {
    def offset(seq: String, created: Long) = KinesisSourceOffset(
      Map("s" -> Map("shardId-000000000000" -> AfterRecord(seq), "shardId-000000000001" -> Finished)),
      Map("s" -> created))
    assert(offset("12", 5L).samePositions(offset("12", 5L)))
    assert(!offset("12", 5L).samePositions(offset("13", 5L)))
    assert(!offset("12", 5L).samePositions(offset("12", 6L)))
    val fewer = KinesisSourceOffset(Map("s" -> Map("shardId-000000000000" -> AfterRecord("12"))), Map("s" -> 5L))
    assert(!offset("12", 5L).samePositions(fewer))
  }

  test("sequence numbers in base 36 as BigInteger writes them, for every length and leading zeros") {
    val rnd = new scala.util.Random(36)
    val numbers = Seq("0", "000", "1", "35", "36", "0036", "999999999", "1000000000", "60466176", "60466175",
      "9" * 129, "1" + "0" * 128, "3656158440062976", "3656158440062975") ++ (1 to 3000).map { _ =>
      val digits = 1 + rnd.nextInt(129)
      "0" * rnd.nextInt(3) + (1 to digits).map(_ => ('0' + rnd.nextInt(10)).toChar).mkString
    }
    numbers.foreach { n =>
      assert(KinesisSourceOffset.decimalToBase36(n) == new java.math.BigInteger(n).toString(36), n)
    }
    // What is not ASCII digits is BigInteger's to take or refuse, as before.
    Seq("-5", "+77", "\uff11").foreach { other =>
      assert(KinesisSourceOffset.decimalToBase36(other) == new java.math.BigInteger(other).toString(36), other)
    }
    Seq("", "12x").foreach(bad => intercept[NumberFormatException](KinesisSourceOffset.decimalToBase36(bad)))
  }

  test("sequence numbers compare as numbers, of as many digits or not, with leading zeros or not") {
    val rnd = new scala.util.Random(17)
    // Kinesis-like numbers (56 digits, a shared prefix), shorter ones and zero-padded ones.
    def number(): String = rnd.nextInt(4) match {
      case 0 => "4963" + (1 to 52).map(_ => ('0' + rnd.nextInt(10)).toChar).mkString
      case 1 => (1 + rnd.nextInt(9)).toString + (1 to rnd.nextInt(4)).map(_ => ('0' + rnd.nextInt(2)).toChar).mkString
      case 2 => "0" * rnd.nextInt(3) + rnd.nextInt(1000).toString
      case _ => "0"
    }
    (1 to 5000).foreach { _ =>
      val (a, b) = (number(), number())
      assert(Integer.signum(compareSequenceNumbers(a, b)) == BigInt(a).compare(BigInt(b)), s"$a against $b")
    }
    assert(compareSequenceNumbers("0123", "0124") < 0 && compareSequenceNumbers("0200", "0123") > 0)
    assert(compareSequenceNumbers("0123", "123") == 0 && compareSequenceNumbers("999", "1000") < 0)
  }
}
