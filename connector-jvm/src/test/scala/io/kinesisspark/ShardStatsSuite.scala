package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.executor.ShardFetchResult
import io.kinesisspark.reader.ShardCounters

class ShardStatsSuite extends AnyFunSuite {
  private def result(lag: Option[Long], caughtUp: Boolean, counters: ShardCounters, location: String) =
    ShardFetchResult("clicks", "shard-0", Nil, caughtUp, lag, counters, location)

  test("a shard's first round: its lag as of the round's end, caught up as of its start, its counters") {
    val counters = ShardCounters(calls = 3, callMillis = 60, throttles = 1)
    val first = ShardStats.after(None, result(Some(700L), caughtUp = true, counters, "executor_h_1"), 1000L, 1400L)
    assert(first == ShardStats(Some(700L), Some(1400L), Some(1000L), Some("executor_h_1"), counters, counters))
  }

  test("a later round adds its counters; what it did not measure is kept from before") {
    val before = ShardStats(Some(700L), Some(1400L), Some(1000L), Some("executor_h_1"),
      counters = ShardCounters(calls = 3, callMillis = 60, throttles = 1, dataLossEvents = 1),
      lastRound = ShardCounters(calls = 3, callMillis = 60, throttles = 1, dataLossEvents = 1))
    // every call throttled: no lag measured, not caught up
    val round = ShardCounters(calls = 2, callMillis = 20, throttles = 2, subscriptions = 1)
    val after = ShardStats.after(Some(before), result(None, caughtUp = false, round, "executor_h_2"), 2000L, 2300L)
    assert(after == ShardStats(Some(700L), Some(1400L), Some(1000L), Some("executor_h_2"),
      counters = ShardCounters(calls = 5, callMillis = 80, throttles = 3, dataLossEvents = 1, subscriptions = 1),
      lastRound = round))
  }
}
