package io.kinesisspark.sink

/**
 * What a writer sent one shard over the last second, counted in slots of `slotMs`: Kinesis counts a shard's writes
 * over one-second windows, and a rate alone does not keep every such window within the limits when entries are
 * large (a full aggregate is a twentieth of a shard's second, so a second may catch one more than the average).
 * The counts cover the current slot and enough whole slots before it to span `windowMs`, so they err on the side of
 * counting a little more than one second. Fixed size: `windowMs / slotMs + 1` slots.
 *
 * {{{
 *   val recent = new RecentWrites()
 *   recent.add(now, records = 1, bytes = 51200)
 *   recent.bytes(now)                                            // 51200 for about the next second
 *   recent.readyInMs(now, 1, 51200, maxRecords = 990, maxBytes = 1038090)
 * }}}
 */
final class RecentWrites(windowMs: Long = 1000L, slotMs: Long = 25L) {
  require(windowMs > 0 && slotMs > 0 && windowMs % slotMs == 0, "windowMs must be a multiple of slotMs")

  private val slots = (windowMs / slotMs + 1).toInt
  private val recordCounts = new Array[Long](slots)
  private val byteCounts = new Array[Long](slots)
  /** The slot number (time / slotMs) of the newest slot counted. */
  private var newest = Long.MinValue

  def add(now: Long, records: Long, bytes: Long): Unit = {
    advance(now)
    val i = index(newest)
    recordCounts(i) += records
    byteCounts(i) += bytes
  }

  /**
   * Takes back `records` and `bytes` added at `at`, if that slot is still counted (never below zero): writes the
   * shard refused, which Kinesis does not count either.
   */
  def remove(at: Long, records: Long, bytes: Long): Unit = {
    val slot = java.lang.Math.floorDiv(at, slotMs)
    if (newest != Long.MinValue && slot <= newest && newest - slot < slots) {
      val i = index(slot)
      recordCounts(i) = math.max(0L, recordCounts(i) - records)
      byteCounts(i) = math.max(0L, byteCounts(i) - bytes)
    }
  }

  def records(now: Long): Long = { advance(now); recordCounts.sum }

  def bytes(now: Long): Long = { advance(now); byteCounts.sum }

  /**
   * Milliseconds until `records` more records and `bytes` more bytes stay within `maxRecords` and `maxBytes`
   * (0 if now). An entry larger than the byte limit fits only an empty window.
   */
  def readyInMs(now: Long, records: Long, bytes: Long, maxRecords: Long, maxBytes: Long): Long = {
    advance(now)
    var heldRecords = recordCounts.sum
    var heldBytes = byteCounts.sum
    def fits = heldRecords + records <= maxRecords && (heldBytes == 0 || heldBytes + bytes <= maxBytes)
    if (fits) return 0L
    // Slots leave the count oldest first: the slot `newest - slots + 1 + k` leaves at the start of slot
    // `newest + 1 + k`.
    var k = 0
    while (k < slots) {
      val leaving = newest - slots + 1 + k
      heldRecords -= recordCounts(index(leaving))
      heldBytes -= byteCounts(index(leaving))
      if (fits) return math.max(1L, (newest + 1 + k) * slotMs - now)
      k += 1
    }
    math.max(1L, (newest + 1 + slots) * slotMs - now)
  }

  private def index(slot: Long): Int = java.lang.Math.floorMod(slot, slots.toLong).toInt

  /** Moves the newest slot to `now`'s, emptying the slots that fall out of the window. */
  private def advance(now: Long): Unit = {
    val current = java.lang.Math.floorDiv(now, slotMs)
    if (newest == Long.MinValue || current - newest >= slots) {
      java.util.Arrays.fill(recordCounts, 0L)
      java.util.Arrays.fill(byteCounts, 0L)
      newest = current
    } else {
      while (newest < current) {
        newest += 1
        recordCounts(index(newest)) = 0L
        byteCounts(index(newest)) = 0L
      }
    }
  }
}
