package io.kinesisspark

import io.kinesisspark.blocks.FetchedRange
import io.kinesisspark.prefetch.Prefetcher

/**
 * What Trigger.AvailableNow must read: the shards listed when it started, each up to what it held at `atMillis`,
 * and nothing that arrived after it (Spark's contract: the end is fixed when the trigger starts). A shard is done
 * when it is finished at the batch start, when a fetch round that began at or after `atMillis` read it up to its
 * tip (everything it held at that time is then buffered, and exposed unless the batch start already includes it),
 * or when what is buffered after the batch start begins after `atMillis` (fetch rounds split responses there, so a
 * shard that a producer keeps busy ends too).
 *
 * {{{
 *   val target = AvailableNowTarget(clock.millis(), listedShards)
 *   buffered.takeWhile(r => !target.isAfter(r))   // what a batch may expose
 * }}}
 */
final case class AvailableNowTarget(atMillis: Long, shards: Set[(String, String)]) {
  def reachedBy(start: KinesisSourceOffset, prefetcher: Prefetcher): Boolean = {
    val stats = prefetcher.shardStats
    shards.forall { case key @ (stream, shard) =>
      // A finished shard whose children moved on is no longer in the offset; the prefetcher knows it finished.
      val position = start.position(stream, shard).orElse(prefetcher.startingPosition(stream, shard).filter(_ == ShardPosition.Finished))
      position.contains(ShardPosition.Finished) ||
        stats.get(key).flatMap(_.caughtUpAtRoundStart).exists(_ >= atMillis) ||
        position.exists(from => prefetcher.buffer.rangesAfter(stream, shard, from).headOption.exists(isAfter))
    }
  }

  /** Whether the range's records arrived after the target (Kinesis's ApproximateArrivalTimestamp). */
  def isAfter(range: FetchedRange): Boolean = range.records > 0 && range.firstArrivalMillis > atMillis
}
