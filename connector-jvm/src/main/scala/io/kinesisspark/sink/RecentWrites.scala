package io.kinesisspark.sink

/**
 * What a writer sent one shard over the last `windowMs`, entry by entry: Kinesis counts a shard's writes over
 * one-second windows, and a rate alone does not keep every such window within the limits when entries are large
 * (a full aggregate is a twentieth of a shard's second, so a second may catch one more than the average).
 *
 * Exact, not counted in slots of time: a count that errs long by a slot holds a writer of large entries to fewer
 * than a second takes (21 aggregates of 48,598 bytes fit a MiB, but 21 per 1,010 ms is 96.6 % of it), and one that
 * errs short lets one entry too many into a second. Entries added in the same millisecond share one place, so it
 * holds at most `windowMs` + 1 of them (24 bytes each), however fast the writes.
 *
 * Not thread-safe: its pacer guards it.
 *
 * {{{
 *   val recent = new RecentWrites()
 *   recent.add(now, records = 1, bytes = 51200)
 *   recent.bytes(now)                                            // 51200 for the next second
 *   recent.readyInMs(now, 1, 51200, maxRecords = 990, maxBytes = 1038090)
 * }}}
 */
final class RecentWrites(windowMs: Long = 1000L) {
  require(windowMs > 0, s"windowMs must be positive, not $windowMs")

  // A ring of the entries of the last window, oldest at `head`, with their running totals.
  private var times = new Array[Long](16)
  private var recordCounts = new Array[Long](16)
  private var byteCounts = new Array[Long](16)
  private var head = 0
  private var size = 0
  private var heldRecords = 0L
  private var heldBytes = 0L

  def add(now: Long, records: Long, bytes: Long): Unit = {
    expire(now)
    heldRecords += records
    heldBytes += bytes
    if (size > 0 && times(index(size - 1)) == now) {
      recordCounts(index(size - 1)) += records
      byteCounts(index(size - 1)) += bytes
      return
    }
    if (size == times.length) grow()
    val i = index(size)
    times(i) = now
    recordCounts(i) = records
    byteCounts(i) = bytes
    size += 1
  }

  /**
   * Takes back `records` and `bytes` added at `at`, if that entry is still counted (never below zero): writes the
   * shard refused, which Kinesis does not count either.
   */
  def remove(at: Long, records: Long, bytes: Long): Unit = {
    // The newest entry added at that time that still counts something (an earlier refund may have emptied one).
    var k = size - 1
    while (k >= 0 && (times(index(k)) > at || (times(index(k)) == at && recordCounts(index(k)) == 0))) k -= 1
    if (k >= 0 && times(index(k)) == at) {
      val i = index(k)
      val r = math.min(records, recordCounts(i))
      val b = math.min(bytes, byteCounts(i))
      recordCounts(i) -= r
      byteCounts(i) -= b
      heldRecords -= r
      heldBytes -= b
    }
  }

  def records(now: Long): Long = { expire(now); heldRecords }

  def bytes(now: Long): Long = { expire(now); heldBytes }

  /**
   * Milliseconds until `records` more records and `bytes` more bytes stay within `maxRecords` and `maxBytes`
   * (0 if now). An entry larger than the byte limit fits only an empty window.
   */
  def readyInMs(now: Long, records: Long, bytes: Long, maxRecords: Long, maxBytes: Long): Long = {
    expire(now)
    var r = heldRecords
    var b = heldBytes
    def fits = r + records <= maxRecords && (b == 0 || b + bytes <= maxBytes)
    if (fits) return 0L
    // Entries leave the count oldest first, each at its time plus the window.
    var k = 0
    while (k < size) {
      val i = index(k)
      r -= recordCounts(i)
      b -= byteCounts(i)
      if (fits) return math.max(1L, times(i) + windowMs - now)
      k += 1
    }
    1L // not reached: an empty window takes any entry
  }

  private def index(k: Int): Int = (head + k) % times.length

  /** Drops the entries that have left the window: an entry counts while it is less than `windowMs` old. */
  private def expire(now: Long): Unit = {
    while (size > 0 && times(head) <= now - windowMs) {
      heldRecords -= recordCounts(head)
      heldBytes -= byteCounts(head)
      head = (head + 1) % times.length
      size -= 1
    }
    if (size == 0) { head = 0; heldRecords = 0; heldBytes = 0 }
  }

  private def grow(): Unit = {
    def copied(from: Array[Long]): Array[Long] = {
      val to = new Array[Long](from.length * 2)
      (0 until size).foreach(k => to(k) = from(index(k)))
      to
    }
    val (t, r, b) = (copied(times), copied(recordCounts), copied(byteCounts))
    times = t
    recordCounts = r
    byteCounts = b
    head = 0
  }
}
