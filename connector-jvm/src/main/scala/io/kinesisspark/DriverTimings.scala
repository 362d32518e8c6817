package io.kinesisspark

/**
 * How long the driver's side of the latest micro-batch took, call by call, for the source's progress metrics:
 * Spark's own `durationMs.latestOffset` counts the source's wait for a prefetch round when nothing new was buffered,
 * and it has no figure for `planInputPartitions` or `commit`, which grow with the shard count.
 *
 * Each call is reported twice: its wall time (`driver<Call>Ms`) and the CPU its thread used meanwhile
 * (`driver<Call>CpuMs`). They differ when the driver's cores are busy with other work (in local mode, the executors'
 * tasks and fetch threads share them), so a slow call can be told from a call that waited for a core.
 *
 * Thread-safe: the query thread records (a wait excluded counts against the call of its own thread), progress
 * reporting reads.
 *
 * {{{
 *   val timings = new DriverTimings()
 *   val end = timings.time(DriverTimings.PlanInputPartitions)(plan())
 *   timings.metrics // Map("driverPlanInputPartitionsMs" -> "3.000", "driverPlanInputPartitionsCpuMs" -> "2.900", ...)
 * }}}
 *
 * @param nanos a monotonic clock in nanoseconds, replaced in tests
 * @param cpuNanos the CPU time of the calling thread in nanoseconds, replaced in tests
 */
final class DriverTimings(nanos: () => Long = () => System.nanoTime(),
    cpuNanos: () => Long = () => DriverTimings.threadCpuNanos()) {
  // Wall and CPU nanoseconds of a call's latest run, as one value: metrics are read from another thread too.
  private val latest = new java.util.concurrent.ConcurrentHashMap[String, (Long, Long)]()

  /** Runs `body` and records its duration and CPU as the latest of `call`, less what it spent in [[excluded]]. */
  def time[T](call: String)(body: => T): T = {
    val (started, cpuStarted) = (nanos(), cpuNanos())
    val excludedBefore = excludedNanos.get
    try body
    finally {
      val excluded = excludedNanos.get
      latest.put(call, (math.max(0L, nanos() - started - (excluded._1 - excludedBefore._1)),
        math.max(0L, cpuNanos() - cpuStarted - (excluded._2 - excludedBefore._2))))
    }
  }

  /** Runs `body` (a wait, not the driver's work) without counting it in the call [[time]] measures around it. */
  def excluded[T](body: => T): T = {
    val (started, cpuStarted) = (nanos(), cpuNanos())
    try body
    finally {
      val (wall, cpu) = excludedNanos.get
      excludedNanos.set((wall + nanos() - started, cpu + cpuNanos() - cpuStarted))
    }
  }

  /** The latest duration and CPU of every call timed so far, in milliseconds (fractions kept to a microsecond). */
  def metrics: Map[String, String] = {
    val out = Map.newBuilder[String, String]
    def ms(ns: Long) = String.format(java.util.Locale.ROOT, "%.3f", Double.box(ns / 1e6))
    latest.forEach { (call, took) =>
      out += s"driver${call}Ms" -> ms(took._1)
      out += s"driver${call}CpuMs" -> ms(took._2)
    }
    out.result()
  }

  /** Per thread: the waits (wall and CPU nanoseconds) a call on that thread excludes are its own. */
  private val excludedNanos = ThreadLocal.withInitial[(Long, Long)](() => (0L, 0L))
}

object DriverTimings {
  private val threads = java.lang.management.ManagementFactory.getThreadMXBean

  /** The current thread's CPU time; 0 where the JVM cannot measure it (the CPU metrics then read 0). */
  private[kinesisspark] def threadCpuNanos(): Long =
    if (threads.isCurrentThreadCpuTimeSupported) math.max(0L, threads.getCurrentThreadCpuTime) else 0L

  val LatestOffset = "LatestOffset"
  val PlanInputPartitions = "PlanInputPartitions"
  val Commit = "Commit"
}
