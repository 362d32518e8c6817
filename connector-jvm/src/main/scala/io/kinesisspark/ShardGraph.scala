package io.kinesisspark

import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.ShardInfo

/**
 * The shards of one stream as ListShards reports them, and the rule that keeps per-key order across
 * resharding: a shard is read only once all its parents have been read to their end. A parent counts as read
 * when our offset says `Finished` (GetRecords returned SHARD_END) — never merely because ListShards says it is
 * closed — or when it is no longer listed at all (it aged out of the stream's retention).
 */
final case class ShardGraph(shards: Seq[ShardInfo]) {
  private val listed: Set[String] = shards.iterator.map(_.shardId).toSet
  private val parents: Map[String, Seq[String]] = shards.iterator.map(s => s.shardId -> s.parentShardIds).toMap

  /** The listed parents of a shard (parents that aged out of the stream are not listed). */
  def parentsOf(shardId: String): Seq[String] = parents.getOrElse(shardId, Nil).filter(listed)

  /**
   * The shards to read now, given each shard's position (`positions` must hold every listed shard).
   * Finished shards and shards whose parents are not finished are left out.
   */
  def readable(positions: Map[String, ShardPosition]): Seq[ShardInfo] =
    shards.filter { s =>
      positions.get(s.shardId).exists(_ != Finished) &&
        s.parentShardIds.forall(p => !listed.contains(p) || positions.get(p).contains(Finished))
    }
}
