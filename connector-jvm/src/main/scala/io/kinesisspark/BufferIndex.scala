package io.kinesisspark

import scala.collection.mutable

import io.kinesisspark.ShardPosition.reaches
import io.kinesisspark.blocks.{BlockRef, FetchedRange}

/**
 * The driver's index of what has been prefetched and not yet wholly read by a batch that has run: per shard, a contiguous chain of
 * [[FetchedRange]]s in order. The records themselves stay in executors' BlockManagers.
 * Driver-only; shared by the prefetch thread (which appends) and the query thread, hence synchronized.
 */
final class BufferIndex {
  private val chains = mutable.Map.empty[(String, String), Vector[FetchedRange]]
  // Totals kept as ranges come and go: asked for every prefetch round and progress event, they would otherwise be
  // summed over every range of every shard each time.
  private var records = 0L
  private var bytes = 0L
  // Per shard, the records and bytes of ranges already dropped whose block is still held (a later range shares it):
  // the executor keeps them until that block goes, so they stay in the totals (`bytes` bounds what prefetching adds).
  private val heldBack = mutable.Map.empty[(String, String), (Long, Long)]

  private def counted(ranges: Iterable[FetchedRange], sign: Int): Unit = ranges.foreach { r =>
    records += sign * r.records.toLong
    bytes += sign * r.bytes
  }

  /** Where the buffered data of a shard ends, if anything is buffered. */
  def end(stream: String, shardId: String): Option[ShardPosition] = synchronized {
    chains.get((stream, shardId)).flatMap(_.lastOption).map(_.to)
  }

  /**
   * Where the buffered data of every shard with something buffered ends, under one lock: a round asks for all of
   * them, and one lock per shard was taken 10,000 times a round against the query thread's plan.
   */
  def ends: Map[(String, String), ShardPosition] = synchronized {
    val all = Map.newBuilder[(String, String), ShardPosition]
    chains.foreach { case (key, chain) => if (chain.nonEmpty) all += key -> chain.last.to }
    all.result()
  }

  /**
   * Each shard of `starts` at the furthest position fetched: where its buffered data ends, or its start when nothing
   * is buffered for it. Where fetching continues.
   */
  def furthest(starts: Map[(String, String), ShardPosition]): Map[(String, String), ShardPosition] = {
    val all = ends
    starts.map { case (k, start) => k -> all.getOrElse(k, start) }
  }

  /** [[append]] of each range in turn, under one lock. */
  def appendAll(ranges: Iterable[FetchedRange]): Unit = synchronized(ranges.foreach(append))

  /** Adds a fetched range; it must continue the shard's chain (ranges that read nothing are not kept). */
  def append(range: FetchedRange): Unit = synchronized {
    val key = (range.stream, range.shardId)
    val chain = chains.getOrElse(key, Vector.empty)
    require(chain.isEmpty || chain.last.to == range.from,
      s"fetched range of ${range.shardId} starts at ${range.from} but the buffer ends at ${chain.last.to}")
    if (range.to != range.from) {
      chains(key) = chain :+ range
      counted(Seq(range), 1)
    }
  }

  /**
   * The ranges that together hold every record in (`from`, `to`] of a shard, or `None` when the buffer does not
   * cover that span exactly (e.g. after a restart), in which case the reader reads it from Kinesis.
   */
  def covering(stream: String, shardId: String, from: ShardPosition, to: ShardPosition): Option[Seq[FetchedRange]] =
    synchronized {
      val after = rangesAfter(stream, shardId, from)
      val end = after.indexWhere(r => reaches(r.to, to))
      if (end < 0) None else Some(after.take(end + 1))
    }

  /** The buffered ranges of a shard from `from` on, in order; empty when the buffer does not reach back to `from`. */
  def rangesAfter(stream: String, shardId: String, from: ShardPosition): Seq[FetchedRange] = synchronized {
    BufferIndex.rangesAfter(chains.getOrElse((stream, shardId), Vector.empty), from)
  }

