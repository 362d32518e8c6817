package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._

class RecentOffsetsSuite extends AnyFunSuite {
  private def offset(seq: Int) = KinesisSourceOffset(Map("clicks" -> Map(
    "shardId-000000000000" -> AfterRecord(s"4959033827149025660855969253836157109592157598913658$seq"),
    "shardId-000000000007" -> TrimHorizon)))

  test("an offset the source made is handed back for its JSON, not parsed again") {
    val recent = new RecentOffsets()
    val end = offset(8898)
    assert(recent.remember(end) eq end)
    assert(recent.parse(end.json()) eq end)
    // A copy of the JSON (Spark reads it back from its offset log): equal, not the same string.
    assert(recent.parse(new String(end.json().toCharArray)) eq end)
  }

  test("JSON not seen is parsed once, under the JSON it came as (version 1's too)") {
    val recent = new RecentOffsets()
    val v1 = """{"v":1,"streams":{"clicks":{"shardId-000000000007":{"trim_horizon":true}}}}"""
    val parsed = recent.parse(v1)
    assert(parsed.position("clicks", "shardId-000000000007").contains(TrimHorizon))
    assert(recent.parse(v1) eq parsed)
    assert(parsed.json() != v1) // rendered as version 2, yet found by the JSON it came as
    assert(recent.parse(offset(8898).json()) == offset(8898))
  }

  test("keeps the latest `capacity` offsets, the least recently used going first") {
    val recent = new RecentOffsets(capacity = 2)
    val (a, b, c) = (offset(1001), offset(1002), offset(1003))
    Seq(a, b).foreach(recent.remember)
    assert(recent.parse(a.json()) eq a) // a is now the more recently used
    recent.remember(c)
    assert(recent.parse(a.json()) eq a)
    assert(recent.parse(c.json()) eq c)
    val again = recent.parse(b.json())
    assert(again == b && (again ne b), "b was the least recently used: parsed again")
  }
}
