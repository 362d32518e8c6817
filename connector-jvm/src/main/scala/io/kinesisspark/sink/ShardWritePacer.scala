package io.kinesisspark.sink

/**
 * Kinesis's write limits of one shard, as a writer paces itself to them. The defaults are the service's quota:
 * "each shard can support up to 1,000 records per second for writes, up to a maximum total data write rate of 1 MiB
 * per second", counting each record's data and partition key (Amazon Kinesis Data Streams Developer Guide, "Quotas
 * and limits"; PutRecords API reference: "Each shard can support writes up to 1,000 records per second, up to a
 * maximum data write total of 1 MiB per second"). A KPL aggregate is one record.
 *
 * {{{
 *   ShardWriteLimits()                      // 1,000 records/s and 1,048,576 bytes/s
 *   ShardWriteLimits(recordsPerSecond = 500) // two writer queries sharing a stream
 * }}}
 */
final case class ShardWriteLimits(recordsPerSecond: Int = ShardWriteLimits.KinesisRecordsPerSecond,
    bytesPerSecond: Long = ShardWriteLimits.KinesisBytesPerSecond)

object ShardWriteLimits {
  val KinesisRecordsPerSecond = 1000
  val KinesisBytesPerSecond: Long = 1024L * 1024
}

/**
 * Paces the writes to one shard so that the shard is kept busy without being refused: two token buckets, for
 * records and for bytes (data plus partition key, what Kinesis counts), filled at a share of [[ShardWriteLimits]],
 * and that share adapted to the throttling the writer still meets.
 *
 * Why a share that adapts. Kinesis counts a shard's writes over one-second windows, and the writer cannot see
 * what else writes to the shard: other tasks of the same query on other executors, other queries, other
 * producers. So the share starts at [[MaxShare]] of the limits and is cut by [[DecreaseFactor]] when a write to the
 * shard is throttled (once per window: the refusals of one window are one signal), then grows back by
 * [[IncreasePerSecond]] of the limits each second (additive increase, multiplicative decrease, as TCP shares a link:
 * writers that share a shard converge to shares that add up to what it takes). A throttle also empties the buckets:
 * the shard is full now.
 *
 * The buckets hold at most [[BurstMs]] of tokens, so a writer that was idle cannot burst more than that into the
 * shard's next second. An entry larger than what a bucket holds (a 1 MiB record, a full aggregate) is let through
 * once the bucket is full and leaves it in debt, so the average stays at the rate.
 *
 * Thread-safe: one pacer serves every writer task of a JVM that writes to the shard ([[ShardWritePacers]]).
 *
 * {{{
 *   val pacer = new ShardWritePacer(ShardWriteLimits(), clock = () => System.currentTimeMillis())
 *   if (pacer.tryTake(bytes = 120)) send(entry) else wait(pacer.readyInMs())
 *   pacer.throttled()   // Kinesis refused a write to the shard: slow down
 * }}}
 *
 * @param clock milliseconds, replaced in tests
 */
final class ShardWritePacer(val limits: ShardWriteLimits, clock: () => Long) {
  import ShardWritePacer._

  private var share = MaxShare
  private var updatedAt = clock()
  private var lastDecreaseAt = Long.MinValue / 2
  private var recordTokens = recordCapacity
  private var byteTokens = byteCapacity
  private var lastUsedAt = updatedAt

  private def recordRate: Double = limits.recordsPerSecond * share / 1000.0 // per ms
  private def byteRate: Double = limits.bytesPerSecond * share / 1000.0
  private def recordCapacity: Double = math.max(1.0, limits.recordsPerSecond * share * BurstMs / 1000.0)
  private def byteCapacity: Double = math.max(1.0, limits.bytesPerSecond * share * BurstMs / 1000.0)

  /** Takes the tokens of one entry of `bytes` if the shard can take it now; false (and nothing taken) if not. */
  def tryTake(bytes: Long): Boolean = synchronized {
    refill()
    lastUsedAt = updatedAt
    if (recordTokens >= 1.0 && byteTokens >= math.min(bytes.toDouble, byteCapacity)) {
      recordTokens -= 1.0
      byteTokens -= bytes
      true
    } else false
  }

  /** Milliseconds until an entry of `bytes` could be taken (0 if now), at least 1 when it cannot be now. */
  def readyInMs(bytes: Long): Long = synchronized {
    refill()
    val recordWait = if (recordTokens >= 1.0) 0.0 else (1.0 - recordTokens) / recordRate
    val needed = math.min(bytes.toDouble, byteCapacity)
    val byteWait = if (byteTokens >= needed) 0.0 else (needed - byteTokens) / byteRate
    val wait = math.max(recordWait, byteWait)
    if (wait <= 0) 0L else math.max(1L, math.ceil(wait).toLong)
  }

  /** Kinesis throttled a write to the shard: cut the share (once per window) and take nothing more for now. */
  def throttled(): Unit = synchronized {
    refill()
    if (updatedAt - lastDecreaseAt >= WindowMs) {
      share = math.max(MinShare, share * DecreaseFactor)
      lastDecreaseAt = updatedAt
    }
    recordTokens = math.min(recordTokens, 0.0)
    byteTokens = math.min(byteTokens, 0.0)
  }

  /** The share of the limits the pacer currently allows, in (0, 1]. */
  def currentShare: Double = synchronized { refill(); share }

  /** When a task last asked to write to the shard (for eviction of pacers no one uses). */
  def lastUsed: Long = synchronized(lastUsedAt)

  private def refill(): Unit = {
    val now = clock()
    val elapsed = now - updatedAt
    if (elapsed > 0) {
      // The share grows back only after the window of a cut: within it, refusals of the same excess arrive.
      val growing = now - math.max(updatedAt, lastDecreaseAt + WindowMs)
      if (growing > 0) share = math.min(MaxShare, share + IncreasePerSecond * growing / 1000.0)
      recordTokens = math.min(recordCapacity, recordTokens + elapsed * recordRate)
      byteTokens = math.min(byteCapacity, byteTokens + elapsed * byteRate)
      updatedAt = now
    }
  }
}

object ShardWritePacer {
  /** Kinesis's accounting window. */
  val WindowMs = 1000L
  /** The largest share of the limits a pacer allows. */
  val MaxShare = 1.0
  /** Below this share a writer still makes progress (a shard at 5 % takes 50 records/s). */
  val MinShare = 0.05
  /** The cut on a throttle. */
  val DecreaseFactor = 0.9
  /** The growth, in shares of the limits per second, while nothing is throttled. */
  val IncreasePerSecond = 0.01
  /** The most a bucket holds, in milliseconds of its rate. */
  val BurstMs = 100L
}
