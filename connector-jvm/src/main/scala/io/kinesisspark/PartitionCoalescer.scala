package io.kinesisspark

import scala.collection.compat._
import scala.collection.mutable

import io.kinesisspark.blocks.{BlockRef, FetchedRange}

/** One shard's part of a batch: records in (`from`, `to`], with the buffered ranges that hold them, if any. */
final case class ShardSlice(stream: String, shardId: String, from: ShardPosition, to: ShardPosition, ranges: Seq[FetchedRange]) {
  lazy val bytes: Long = {
    var sum = 0L
    ranges.foreach(sum += _.bytes) // not map(...).sum, which boxes every range's bytes
    sum
  }
}

/**
 * Groups a batch's shard slices into Spark partitions. By default each shard is one partition. When the blocks
 * are small on average (below `coalesceThresholdBlockSize`), slices are packed together into partitions of about
 * `coalesceBinSize` bytes, so thousands of tiny blocks do not become thousands of tasks. A slice is never split:
 * one shard's records stay in one task, in order.
 *
 * Packing keeps reads local: slices are packed by the executor that holds most of their bytes, and a partition
 * never mixes slices of two executors, so it can run where all its blocks are ([[KinesisInputPartition]] prefers
 * that executor). Packed in plain shard order, a partition would hold blocks of every executor, and most of its
 * reads would fetch blocks over the network.
 *
 * {{{
 *   PartitionCoalescer.coalesce(slices, thresholdBlockSize = 10000000L, binSize = 128L << 20)
 *     .map(group => KinesisInputPartition(connection, group, limits, failOnDataLoss, schema))
 * }}}
 */
object PartitionCoalescer {
  def coalesce(slices: Seq[ShardSlice], thresholdBlockSize: Long, binSize: Long): Seq[Seq[ShardSlice]] = {
    // One pass over the ranges, in loops: this runs over every shard of every batch (at 10,000 shards the grouping,
    // and then a pass for the blocks and another for each slice's place, were a tenth of the query thread's samples
    // in JFRs of DriverScaleBenchmark). Ranges of one shard's round share a block: the average is over blocks, not
    // ranges, and as a block holds consecutive ranges of one shard, a new block starts where the block changes.
    var blocks = 0L
    var blockBytes = 0L
    val locations = new Array[String](slices.size)
    var i = 0
    slices.foreach { slice =>
      var previous: BlockRef = null
      var place: String = null
      var mixed = false
      slice.ranges.foreach(r => r.block.foreach { b =>
        if (previous == null || b.uniqueId != previous.uniqueId || b.streamId != previous.streamId) blocks += 1
        previous = b
        blockBytes += r.bytes
        if (place == null) place = b.location else if (place != b.location) mixed = true
      })
      // Totalled per executor only when they sit with more than one (rare: a shard's rounds run where it was read).
      locations(i) = if (place == null) "" else if (mixed) location(slice) else place
      i += 1
    }
    val averageBlock = if (blocks == 0) Long.MaxValue else blockBytes / blocks
    if (averageBlock >= thresholdBlockSize) slices.map(Seq(_))
    else {
      val bins = Seq.newBuilder[Seq[ShardSlice]]
      val byLocation = new java.util.TreeMap[String, mutable.ArrayBuffer[ShardSlice]]()
      i = 0
      slices.foreach { slice =>
        byLocation.computeIfAbsent(locations(i), _ => mutable.ArrayBuffer.empty[ShardSlice]).append(slice)
        i += 1
      }
      byLocation.values().forEach { here =>
        var current = Vector.empty[ShardSlice]
        var currentBytes = 0L
        here.foreach { slice =>
          if (current.nonEmpty && currentBytes + slice.bytes > binSize) {
            bins += current
            current = Vector.empty
            currentBytes = 0L
          }
          current :+= slice
          currentBytes += slice.bytes
        }
        if (current.nonEmpty) bins += current
      }
      bins.result()
    }
  }

  /** The executor that holds most of a slice's bytes ("" when it has no block: read from Kinesis anywhere). */
  def location(slice: ShardSlice): String = holderOfMost(slice.ranges).getOrElse("")

  /** The executor that holds most of these ranges' bytes, if any is in a block. */
  def holderOfMost(ranges: Seq[FetchedRange]): Option[String] = {
    // A shard's ranges nearly always sit with one executor (its rounds ran there): no need to total them per place.
    val places = ranges.iterator.flatMap(_.block).map(_.location)
    if (!places.hasNext) return None
    val first = places.next()
    if (places.forall(_ == first)) return Some(first)
    val bytesByLocation = ranges.flatMap(r => r.block.map(_.location -> r.bytes)).groupMapReduce(_._1)(_._2)(_ + _)
    if (bytesByLocation.isEmpty) None else Some(bytesByLocation.maxBy(_._2)._1)
  }
}
