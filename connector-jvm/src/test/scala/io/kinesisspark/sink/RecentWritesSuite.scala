package io.kinesisspark.sink

import org.scalatest.funsuite.AnyFunSuite

class RecentWritesSuite extends AnyFunSuite {
  test("counts what was added over the last second (and at most a slot more), then forgets it") {
    val recent = new RecentWrites(windowMs = 1000, slotMs = 25)
    recent.add(10, 1, 100)
    recent.add(500, 2, 200)
    assert(recent.records(990) == 3 && recent.bytes(990) == 300)
    assert(recent.records(1010) == 3) // the slot of t=10 still counts: the window errs long
    assert(recent.records(1025) == 2 && recent.bytes(1025) == 200)
    assert(recent.records(1524) == 2 && recent.records(1525) == 0)
    assert(recent.records(100000) == 0)
  }

  test("says when an entry fits: now, once old slots leave, or (too large for any window) once it is empty") {
    val recent = new RecentWrites(windowMs = 1000, slotMs = 25)
    assert(recent.readyInMs(0, 1, 10, maxRecords = 3, maxBytes = 100) == 0)
    recent.add(0, 2, 60)
    recent.add(300, 1, 30)
    assert(recent.readyInMs(310, 1, 10, 3, 100) == 1025 - 310) // a record too many until t=0's slot leaves
    assert(recent.readyInMs(310, 0, 20, 3, 100) == 1025 - 310) // 20 bytes too many, likewise
    assert(recent.readyInMs(310, 0, 5, 3, 100) == 0)
    assert(recent.readyInMs(310, 0, 500, 3, 1000000) == 0)
    assert(recent.readyInMs(310, 0, 500, 3, 100) == 1325 - 310) // larger than the limit: only when empty
  }

  test("takes back what was added at a time, from that time's slot only, while it is counted, never below zero") {
    val recent = new RecentWrites(windowMs = 1000, slotMs = 25)
    recent.add(10, 2, 100)
    recent.add(500, 1, 50)
    recent.remove(10, 1, 40)
    assert(recent.records(600) == 2 && recent.bytes(600) == 110)
    recent.remove(510, 5, 500) // more than its slot holds: that slot empties, the other keeps its count
    assert(recent.records(600) == 1 && recent.bytes(600) == 60)
    recent.remove(2000, 1, 10) // a time after the newest slot: nothing to take back
    assert(recent.records(600) == 1 && recent.bytes(600) == 60)
    recent.remove(10, 1, 60)
    assert(recent.records(1200) == 0)
    recent.add(1200, 1, 30)
    recent.remove(10, 1, 30) // its slot has left the window (and been reused): nothing taken
    assert(recent.records(1200) == 1 && recent.bytes(1200) == 30)
  }
}