  /**
   * Every shard's ranges and the totals as one immutable value, under one lock: the metrics look at thousands of
   * shards, and taking the lock once per shard would contend with each round's appends as often.
   */
  def snapshot: BufferIndex.Snapshot = synchronized(BufferIndex.Snapshot(chains.toMap, records, bytes))

  /**
   * Forgets ranges wholly at or before `offset` and returns the blocks they leave unused, for removal: a block holds
   * consecutive ranges of one shard, so it is unused once the range of its last segment is forgotten. The bytes of a
   * block still held stay in [[bufferedBytes]] until then.
   */
  def dropThrough(offset: KinesisSourceOffset): Seq[BlockRef] = synchronized {
    val dropped = Seq.newBuilder[BlockRef]
    chains.foreach { case (key @ (stream, shard), chain) =>
      offset.position(stream, shard).foreach { committed =>
        val (done, rest) = chain.span(r => reaches(committed, r.to))
        done.foreach { r =>
          r.block match {
            case Some(b) if !b.last =>
              val (heldRecords, heldBytes) = heldBack.getOrElse(key, (0L, 0L))
              heldBack(key) = (heldRecords + r.records, heldBytes + r.bytes)
            case block =>
              counted(Seq(r), -1)
              if (block.isDefined) release(key)
              block.foreach(dropped += _)
          }
        }
        if (rest.isEmpty) chains.remove(key) else chains(key) = rest
      }
    }
    dropped.result()
  }

  /** Forgets everything buffered of one stream (it was deleted and created again) and returns its blocks. */
  def dropStream(stream: String): Seq[BlockRef] = synchronized {
    val keys = chains.keys.filter(_._1 == stream).toSeq
    val blocks = keys.flatMap(chains(_)).flatMap(_.block).filter(_.last)
    keys.foreach(k => counted(chains(k), -1))
    keys.foreach(release)
    keys.foreach(chains.remove)
    blocks
  }

  /** Forgets everything and returns all blocks, for removal. */
  def clear(): Seq[BlockRef] = synchronized {
    val all = chains.valuesIterator.flatten.flatMap(_.block).filter(_.last).toSeq
    chains.clear()
    heldBack.clear()
    records = 0L
    bytes = 0L
    all
  }

  /** Takes a shard's held-back records and bytes out of the totals: their block is going. */
  private def release(key: (String, String)): Unit = heldBack.remove(key).foreach { case (heldRecords, heldBytes) =>
    records -= heldRecords
    bytes -= heldBytes
  }

  /** Records and bytes the executors hold for this query: buffered ranges, and read ones whose block is still held. */
  def bufferedRecords: Long = synchronized(records)
  def bufferedBytes: Long = synchronized(bytes)
}

object BufferIndex {
  /**
   * What a [[BufferIndex]] held at one moment: per shard its chain of ranges, and [[BufferIndex.bufferedRecords]] and
   * [[BufferIndex.bufferedBytes]] as they were then.
   *
   * {{{
   *   val held = buffer.snapshot
   *   held.rangesAfter("clicks", "shardId-000000000000", processed) // as buffer.rangesAfter answered then
   * }}}
   */
  final case class Snapshot(chains: Map[(String, String), Vector[FetchedRange]], bufferedRecords: Long,
      bufferedBytes: Long) {
    /** As [[BufferIndex.rangesAfter]]. */
    def rangesAfter(stream: String, shardId: String, from: ShardPosition): Seq[FetchedRange] =
      BufferIndex.rangesAfter(chains.getOrElse((stream, shardId), Vector.empty), from)
  }

  private def rangesAfter(chain: Vector[FetchedRange], from: ShardPosition): Seq[FetchedRange] = {
    val start = chain.indexWhere(r => reaches(r.to, from) && r.to != from)
    if (start < 0 || !startsAtOrBefore(chain(start).from, from)) Nil else chain.drop(start)
  }

  private def startsAtOrBefore(rangeFrom: ShardPosition, from: ShardPosition): Boolean =
    rangeFrom == from || reaches(from, rangeFrom)
}
