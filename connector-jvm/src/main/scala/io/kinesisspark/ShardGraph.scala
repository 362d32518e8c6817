package io.kinesisspark

import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.ShardInfo

/**
 * The shards of one stream as ListShards reports them, and the rule that keeps per-key order across
 * resharding: a shard is read only once all its parents have been read to their end. A parent counts as read
 * when our offset says `Finished` (GetRecords returned SHARD_END) — never merely because ListShards says it is
 * closed — or when it is no longer listed at all (it aged out of the stream's retention; [[ShardListings]] decides
 * that from more than one listing).
 */
final case class ShardGraph(shards: Seq[ShardInfo]) {
  private val listed: Set[String] = shards.iterator.map(_.shardId).toSet

  /** Whether the shard is among those listed. */
  def lists(shardId: String): Boolean = listed.contains(shardId)
  private val parents: Map[String, Seq[String]] = shards.iterator.map(s => s.shardId -> s.parentShardIds).toMap

  private val children: Map[String, Seq[String]] =
    shards.flatMap(s => s.parentShardIds.map(_ -> s.shardId)).groupBy(_._1).map { case (p, cs) => p -> cs.map(_._2) }

  /**
   * Whether a shard was certainly read to its end, though its own position is not known: a child (or a child's
   * child) has been read, and children are read only after their parents ended. A shard that left the offset
   * (finished, then missing from listings) and is listed again is not read a second time.
   */
  def endedByDescendants(shardId: String, positions: Map[String, ShardPosition]): Boolean =
    children.getOrElse(shardId, Nil).exists { child =>
      positions.get(child).exists(p => p == Finished || p.isInstanceOf[ShardPosition.AfterRecord]) ||
        endedByDescendants(child, positions)
    }

  /**
   * Whether a finished shard's place in the offset can go: it has children, and every one of them has read a
   * record or finished (or, itself gone from the offset, has descendants that did). From then on nothing needs it:
   * children are readable once they have read a record, and [[endedByDescendants]] tells the shard ended if it is
   * listed again after a restart. A child still at its starting position keeps its parent in the offset.
   */
  def movedOn(shardId: String, positions: Map[String, ShardPosition]): Boolean = {
    val kids = children.getOrElse(shardId, Nil)
    kids.nonEmpty && kids.forall { child =>
      positions.get(child) match {
        case Some(p) => p == Finished || p.isInstanceOf[ShardPosition.AfterRecord]
        case None    => endedByDescendants(child, positions)
      }
    }
  }

  /** The listed shards that descend from any of `ids` (children, their children...), `ids` themselves left out. */
  def descendantsOf(ids: Set[String]): Set[String] = closure(ids, children) -- ids

  /** The listed shards any of `ids` descends from (parents, their parents...), `ids` themselves left out. */
  def ancestorsOf(ids: Set[String]): Set[String] = closure(ids, parents) -- ids

  private def closure(from: Set[String], next: Map[String, Seq[String]]): Set[String] = {
    var reached = Set.empty[String]
    var frontier = from.toSeq
    while (frontier.nonEmpty) {
      val found = frontier.flatMap(next.getOrElse(_, Nil)).filter(id => listed(id) && !reached(id))
      reached ++= found
      frontier = found.distinct
    }
    reached
  }

  /** The listed children of a shard (none until a listing after its reshard). */
  def childrenOf(shardId: String): Seq[String] = children.getOrElse(shardId, Nil).filter(listed)

  /** The listed parents of a shard (parents that aged out of the stream are not listed). */
  def parentsOf(shardId: String): Seq[String] = parents.getOrElse(shardId, Nil).filter(listed)

  /**
   * The shards to read now, given each shard's position (`positions` must hold every listed shard).
   * Finished shards and shards whose parents are not finished are left out.
   */
  def readable(positions: Map[String, ShardPosition]): Seq[ShardInfo] = shards.filter(isReadable(_, positions.get))

  /**
   * The listed children of a shard that may be read now, given where shards stand (`position`), asked only about
   * them and their parents: for one shard's end among many, where [[readable]] would look at every shard.
   */
  def readableChildren(shardId: String, position: String => Option[ShardPosition]): Seq[ShardInfo] =
    childrenOf(shardId).flatMap(byId.get).filter(isReadable(_, position))

  private lazy val byId: Map[String, ShardInfo] = shards.iterator.map(s => s.shardId -> s).toMap

  private def isReadable(s: ShardInfo, position: String => Option[ShardPosition]): Boolean =
    position(s.shardId).exists(_ != Finished) &&
      s.parentShardIds.forall(p => !listed.contains(p) || position(p).contains(Finished))
}
