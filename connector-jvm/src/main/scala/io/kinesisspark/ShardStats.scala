package io.kinesisspark

import io.kinesisspark.executor.ShardFetchResult
import io.kinesisspark.reader.ShardCounters

/**
 * What the prefetcher knows about one shard's fetching.
 *
 * {{{
 *   val stats = ShardStats.after(previous = stats.get(key), result, roundStart, takenAt)
 *   stats.counters.throttles   // every round's so far
 *   stats.lastRound.calls      // the latest round's that fetched the shard
 * }}}
 *
 * @param millisBehindLatest   how far the furthest record fetched was behind the shard's tip, as last measured
 * @param lagMeasuredAtMillis  when (the driver's clock) that was measured: when the driver took the fetch's result
 * @param caughtUpAtRoundStart the start time of the latest round in which the shard was read up to its tip
 * @param location             the executor that fetched the shard last (the next round sends it there again)
 * @param counters             what the shard's readers counted in every round so far
 * @param lastRound            what they counted in the latest round that fetched the shard
 */
final case class ShardStats(
    millisBehindLatest: Option[Long],
    lagMeasuredAtMillis: Option[Long],
    caughtUpAtRoundStart: Option[Long],
    location: Option[String],
    counters: ShardCounters,
    lastRound: ShardCounters)

object ShardStats {
  /**
   * A shard's statistics once a round that began at `roundStart` brought `result`, which the driver took at `takenAt`
   * (the driver's clock): what the round did not measure is kept from `previous`.
   */
  def after(previous: Option[ShardStats], result: ShardFetchResult, roundStart: Long, takenAt: Long): ShardStats =
    ShardStats(
      millisBehindLatest = result.millisBehindLatest.orElse(previous.flatMap(_.millisBehindLatest)),
      lagMeasuredAtMillis =
        if (result.millisBehindLatest.isDefined) Some(takenAt) else previous.flatMap(_.lagMeasuredAtMillis),
      caughtUpAtRoundStart = if (result.caughtUp) Some(roundStart) else previous.flatMap(_.caughtUpAtRoundStart),
      location = Some(result.location),
      counters = previous.fold(ShardCounters.Zero)(_.counters) + result.counters,
      lastRound = result.counters)
}
