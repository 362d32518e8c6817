package io.kinesisspark.sink

/**
 * How long a record Kinesis refused waits before it is put again, and how often that may happen: exponential
 * back-off from `baseDelayMs`, capped at `maxDelayMs`, with "equal jitter" (half the delay fixed, half random) so
 * that the records of many tasks throttled together do not come back together. Throttling is capped lower, at
 * `maxThrottleDelayMs`: Kinesis counts a shard's writes over one-second windows, so waiting longer than a second
 * after a throttle only leaves the shard idle.
 *
 * {{{
 *   val policy = RetryPolicy(maxRetries = 20)
 *   policy.delayMs(attempt = 1, throttled = false)  // 50 to 100 ms
 *   policy.delayMs(attempt = 8, throttled = false)  // 2,500 to 5,000 ms (the cap)
 *   policy.delayMs(attempt = 8, throttled = true)   // 500 to 1,000 ms
 *   policy.exhausted(attempts = 21)                 // true: the first try and 20 retries failed
 * }}}
 */
final case class RetryPolicy(maxRetries: Int, baseDelayMs: Long = 100L, maxDelayMs: Long = 5000L,
    maxThrottleDelayMs: Long = 1000L, random: java.util.Random = new java.util.Random()) {

  /** The wait after the `attempt`-th failed try of a record (1 for the first). */
  def delayMs(attempt: Int, throttled: Boolean): Long = {
    val cap = math.min(if (throttled) maxThrottleDelayMs else maxDelayMs,
      baseDelayMs << math.min(math.max(attempt - 1, 0), 30))
    cap / 2 + (if (cap / 2 > 0) (random.nextDouble() * (cap / 2 + 1)).toLong else 0L)
  }

  /** Whether a record that failed `attempts` tries has no retry left. */
  def exhausted(attempts: Int): Boolean = attempts > maxRetries
}
