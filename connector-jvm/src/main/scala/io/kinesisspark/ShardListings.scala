package io.kinesisspark

import scala.collection.mutable

import io.kinesisspark.aws.ShardInfo

/**
 * What the driver believes a stream's shards are, built from ListShards responses without trusting any single one.
 *
 * Why: a shard missing from one response (an incomplete page, a listing taken mid-reshard, an endpoint's hiccup)
 * used to count as gone: an unfinished shard was reported lost, a finished one left the offset and came back at
 * TRIM_HORIZON at the next listing (its records read twice), and a child whose parent was missing was read before
 * its parent had been read to its end. So:
 *  - a listing whose open shards do not cover the hash key space (0 to 2^128 - 1) exactly, once each, or that holds
 *    a closed shard without any of its children, is refused: the stream keeps its previous shards, and is listed
 *    again later. (Children are made when their parent closes and are closed, if ever, after it, so they leave
 *    ListShards after it does. A finished shard that left the offset is known to have ended only through its
 *    descendants: a listing that lost them would have it read again.);
 *  - a shard listed before and missing now is kept until it is missing from [[AbsencesToForget]] listings in a row
 *    (a closed shard leaves ListShards for good once its records are past retention; a miss that is not repeated
 *    was not that).
 * A stream listed for the first time, or with a new creation time (deleted and created again), starts afresh.
 *
 * Most listings need not list every shard again: a stream's shards change only by resharding, which closes the shards
 * it splits or merges and adds children with higher ids that name them as parents. So between full listings (every
 * [[FullListingEvery]]-th, and after a refused one) the caller asks only for the shards after the highest id known
 * ([[listAfter]]: ListShards' ShardFilter AFTER_SHARD_ID, one short page), and [[updateAfter]] adds them, closing
 * their parents. A stream of thousands of shards is then listed in one call that usually returns none, not in a
 * page per 1,000 shards. Full listings still find shards gone past retention and a stream created again (its ids
 * start from 0 again, below the highest known).
 *
 * {{{
 *   val listings = new ShardListings
 *   listings.update("clicks", createdMillis, api.listShards("clicks", 1000)) match {
 *     case Right(graph) => ...            // the shards to go by
 *     case Left(why) => log.warn(why)     // refused: keep going by the previous graph
 *   }
 * }}}
 */
final class ShardListings {
  import ShardListings._

  private val streams = mutable.Map.empty[String, Known]

  /** The stream's shards after this listing, or why the listing was refused (the previous shards stand). */
  def update(stream: String, createdMillis: Long, listed: Seq[ShardInfo]): Either[String, ShardGraph] =
    gap(listed) match {
      case Some(why) => Left(s"ListShards of stream '$stream' gave an incomplete listing ($why); keeping the shards " +
        "listed before and listing again later")
      case None => Right(accept(stream, createdMillis, listed))
    }

  /**
   * The shard id an incremental listing of the stream asks for the shards after (the highest known), or `None`
   * when a full listing is due: the stream is not known, its ids are not numbered, [[FullListingEvery]] listings
   * have passed, or the latest incremental one was refused.
   */
  def listAfter(stream: String): Option[String] = streams.get(stream)
    .filter(k => k.incrementalListings < FullListingEvery - 1)
    .map(_.shards.flatMap(s => shardNumber(s.shardId).map(_ -> s.shardId)))
    .filter(_.nonEmpty).map(_.maxBy(_._1)._2)

  /**
   * The stream's shards after an incremental listing (`listedAfter`: the shards after [[listAfter]]): they are
   * added, their parents closed, and the rest stand as known; a shard listed again replaces what was known of it.
   * Refused, as a full listing is, when the open shards do not then cover the hash key space (a child listed
   * without its sibling, a stream created again with higher ids); the next listing is a full one.
   */
  def updateAfter(stream: String, listedAfter: Seq[ShardInfo]): Either[String, ShardGraph] = {
    val known = streams.getOrElse(stream, throw new IllegalStateException(s"stream '$stream' was never listed in full"))
    if (listedAfter.isEmpty) {
      // No shard after those known, so none changed (a parent is closed only by children, which come after it): the
      // shards stand, as checked when they were listed, and so does their graph.
      streams(stream) = known.copy(incrementalListings = known.incrementalListings + 1)
      return Right(known.graph)
    }
    val listedById = listedAfter.iterator.map(s => s.shardId -> s).toMap
    val closedByChildren = listedAfter.iterator.flatMap(_.parentShardIds).toSet
    val updated = known.shards.map { s =>
      val latest = listedById.getOrElse(s.shardId, s)
      if (closedByChildren(s.shardId) && !latest.closed) latest.copy(closed = true) else latest
    }
    val knownIds = known.shards.iterator.map(_.shardId).toSet
    val merged = updated ++ listedAfter.filterNot(s => knownIds(s.shardId))
    gap(merged) match {
      case Some(why) =>
        streams(stream) = known.copy(incrementalListings = FullListingEvery)
        Left(s"ListShards of stream '$stream' (the shards after those known) gave shards that do not fit those known " +
          s"($why); keeping the shards listed before and listing them all next")
      case None =>
        val graph = ShardGraph(merged)
        streams(stream) = known.copy(shards = merged, incrementalListings = known.incrementalListings + 1, graph = graph)
        Right(graph)
    }
  }

