package io.kinesisspark.reader

import java.io.{DataInput, DataOutput}

/**
 * How one shard's reading fared, as counts that add up: a reader counts them since it was made, a fetch task reports
 * the difference over the task, the driver adds each round's to the shard's total and the metrics add up the shards'.
 * Every layer carries this one value, so a counter is added here (and where it is counted and reported) only.
 *
 * {{{
 *   val before = reader.counters
 *   reader.next()
 *   val task = reader.counters - before  // ShardCounters(calls = 1, callMillis = 12): what this call did
 *   val total = stats.counters + task    // the shard's, every round so far
 * }}}
 *
 * @param calls                GetRecords calls, or subscription events received, with enhanced fan-out
 * @param throttles            calls Kinesis throttled (with enhanced fan-out: subscriptions refused or throttled)
 * @param callMillis           time spent in those calls
 * @param dataLossEvents       times records were found gone and skipped (only with `failOnDataLoss=false`)
 * @param outOfRangeSubRecords KPL user records returned although their hash key is outside the shard's range
 * @param corruptAggregates    records returned raw because they started like KPL aggregates but were not valid
 * @param subscriptions        with enhanced fan-out, subscriptions the service accepted (the first, then each renewal)
 */
final case class ShardCounters(
    calls: Long = 0L,
    throttles: Long = 0L,
    callMillis: Long = 0L,
    dataLossEvents: Long = 0L,
    outOfRangeSubRecords: Long = 0L,
    corruptAggregates: Long = 0L,
    subscriptions: Long = 0L) {

  def +(other: ShardCounters): ShardCounters = zip(other)(_ + _)

  /** What was counted since `earlier` (counters of the same reader, read before). */
  def -(earlier: ShardCounters): ShardCounters = zip(earlier)(_ - _)

  private def zip(other: ShardCounters)(f: (Long, Long) => Long): ShardCounters = ShardCounters(
    f(calls, other.calls), f(throttles, other.throttles), f(callMillis, other.callMillis),
    f(dataLossEvents, other.dataLossEvents), f(outOfRangeSubRecords, other.outOfRangeSubRecords),
    f(corruptAggregates, other.corruptAggregates), f(subscriptions, other.subscriptions))

  /** Every counter as a long, in the order of the fields: [[ShardCounters.read]] reads them back. */
  def write(out: DataOutput): Unit = {
    out.writeLong(calls)
    out.writeLong(throttles)
    out.writeLong(callMillis)
    out.writeLong(dataLossEvents)
    out.writeLong(outOfRangeSubRecords)
    out.writeLong(corruptAggregates)
    out.writeLong(subscriptions)
  }
}

object ShardCounters {
  val Zero: ShardCounters = ShardCounters()

  /** Counters [[ShardCounters.write]] wrote. */
  def read(in: DataInput): ShardCounters = ShardCounters(calls = in.readLong(), throttles = in.readLong(),
    callMillis = in.readLong(), dataLossEvents = in.readLong(), outOfRangeSubRecords = in.readLong(),
    corruptAggregates = in.readLong(), subscriptions = in.readLong())
}
