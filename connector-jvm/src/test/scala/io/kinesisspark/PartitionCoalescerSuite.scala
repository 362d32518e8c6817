package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._
import io.kinesisspark.blocks.{BlockRef, FetchedRange}

class PartitionCoalescerSuite extends AnyFunSuite {
  private val ids = new java.util.concurrent.atomic.AtomicLong

  private def slice(shard: String, blockBytes: Long*): ShardSlice = sliceAt("executor_h_1", shard, blockBytes: _*)

  private def sliceAt(location: String, shard: String, blockBytes: Long*): ShardSlice =
    ShardSlice("s", shard, TrimHorizon, AfterRecord("1"),
      blockBytes.map { b =>
        FetchedRange("s", shard, TrimHorizon, AfterRecord("1"), Some(BlockRef(1, ids.incrementAndGet(), location, 0, 10, last = true)), 1, b)
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

  test("packed slices never share a partition with another executor's blocks") {
    val slices = Seq(sliceAt("executor_h_1", "a", 4), sliceAt("executor_h_2", "b", 4), sliceAt("executor_h_1", "c", 4),
      sliceAt("executor_h_2", "d", 4), sliceAt("executor_h_1", "e", 4), slice("f"))
    val bins = PartitionCoalescer.coalesce(slices, thresholdBlockSize = 10, binSize = 8)
    assert(bins.map(_.map(_.shardId)) == Seq(Seq("f"), Seq("a", "c"), Seq("e"), Seq("b", "d")))
    assert(bins.forall(_.map(PartitionCoalescer.location).distinct.size == 1))
  }

  test("a slice's executor is the one holding most of its bytes") {
    def range(location: Option[String], bytes: Long) = FetchedRange("s", "a", TrimHorizon, AfterRecord("3"),
      location.map(BlockRef(1, bytes, _, 0, bytes.toInt, last = true)), 1, bytes)
    assert(PartitionCoalescer.holderOfMost(Seq(range(Some("e1"), 4), range(None, 50), range(Some("e1"), 3)))
      .contains("e1"))
    assert(PartitionCoalescer.holderOfMost(Seq(range(Some("e1"), 4), range(Some("e2"), 5), range(Some("e1"), 3)))
      .contains("e1"))
    assert(PartitionCoalescer.holderOfMost(Seq(range(Some("e1"), 4), range(Some("e2"), 9))).contains("e2"))
    assert(PartitionCoalescer.holderOfMost(Seq(range(None, 4))).isEmpty)
  }

  test("the blocks' average counts a block that several ranges share once") {
    def shared(shard: String, id: Long) = ShardSlice("s", shard, TrimHorizon, AfterRecord("3"), (0 until 3).map { i =>
      FetchedRange("s", shard, TrimHorizon, AfterRecord("3"), Some(BlockRef(1, id, "executor_h_1", i * 4, 4, last = i == 2)), 1, 4)
    })
    val slices = Seq(shared("a", 100L), shared("b", 101L))
    assert(PartitionCoalescer.coalesce(slices, thresholdBlockSize = 12, binSize = 1000) == slices.map(Seq(_)),
      "blocks of 12 bytes are not small against a threshold of 12")
  }

  test("a slice with blocks on two executors is packed with the slices of the one holding most of its bytes") {
    def block(location: String, bytes: Long) = FetchedRange("s", "a", TrimHorizon, AfterRecord("1"),
      Some(BlockRef(1, ids.incrementAndGet(), location, 0, bytes.toInt, last = true)), 1, bytes)
    val mixed = ShardSlice("s", "a", TrimHorizon, AfterRecord("2"), Seq(block("executor_h_1", 4), block("executor_h_2", 9)))
    val slices = Seq(mixed, sliceAt("executor_h_2", "b", 4), sliceAt("executor_h_1", "c", 4))
    val bins = PartitionCoalescer.coalesce(slices, thresholdBlockSize = 10, binSize = 1000)
    assert(bins.map(_.map(_.shardId)) == Seq(Seq("c"), Seq("a", "b")))
  }
}
