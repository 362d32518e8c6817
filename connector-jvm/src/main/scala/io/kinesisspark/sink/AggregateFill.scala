package io.kinesisspark.sink

/**
 * How full a KPL aggregate gets before [[KplAggregator]] closes it.
 *
 * Why it depends on the rows when the sink paces itself: a shard takes whole records and an aggregate holds whole
 * rows, so the part of a shard's second a writer can use depends on both sizes, and the largest aggregates do not
 * always use the most. Rows of 1,024 bytes (data and partition key) fill aggregates of up to 49,432 bytes with 47
 * rows: 21 of them fit the pacer's second, 987 rows; aggregates of 40 rows fit 25 times, 1,000 rows. Rows of
 * 10 KB fit 4 to an aggregate, 25 to a second, 100 rows; alone, as plain records, 101 fit. So a paced fill
 * watches the rows it is given (the mean of what each adds to an aggregate) and, for that row size, picks how
 * many aggregates a second should hold: the count whose aggregates, of whole rows, carry the most rows, the
 * fewest aggregates among counts within [[Tolerance]] of that (fewer, larger records: fewer entries per call). It
 * starts from the largest size whose whole number tiles the second ([[fillingEntryBytes]]), before any row.
 *
 * Not thread-safe: one per writer task's aggregator.
 *
 * {{{
 *   val fill = AggregateFill.paced(ShardWriteLimits(), maxBytes = 51200)
 *   fill.bytes                                   // 49432 before any row
 *   (1 to 100).foreach(_ => fill.observe(rowBytes = 1035, plainBytes = 1024, outerBytes = 28))
 *   fill.bytes                                   // 41523: 25 aggregates of 40 rows fit a second
 * }}}
 *
 * @param maxBytes the largest aggregate (`aggregationMaxBytes`); never exceeded
 * @param limits   the shard's limits the sink paces to; `None` (unpaced, or `preserveKeyOrder`): always `maxBytes`
 */
final class AggregateFill private (maxBytes: Int, limits: Option[ShardWriteLimits]) {
  import AggregateFill._

  private val secondBytes = limits.map(pacedBytes)
  private val secondRecords = limits.map(l => math.max(1L, (l.recordsPerSecond * ShardWritePacer.WindowShare).toLong))

  private var current = limits.fold(maxBytes)(fillingEntryBytes(_, maxBytes))
  private var rows = 0L
  private var rowBytes = 0L
  private var plainBytes = 0L
  private var outerBytes = 0L
  /** The mean row size [[current]] was chosen for. */
  private var chosenFor = 0.0

  /** What the open aggregate is filled to: it is closed before a row would take it over this. */
  def bytes: Int = current

  /**
   * A row went into an aggregate.
   *
   * @param rowBytes   what it added to the aggregate (its record, and its keys when new to the aggregate's tables)
   * @param plainBytes its size as a record of its own (data and partition key)
   * @param outerBytes what an aggregate it begins adds besides its rows: the magic bytes, digest and outer key
   */
  def observe(rowBytes: Long, plainBytes: Long, outerBytes: Long): Unit = if (secondBytes.isDefined) {
    rows += 1
    this.rowBytes += rowBytes
    this.plainBytes += plainBytes
    this.outerBytes += outerBytes
    val mean = this.rowBytes.toDouble / rows
    // Early rows each count; after that, only a drift in the row size is worth the choice again.
    if (rows <= SettleRows || math.abs(mean - chosenFor) > chosenFor * Drift) {
      chosenFor = mean
      current = choose(mean, this.plainBytes.toDouble / rows, this.outerBytes.toDouble / rows)
    }
  }

  /** The fill whose aggregates, of rows of `row` bytes, carry the most rows through one paced second. */
  private def choose(row: Double, plain: Double, outer: Double): Int = {
    val second = secondBytes.get
    val records = secondRecords.get
    val mostRows = ((maxBytes - outer) / row).toLong
    if (mostRows < 1) return maxBytes // rows too large to share an aggregate go alone anyway
    // Rows per second with n aggregates a second, each of up to second / n bytes and at most maxBytes.
    def carried(n: Long): Long = {
      val perAggregate = math.min(mostRows, ((second.toDouble / n - outer) / row).toLong)
      // An aggregate of one row is sent as the plain record it is; plain rows fill the second on their own count.
      if (perAggregate >= 2) n * perAggregate
      else math.min(records, (second / plain).toLong)
    }
    val first = (second + maxBytes - 1) / maxBytes
    val last = math.min(records, math.max(first, (second / plain).toLong))
    if (first > last) return maxBytes // the records limit holds the shard back before the bytes do
    val counts = first to last
    val best = counts.map(carried).max
    val n = counts.find(carried(_) >= best * (1 - Tolerance)).get
    if (carried(n) > 0 && ((second.toDouble / n - outer) / row).toLong < 2) {
      // Plain rows carry the most: an aggregate must not hold two.
      math.max(1, math.min(maxBytes.toLong, (outer + 2 * row).toLong - 1).toInt)
    } else math.min(maxBytes.toLong, second / n).toInt
  }
}

object AggregateFill {
  /** Rows whose every one refines the choice, before only a drift in their size does. */
  val SettleRows = 16
  /** A change in the mean row size, as a share of it, that makes the fill chosen again. */
  val Drift = 0.02
  /** Among aggregate counts that carry this close to the most rows, the fewest (largest aggregates) is chosen. */
  val Tolerance = 0.002

  /** Aggregates filled to `maxBytes`, whatever the rows: unpaced, or under `preserveKeyOrder`. */
  def fixed(maxBytes: Int): AggregateFill = new AggregateFill(maxBytes, None)

  /** Aggregates sized to carry the most rows through a shard paced to `limits`. */
  def paced(limits: ShardWriteLimits, maxBytes: Int): AggregateFill = new AggregateFill(maxBytes, Some(limits))

  /** The bytes the pacer lets through a shard's second at most ([[ShardWritePacer.WindowShare]] of the limit). */
  private def pacedBytes(limits: ShardWriteLimits): Long =
    math.max(1L, (limits.bytesPerSecond * ShardWritePacer.WindowShare).toLong)

  /**
   * The largest entry size, at most `maxBytes`, of which a whole number fills the most of a second the pacer
   * allows ([[ShardWritePacer.WindowShare]] of the byte limit): the fill before any row is seen. The pacer sends
   * whole entries, so entries of `maxBytes` leave the remainder of every second unused: 20 aggregates of 51,200
   * bytes take 97.7 % of 1 MiB, the 21st does not fit; 21 of 49,432 bytes take 99 %. `maxBytes` when the records
   * limit holds the shard back first (smaller entries would carry less), and the whole paced second when it is
   * smaller than `maxBytes` (a larger entry would never fit one).
   *
   * {{{
   *   AggregateFill.fillingEntryBytes(ShardWriteLimits(), 51200)  // 49432
   * }}}
   */
  def fillingEntryBytes(limits: ShardWriteLimits, maxBytes: Int): Int = {
    val second = pacedBytes(limits)
    val entries = (second + maxBytes - 1) / maxBytes
    if (entries > limits.recordsPerSecond * ShardWritePacer.WindowShare) maxBytes
    else (second / entries).toInt
  }
}
