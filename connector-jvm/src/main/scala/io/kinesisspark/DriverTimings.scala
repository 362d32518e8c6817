package io.kinesisspark

/**
 * How long the driver's side of the latest micro-batch took, call by call, for the source's progress metrics:
 * Spark's own `durationMs.latestOffset` counts the source's wait for a prefetch round when nothing new was buffered,
 * and it has no figure for `planInputPartitions` or `commit`, which grow with the shard count.
 *
 * Thread-safe: the query thread records (a wait excluded counts against the call of its own thread), progress
 * reporting reads.
 *
 * {{{
 *   val timings = new DriverTimings()
 *   val end = timings.time(DriverTimings.PlanInputPartitions)(plan())
 *   timings.metrics // Map("driverPlanInputPartitionsMs" -> "3", ...)
 * }}}
 *
 * @param nanos a monotonic clock in nanoseconds, replaced in tests
 */
final class DriverTimings(nanos: () => Long = () => System.nanoTime()) {
  private val latest = new java.util.concurrent.ConcurrentHashMap[String, java.lang.Long]()

  /** Runs `body` and records its duration as the latest of `call`, less the time it spent in [[excluded]]. */
  def time[T](call: String)(body: => T): T = {
    val started = nanos()
    val excludedBefore = excludedNanos.get.longValue
    try body
    finally latest.put(call, math.max(0L, nanos() - started - (excludedNanos.get.longValue - excludedBefore)))
  }

  /** Runs `body` (a wait, not the driver's work) without counting it in the call [[time]] measures around it. */
  def excluded[T](body: => T): T = {
    val started = nanos()
    try body
    finally excludedNanos.set(excludedNanos.get.longValue + nanos() - started)
  }

  /** The latest duration of every call timed so far, in milliseconds (fractions kept to a microsecond). */
  def metrics: Map[String, String] = {
    val out = Map.newBuilder[String, String]
    latest.forEach((call, ns) => out += s"driver${call}Ms" -> String.format(java.util.Locale.ROOT, "%.3f", Double.box(ns.longValue / 1e6)))
    out.result()
  }

  /** Per thread: the waits a call on that thread excludes are its own. */
  private val excludedNanos = ThreadLocal.withInitial[java.lang.Long](() => 0L)
}

object DriverTimings {
  val LatestOffset = "LatestOffset"
  val PlanInputPartitions = "PlanInputPartitions"
  val Commit = "Commit"
}
