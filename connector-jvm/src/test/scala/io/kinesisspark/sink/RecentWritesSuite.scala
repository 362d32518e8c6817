package io.kinesisspark.sink

import org.scalatest.funsuite.AnyFunSuite

class RecentWritesSuite extends AnyFunSuite {
  test("counts what was added over exactly the last second, then forgets it") {
    val recent = new RecentWrites(windowMs = 1000)
    recent.add(10, 1, 100)
    recent.add(500, 2, 200)
    assert(recent.records(990) == 3 && recent.bytes(990) == 300)
    assert(recent.records(1009) == 3 && recent.bytes(1009) == 300)
    assert(recent.records(1010) == 2 && recent.bytes(1010) == 200) // t=10 is a second old: Kinesis's next window
    assert(recent.records(1499) == 2 && recent.records(1500) == 0 && recent.bytes(1500) == 0)
    recent.add(100000, 1, 5)
    assert(recent.records(100000) == 1 && recent.bytes(100999) == 5)
  }

  test("says when an entry fits: now, once old entries leave, or (too large for any window) once it is empty") {
    val recent = new RecentWrites(windowMs = 1000)
    assert(recent.readyInMs(0, 1, 10, maxRecords = 3, maxBytes = 100) == 0)
    recent.add(0, 2, 60)
    recent.add(300, 1, 30)
    assert(recent.readyInMs(310, 1, 10, 3, 100) == 1000 - 310) // a record too many until t=0's entry leaves
    assert(recent.readyInMs(310, 0, 20, 3, 100) == 1000 - 310) // 20 bytes too many, likewise
    assert(recent.readyInMs(310, 0, 5, 3, 100) == 0)
    assert(recent.readyInMs(310, 0, 500, 3, 1000000) == 0)
    assert(recent.readyInMs(310, 0, 500, 3, 100) == 1300 - 310) // larger than the limit: only when empty
    assert(recent.readyInMs(999, 1, 10, 3, 100) == 1)
    assert(recent.readyInMs(1000, 1, 10, 3, 100) == 0)
  }

  test("holds as many entries as a second brings, in order, past its first capacity") {
    val recent = new RecentWrites(windowMs = 1000)
    (0 until 1000).foreach(t => recent.add(t, 1, t))
    assert(recent.records(999) == 1000 && recent.bytes(999) == (0 until 1000).sum)
    assert(recent.records(1500) == 499 && recent.bytes(1500) == (501 until 1000).sum)
    assert(recent.readyInMs(1500, 1, 0, maxRecords = 400, maxBytes = Long.MaxValue) == 1600 - 1500)
  }

  test("takes back what was added at a time, from that entry only, while it is counted, never below zero") {
    val recent = new RecentWrites(windowMs = 1000)
    recent.add(10, 2, 100)
    recent.add(500, 1, 50)
    recent.remove(10, 1, 40)
    assert(recent.records(600) == 2 && recent.bytes(600) == 110)
    recent.remove(500, 5, 500) // more than it holds: it empties, the other keeps its count
    assert(recent.records(600) == 1 && recent.bytes(600) == 60)
    recent.remove(2000, 1, 10) // a time nothing was added at: nothing to take back
    recent.remove(20, 1, 10)
    assert(recent.records(600) == 1 && recent.bytes(600) == 60)
    recent.add(600, 1, 7)
    recent.add(600, 1, 8)
    recent.remove(600, 1, 8)
    recent.remove(600, 1, 7) // two entries of one time: each refund takes one of them
    assert(recent.records(600) == 1 && recent.bytes(600) == 60)
    recent.remove(10, 1, 60)
    assert(recent.records(1200) == 0)
    recent.add(1200, 1, 30)
    recent.remove(10, 1, 30) // it has left the window: nothing taken
    assert(recent.records(1200) == 1 && recent.bytes(1200) == 30)
  }
}
