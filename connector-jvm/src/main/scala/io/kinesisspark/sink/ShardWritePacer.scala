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
 * producers. So the share starts at [[MaxShare]] of the limits (below 1: a shard's second is sent in many calls,
 * and the one-second windows Kinesis counts over may catch one call more than the writer's own second) and is cut
 * when a write to the shard is throttled, then grows back by [[IncreasePerSecond]] of the limits each second
 * (additive increase, multiplicative decrease, as TCP shares a link: writers that share a shard converge to shares
 * that add up to what it takes). The cut is measured: the first throttle of a window cuts by [[FirstCut]], a
 * trim (a call that landed in a full second: the writer's calls reach Kinesis some milliseconds after it counts them,
 * not all equally late, so a writer alone on its shard meets such throttles now and then; a deep cut for each would
 * cost more than the refused entries do), and when that window ends, a loss of more than
 * [[FirstCut]]'s worth (the shard is shared with writers that take a real part of it) cuts again by the share of
 * the window's entries that were refused after the first. A throttle also empties the buckets: the shard is full now.
 *
 * The buckets hold up to [[BurstMs]] of tokens, so a writer that stalls a moment (a GC pause, a busy core, a call
 * that took long) makes up for it instead of losing its share of that time; the bytes bucket holds at least
 * [[LargestEntrySlack]] times the largest entry asked for (a full aggregate is a 20th of a shard's second), so
 * tokens are not lost while an entry waits for its call. What the buckets let through is capped by the pacer's own
 * count of its last second ([[RecentWrites]]): an entry goes only if that second stays within [[WindowShare]] of
 * the limits with it (and within the share plus a burst, when the share is cut), which a rate alone does not ensure:
 * a full bucket emptied at full rate puts the rate plus the bucket into one second, and Kinesis refuses the excess.
 *
 * Thread-safe: one pacer serves every writer task of a JVM that writes to the shard ([[ShardWritePacers]]).
 *
 * {{{
 *   val pacer = new ShardWritePacer(ShardWriteLimits(), clock = () => System.currentTimeMillis())
 *   val takenAt = pacer.take(bytes = 120)
 *   if (takenAt != ShardWritePacer.NotTaken) send(entry) else wait(pacer.readyInMs(bytes = 120))
 *   pacer.throttled(takenAt, bytes = 120)   // Kinesis refused that write: slow down
 * }}}
 *
 * @param clock milliseconds, replaced in tests
 */
final class ShardWritePacer(val limits: ShardWriteLimits, clock: () => Long) {
  import ShardWritePacer._

  private var share = MaxShare
  private var updatedAt = clock()
  /** The window that began with a throttle: what was taken and throttled in it, while it is open. */
  private var windowStart = Long.MinValue / 2
  private var windowOpen = false
  private var windowTaken = 0L
  private var windowThrottled = 0L
  private var recordTokens = recordCapacity
  private var byteTokens = byteCapacity
  private var lastUsedAt = updatedAt
  private var largestEntry = 0L
  private val recent = new RecentWrites(WindowMs + ArrivalSlackMs)

  /** The most of the limits one second may hold: what the buckets would allow, and never over [[WindowShare]]. */
  private def windowShare: Double = math.min(WindowShare, share + BurstMs / 1000.0)
  private def windowRecords: Long = math.max(1L, (limits.recordsPerSecond * windowShare).toLong)
  private def windowBytes: Long = (limits.bytesPerSecond * windowShare).toLong

  private def recordRate: Double = limits.recordsPerSecond * share / 1000.0 // per ms
  private def byteRate: Double = limits.bytesPerSecond * share / 1000.0
  private def recordCapacity: Double = math.max(1.0, limits.recordsPerSecond * share * BurstMs / 1000.0)
  private def byteCapacity: Double =
    math.max(math.max(1.0, limits.bytesPerSecond * share * BurstMs / 1000.0), largestEntry * LargestEntrySlack)

  /** Takes the tokens of one entry of `bytes` if the shard can take it now; false (and nothing taken) if not. */
  def tryTake(bytes: Long): Boolean = take(bytes) != NotTaken

  /**
   * As [[tryTake]], answering when (on the pacer's clock) the entry was counted, which [[throttled]] needs if
   * Kinesis refuses it; [[ShardWritePacer.NotTaken]] if it was not.
   */
  def take(bytes: Long): Long = synchronized {
    refill()
    lastUsedAt = updatedAt
    largestEntry = math.max(largestEntry, math.min(bytes, limits.bytesPerSecond))
    if (recordTokens >= 1.0 && byteTokens >= math.min(bytes.toDouble, byteCapacity) && windowWait(bytes) == 0) {
      recordTokens -= 1.0
      byteTokens -= bytes
      recent.add(updatedAt, 1, bytes)
      if (windowOpen) windowTaken += 1
      updatedAt
    } else NotTaken
  }

  /** Milliseconds until an entry of `bytes` could be taken (0 if now), at least 1 when it cannot be now. */
  def readyInMs(bytes: Long): Long = synchronized {
    refill()
    val recordWait = if (recordTokens >= 1.0) 0.0 else (1.0 - recordTokens) / recordRate
    val needed = math.min(bytes.toDouble, byteCapacity)
    val byteWait = if (byteTokens >= needed) 0.0 else (needed - byteTokens) / byteRate
    val wait = math.max(math.max(recordWait, byteWait), windowWait(bytes).toDouble)
    if (wait <= 0) 0L else math.max(1L, math.ceil(wait).toLong)
  }

  /** How long an entry waits for the pacer's own last second to have room for it. */
  private def windowWait(bytes: Long): Long = recent.readyInMs(updatedAt, 1, bytes, windowRecords, windowBytes)

  /**
   * Kinesis throttled a write (one entry of `bytes`, taken at `takenAt` on the pacer's clock) to the shard: cut the share and take
   * nothing more for now. The entry leaves the pacer's count of its last second: Kinesis did not count it (a refused
   * record takes none of the shard's throughput), and counting it would keep an entry's worth of the next second
   * unused, a twentieth of it for a full aggregate, each time a shard alone at its limit meets a throttle.
   */
  def throttled(takenAt: Long, bytes: Long): Unit = synchronized {
    refill()
    recent.remove(takenAt, 1, bytes)
    if (!windowOpen) {
      share = math.max(MinShare, share * FirstCut)
      windowStart = updatedAt
      windowOpen = true
      windowTaken = 0
      windowThrottled = 0
    }
    windowThrottled += 1
    recordTokens = math.min(recordTokens, 0.0)
    byteTokens = math.min(byteTokens, 0.0)
  }

  /** The records and bytes the pacer counts as sent to the shard over its last second (and [[ArrivalSlackMs]]). */
  private[sink] def lastSecond: (Long, Long) = synchronized {
    refill()
    (recent.records(updatedAt), recent.bytes(updatedAt))
  }

  /** The share of the limits the pacer currently allows, in (0, 1]. */
  def currentShare: Double = synchronized { refill(); share }

  /** When a task last asked to write to the shard (for eviction of pacers no one uses). */
  def lastUsed: Long = synchronized(lastUsedAt)

  private def refill(): Unit = {
    val now = clock()
    val elapsed = now - updatedAt
    if (elapsed > 0) {
      if (windowOpen && now - windowStart >= WindowMs) {
        // Refused entries against all the window saw, but for the first: that one is the trim FirstCut answered,
        // and counting it again would make one refused aggregate of the ~20 a shard's second holds (a writer alone
        // on its shard) look like 5 % of the shard taken by others. A writer that hardly sent in the window has
        // nothing to measure.
        val loss = (windowThrottled - 1).toDouble / (windowTaken + windowThrottled)
        if (windowTaken >= MinWindowEntries && loss > 1 - FirstCut) {
          share = math.max(MinShare, share * math.max(MaxLossCut, 1 - loss))
        }
        windowOpen = false
      }
      // The share grows back only after the window of a cut: within it, refusals of the same excess arrive.
      val growing = now - math.max(updatedAt, windowStart + WindowMs)
      if (growing > 0) share = math.min(MaxShare, share + IncreasePerSecond * growing / 1000.0)
      recordTokens = math.min(recordCapacity, recordTokens + elapsed * recordRate)
      byteTokens = math.min(byteCapacity, byteTokens + elapsed * byteRate)
      updatedAt = now
    }
  }
}

object ShardWritePacer {
  /** What [[ShardWritePacer.take]] answers when the shard cannot take the entry now. */
  val NotTaken: Long = Long.MinValue

  /** Kinesis's accounting window. */
  val WindowMs = 1000L
  /**
   * The pacer's own count of a second spans this much more: a call reaches Kinesis some milliseconds after the
   * pacer counts it, not every call equally late, so calls sent just over a second apart may arrive within one.
   */
  val ArrivalSlackMs = 5L
  /** The most of the limits that any one second of the pacer's own writes may hold. */
  val WindowShare = 0.99
  /** The largest share of the limits a pacer's buckets fill at. */
  val MaxShare = 0.985
  /** Below this share a writer still makes progress (a shard at 5 % takes 50 records/s). */
  val MinShare = 0.05
  /** The cut on the first throttle of a window. */
  val FirstCut = 0.99
  /** Entries a window must have sent for its loss to count. */
  val MinWindowEntries = 10
  /** The deepest cut for the loss of one window. */
  val MaxLossCut = 0.5
  /** The growth, in shares of the limits per second, while nothing is throttled. */
  val IncreasePerSecond = 0.05
  /** The most a bucket holds, in milliseconds of its rate. */
  val BurstMs = 200L
  /** The bytes bucket holds at least this many of the largest entry. */
  val LargestEntrySlack = 1.5
}
