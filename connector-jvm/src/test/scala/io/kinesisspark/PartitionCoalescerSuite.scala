package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._
import io.kinesisspark.fetch.{BlockRef, FetchedRange}

class PartitionCoalescerSuite extends AnyFunSuite {
  private def slice(shard: String, blockBytes: Long*): ShardSlice =
    ShardSlice("s", shard, TrimHorizon, AfterRecord("1"),
      blockBytes.zipWithIndex.map { case (b, i) =>
        FetchedRange("s", shard, TrimHorizon, AfterRecord("1"), Some(BlockRef(1, i.toLong, "executor_h_1", 0, 10, last = true)), 1, b)
      })

  test("large blocks: one partition per shard") {
    val slices = Seq(slice("a", 20, 20), slice("b", 30))
    assert(PartitionCoalescer.coalesce(slices, thresholdBlockSize = 10, binSize = 1000) == slices.map(Seq(_)))
  }

  test("small blocks: shards packed in order into bins of about binSize, never split") {
    val slices = Seq(slice("a", 4, 4), slice("b", 5), slice("c", 6), slice("d", 9))
    val bins = PartitionCoalescer.coalesce(slices, thresholdBlockSize = 10, binSize = 14)
    assert(bins.map(_.map(_.shardId)) == Seq(Seq("a", "b"), Seq("c"), Seq("d")))
  }

  test("slices without blocks (read from Kinesis) stay one per shard") {
    val slices = Seq(slice("a"), slice("b"))
    assert(PartitionCoalescer.coalesce(slices, 10, 1000) == slices.map(Seq(_)))
  }
}