  private def accept(stream: String, createdMillis: Long, listed: Seq[ShardInfo]): ShardGraph = {
    val previous = streams.get(stream).filter(_.createdMillis == createdMillis)
    val ids = listed.iterator.map(_.shardId).toSet
    val missing = previous.toSeq.flatMap(_.shards).filterNot(s => ids.contains(s.shardId))
    val absences = missing.map(s => s.shardId -> (previous.get.absences.getOrElse(s.shardId, 0) + 1)).toMap
    val kept = missing.filter(s => absences(s.shardId) < AbsencesToForget)
    val shards = (listed ++ kept).toVector
    val known = Known(createdMillis, shards, absences.filter(_._2 < AbsencesToForget), 0, ShardGraph(shards))
    streams(stream) = known
    known.graph
  }

  /**
   * Whether a listing shows that the stream is not the one listed before (deleted and created again under the same
   * name), or is not known yet: then its creation time must be asked for (DescribeStreamSummary). Shard ids only
   * grow within a stream and a shard keeps its starting sequence number, so a known id with another starting
   * sequence number, or a new shard numbered below a known one, is a new stream. Steady state asks nothing more
   * than ListShards.
   */
  def needsDescribe(stream: String, listed: Seq[ShardInfo]): Boolean = streams.get(stream) match {
    case None => true
    case Some(known) =>
      val starts = known.shards.iterator.map(s => s.shardId -> s.sequenceNumberRange.map(_.starting)).toMap
      val highest = known.shards.iterator.flatMap(s => shardNumber(s.shardId)).foldLeft(BigInt(-1))(_ max _)
      listed.exists { s =>
        starts.get(s.shardId) match {
          case Some(start) => start.isDefined && s.sequenceNumberRange.isDefined && start != s.sequenceNumberRange.map(_.starting)
          case None => shardNumber(s.shardId).exists(_ <= highest)
        }
      }
  }

  /** Forgets a stream (deleted): its next listing starts afresh. */
  def forget(stream: String): Unit = streams.remove(stream)
}

object ShardListings {
  /** @param graph the shards' graph, made once per change of the shards (at 10,000 shards it takes milliseconds) */
  private final case class Known(createdMillis: Long, shards: Vector[ShardInfo], absences: Map[String, Int],
      incrementalListings: Int, graph: ShardGraph)

  /** Listings in a row a shard must be missing from before it counts as gone. */
  val AbsencesToForget = 2

  /** One listing in this many lists every shard (with the default shardFetchInterval, every 10 seconds). */
  val FullListingEvery = 10

  private val HashKeyMax = BigInt(2).pow(128) - 1
  private val ShardNumber = "shardId-(\\d+)".r

  /** The number in a shard id ("shardId-000000000007" is 7); ids of another form have none. */
  private def shardNumber(shardId: String): Option[BigInt] = shardId match {
    case ShardNumber(n) => Some(BigInt(n))
    case _              => None
  }

  /**
   * What is wrong with a listing whose open shards should cover the hash key space exactly once, and whose closed
   * shards should each come with a child, if anything. Listings without hash key ranges (test fakes) are not checked.
   */
  def gap(listed: Seq[ShardInfo]): Option[String] = {
    if (listed.exists(_.hashKeyRange.isEmpty)) return None
    val open = listed.filterNot(_.closed)
    if (open.isEmpty) return Some("no open shard")
    val ranges = open.map(s => s.shardId -> s.hashKeyRange.get).sortBy(_._2.startingHashKey)
    // Walk the ranges in order: each must start where the one before ended.
    val (problem, next) = ranges.foldLeft((Option.empty[String], BigInt(0))) {
      case (found @ (Some(_), _), _) => found
      case ((None, expected), (id, r)) =>
        if (r.startingHashKey > expected) (Some(s"no open shard holds hash keys $expected to ${r.startingHashKey - 1}"), expected)
        else if (r.startingHashKey < expected) (Some(s"open shard $id overlaps another at hash key ${r.startingHashKey}"), expected)
        else (None, r.endingHashKey + 1)
    }
    if (problem.isDefined) return problem
    if (next <= HashKeyMax) return Some(s"no open shard holds hash keys $next to $HashKeyMax")
    val parents = listed.iterator.flatMap(_.parentShardIds).toSet
    listed.find(s => s.closed && !parents.contains(s.shardId)).map(s => s"closed shard ${s.shardId} is listed without its children")
  }
}
