package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

class DriverTimingsSuite extends AnyFunSuite {
  test("a call's latest duration and CPU, less the waits it excluded, in milliseconds") {
    var (now, cpu) = (0L, 0L)
    val timings = new DriverTimings(() => now, () => cpu)
    val answer = timings.time(DriverTimings.LatestOffset) {
      now += 2000000L // 2 ms of work, 1.5 of them on a core
      cpu += 1500000L
      timings.excluded { now += 500000000L; cpu += 20000L } // 500 ms waiting for a prefetch round
      now += 1500L
      cpu += 1000L
      42
    }
    assert(answer == 42)
    timings.time(DriverTimings.Commit) { now += 7000000L; cpu += 7000000L }
    assert(timings.metrics == Map("driverLatestOffsetMs" -> "2.002", "driverCommitMs" -> "7.000",
      "driverLatestOffsetCpuMs" -> "1.501", "driverCommitCpuMs" -> "7.000"))
    timings.time(DriverTimings.Commit)(now += 1000L) // the latest one replaces the one before
    assert(timings.metrics("driverCommitMs") == "0.001" && timings.metrics("driverCommitCpuMs") == "0.000")
  }

  test("a call that throws is timed too") {
    var now = 0L
    val timings = new DriverTimings(() => now, () => now / 2)
    intercept[IllegalStateException](timings.time(DriverTimings.PlanInputPartitions) {
      now += 3000000L
      throw new IllegalStateException("planning failed")
    })
    assert(timings.metrics ==
      Map("driverPlanInputPartitionsMs" -> "3.000", "driverPlanInputPartitionsCpuMs" -> "1.500"))
  }

  test("by default the CPU is the calling thread's own") {
    val threads = java.lang.management.ManagementFactory.getThreadMXBean
    assume(threads.isCurrentThreadCpuTimeSupported)
    val timings = new DriverTimings()
    timings.time(DriverTimings.Commit) {
      // 20 ms of this thread's CPU, however long the machine takes to give it (at most 10 s)
      val (cpu0, giveUp) = (threads.getCurrentThreadCpuTime, System.nanoTime() + 10000000000L)
      while (threads.getCurrentThreadCpuTime - cpu0 < 20000000L && System.nanoTime() < giveUp) ()
    }
    timings.time(DriverTimings.LatestOffset)(Thread.sleep(30)) // 30 ms of waiting, next to none of it on a core
    val m = timings.metrics.map { case (k, v) => k -> v.toDouble }
    assert(m("driverCommitCpuMs") >= 19 && m("driverCommitCpuMs") <= m("driverCommitMs") + 1, m)
    assert(m("driverLatestOffsetMs") >= 29 && m("driverLatestOffsetCpuMs") < 10, m)
  }
}
