package io.kinesisspark.sink

import org.scalatest.funsuite.AnyFunSuite

class RecentShardMapsSuite extends AnyFunSuite {
  test("asks the shared lookup once per stream and second, and again once the second is over") {
    var now = 0L
    var asked = List.empty[String]
    val recent = new RecentShardMaps[String](stream => { asked ::= stream; s"$stream@$now" }, () => now, recheckMs = 1000)
    assert(recent("a") == "a@0" && recent("b") == "b@0")
    now = 999
    assert(recent("a") == "a@0" && recent("b") == "b@0")
    assert(asked.reverse == List("a", "b"))
    now = 1000
    assert(recent("a") == "a@1000") // a map listed again after a reshard is seen within the second
    assert(asked.reverse == List("a", "b", "a"))
  }
}
