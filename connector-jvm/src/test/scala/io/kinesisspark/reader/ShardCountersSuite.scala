package io.kinesisspark.reader

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import org.scalatest.funsuite.AnyFunSuite

class ShardCountersSuite extends AnyFunSuite {
  private val some = ShardCounters(calls = 1, throttles = 2, callMillis = 3, dataLossEvents = 4,
    outOfRangeSubRecords = 5, corruptAggregates = 6, subscriptions = 7)

  test("counters add up, and subtract, field by field") {
    val more = ShardCounters(calls = 10, throttles = 20, callMillis = 30, dataLossEvents = 40,
      outOfRangeSubRecords = 50, corruptAggregates = 60, subscriptions = 70)
    assert(some + more == ShardCounters(11, 22, 33, 44, 55, 66, 77))
    assert(more - some == ShardCounters(9, 18, 27, 36, 45, 54, 63))
    assert(ShardCounters.Zero + some == some && some - some == ShardCounters.Zero)
  }

  test("counters read back as they were written, each in its place") {
    val bytes = new ByteArrayOutputStream()
    some.write(new DataOutputStream(bytes))
    assert(bytes.size == 7 * 8)
    assert(ShardCounters.read(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray))) == some)
  }
}
