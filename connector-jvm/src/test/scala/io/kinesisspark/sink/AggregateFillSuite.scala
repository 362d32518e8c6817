package io.kinesisspark.sink

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.SteppedClock
import io.kinesisspark.aws.{HashKeyRange, ShardInfo}
import io.kinesisspark.kpl.UserRecord

class AggregateFillSuite extends AnyFunSuite {
  import AggregateFill._

  private val limits = ShardWriteLimits()
  private val oneShard = ShardMap(Seq(ShardInfo("shard-0", Nil, closed = false,
    Some(HashKeyRange(0, UserRecord.HashKeySpace - 1)))))

  /** Rows of `bytes` (data and an 8-character key, one of 64) as an aggregator with `fill` packs them. */
  private def packed(fill: AggregateFill, bytes: Int, rows: Int): Seq[SinkEntry] = {
    val out = mutable.ArrayBuffer.empty[SinkEntry]
    val aggregator = new KplAggregator(_ => oneShard, fill, out += _)
    (0 until rows).foreach(i => aggregator.add("s", UserRecord(f"k${i % 64}%07d", None, new Array[Byte](bytes - 8))))
    aggregator.flush()
    out.toSeq
  }

  /** Rows per second a paced shard takes of `entries`, sent as soon as its pacer lets each go, over 30 s. */
  private def rowsPerSecond(entries: Seq[SinkEntry]): Double = {
    val clock = new SteppedClock
    val pacer = new ShardWritePacer(limits, () => clock.now)
    val it = entries.iterator.buffered
    var rows = 0L
    while (clock.now < 30000 && it.hasNext) {
      while (it.hasNext && pacer.tryTake(it.head.size)) rows += it.next().userRecords
      clock.sleep(1)
    }
    assert(it.hasNext, "the entries ran out before the 30 s: give more rows")
    rows / 30.0
  }

  test("before any row: the size that tiles a shard's second when paced; aggregationMaxBytes when not") {
    assert(fillingEntryBytes(limits, 51200) == 49432) // 21 of them: 99 % of 1 MiB
    assert(fillingEntryBytes(ShardWriteLimits(bytesPerSecond = 512 * 1024), 51200) == 47185) // 11
    assert(fillingEntryBytes(limits, 1024 * 1024) == 1038090) // the whole paced second: a larger one never fits
    assert(fillingEntryBytes(ShardWriteLimits(bytesPerSecond = 40000), 51200) == 39600)
    // 1,050 entries of 1,000 bytes would fill the second, but the records limit takes 990: as asked
    assert(fillingEntryBytes(limits, 1000) == 1000)
    assert(fillingEntryBytes(ShardWriteLimits(recordsPerSecond = 10), 51200) == 51200)
    assert(paced(limits, 51200).bytes == 49432)
    val unpaced = fixed(51200)
    (1 to 100).foreach(_ => unpaced.observe(rowBytes = 1035, plainBytes = 1024, outerBytes = 28))
    assert(unpaced.bytes == 51200)
  }

  test("1 KB rows: aggregates of 40 rows, 25 to a second, carry more rows than the largest that tile it (47, 21)") {
    val fill = paced(limits, 51200)
    (1 to 100).foreach(_ => fill.observe(rowBytes = 1035, plainBytes = 1024, outerBytes = 28))
    assert(fill.bytes == 1038090 / 25)
    val sized = packed(paced(limits, 51200), 1024, 40000)
    val tiling = packed(fixed(fillingEntryBytes(limits, 51200)), 1024, 40000)
    assert(sized.head.userRecords < tiling.head.userRecords, s"${sized.head.userRecords} ${tiling.head.userRecords}")
    val (more, fewer) = (rowsPerSecond(sized), rowsPerSecond(tiling))
    // The pacer lets 99 % of 1,048,576 bytes through a second: 1,003 rows of 1,035 bytes at the very most.
    assert(more >= 985 && more > fewer + 8, s"$more rows/s sized to the rows, $fewer tiling the second")
  }

  test("10 KB rows: alone, as plain records, more of them fit a second than 4 to an aggregate") {
    val fill = paced(limits, 51200)
    (1 to 100).foreach(_ => fill.observe(rowBytes = 10252, plainBytes = 10240, outerBytes = 28))
    val entries = packed(paced(limits, 51200), 10240, 4000)
    assert(entries.forall(_.userRecords == 1) && entries.forall(!_.aggregated), entries.take(3))
    val aggregated = packed(fixed(fillingEntryBytes(limits, 51200)), 10240, 4000)
    assert(aggregated.head.userRecords == 4)
    val (plain, four) = (rowsPerSecond(entries), rowsPerSecond(aggregated))
    assert(plain >= 99 && plain > four, s"$plain rows/s plain, $four four to an aggregate")
  }

  test("the fill follows the rows when their size changes; rows too large to share an aggregate leave it as it was") {
    val fill = paced(limits, 51200)
    (1 to 1000).foreach(_ => fill.observe(rowBytes = 1035, plainBytes = 1024, outerBytes = 28))
    val forKilobyte = fill.bytes
    (1 to 20000).foreach(_ => fill.observe(rowBytes = 110, plainBytes = 100, outerBytes = 28))
    assert(fill.bytes != forKilobyte)
    // 100-byte rows: about 440 to the largest aggregate, and the 21 of them that tile a second are close to best
    assert(fill.bytes >= 40000 && fill.bytes <= 49432, fill.bytes)
    val large = paced(limits, 51200)
    (1 to 50).foreach(_ => large.observe(rowBytes = 60000, plainBytes = 59990, outerBytes = 28))
    assert(large.bytes == 51200)
  }
}
