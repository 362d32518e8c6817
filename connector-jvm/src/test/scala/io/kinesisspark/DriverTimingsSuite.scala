package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

class DriverTimingsSuite extends AnyFunSuite {
  test("a call's latest duration, less the waits it excluded, in milliseconds") {
    var now = 0L
    val timings = new DriverTimings(() => now)
    val answer = timings.time(DriverTimings.LatestOffset) {
      now += 2000000L // 2 ms of work
      timings.excluded { now += 500000000L } // 500 ms waiting for a prefetch round
      now += 1500L
      42
    }
    assert(answer == 42)
    timings.time(DriverTimings.Commit)(now += 7000000L)
    assert(timings.metrics == Map("driverLatestOffsetMs" -> "2.002", "driverCommitMs" -> "7.000"))
    timings.time(DriverTimings.Commit)(now += 1000L) // the latest one replaces the one before
    assert(timings.metrics("driverCommitMs") == "0.001")
  }

  test("a call that throws is timed too") {
    var now = 0L
    val timings = new DriverTimings(() => now)
    intercept[IllegalStateException](timings.time(DriverTimings.PlanInputPartitions) {
      now += 3000000L
      throw new IllegalStateException("planning failed")
    })
    assert(timings.metrics == Map("driverPlanInputPartitionsMs" -> "3.000"))
  }
}
