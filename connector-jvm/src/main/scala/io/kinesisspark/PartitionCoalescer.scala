package io.kinesisspark

import io.kinesisspark.fetch.FetchedRange

/** One shard's part of a batch: records in (`from`, `to`], with the buffered ranges that hold them, if any. */
final case class ShardSlice(stream: String, shardId: String, from: ShardPosition, to: ShardPosition, ranges: Seq[FetchedRange]) {
  lazy val bytes: Long = ranges.iterator.map(_.bytes).sum
}

/**
 * Groups a batch's shard slices into Spark partitions. By default each shard is one partition. When the blocks
 * are small on average (below `coalesceThresholdBlockSize`), slices are packed together, in order, into
 * partitions of about `coalesceBinSize` bytes, so thousands of tiny blocks do not become thousands of tasks.
 * A slice is never split: one shard's records stay in one task, in order.
 */
object PartitionCoalescer {
  def coalesce(slices: Seq[ShardSlice], thresholdBlockSize: Long, binSize: Long): Seq[Seq[ShardSlice]] = {
    val blocks = slices.flatMap(_.ranges).filter(_.block.isDefined)
    val averageBlock = if (blocks.isEmpty) Long.MaxValue else blocks.map(_.bytes).sum / blocks.size
    if (averageBlock >= thresholdBlockSize) slices.map(Seq(_))
    else {
      val bins = Seq.newBuilder[Seq[ShardSlice]]
      var current = Vector.empty[ShardSlice]
      var currentBytes = 0L
      slices.foreach { slice =>
        if (current.nonEmpty && currentBytes + slice.bytes > binSize) {
          bins += current
          current = Vector.empty
          currentBytes = 0L
        }
        current :+= slice
        currentBytes += slice.bytes
      }
      if (current.nonEmpty) bins += current
      bins.result()
    }
  }
}
