package io.kinesisspark

/**
 * What Trigger.AvailableNow must read: the shards listed when it started, each up to what it held at `atMillis`.
 * A shard is done when it is finished at the batch start, or when a fetch round that began at or after `atMillis`
 * read it up to its tip (everything it held at that time is then buffered, and exposed unless the batch start
 * already includes it).
 */
final case class AvailableNowTarget(atMillis: Long, shards: Set[(String, String)]) {
  def reachedBy(start: KinesisSourceOffset, prefetcher: Prefetcher): Boolean = {
    val stats = prefetcher.shardStats
    shards.forall { case key @ (stream, shard) =>
      start.position(stream, shard).contains(ShardPosition.Finished) ||
        stats.get(key).flatMap(_.caughtUpAtRoundStart).exists(_ >= atMillis)
    }
  }
}
