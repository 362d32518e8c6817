package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._
import io.kinesisspark.blocks.{BlockRef, FetchedRange}

class BufferIndexSuite extends AnyFunSuite {
  private def range(from: ShardPosition, to: ShardPosition, id: Long, offset: Int = 0, last: Boolean = true): FetchedRange =
    FetchedRange("s", "shard-0", from, to, Some(BlockRef(1, id, "executor_host_0", offset, 50, last)), records = 10, bytes = 100)

  private val r1 = range(TrimHorizon, AfterRecord("10"), 1)
  private val r2 = range(AfterRecord("10"), AfterRecord("20"), 2)
  private val r3 = range(AfterRecord("20"), Finished, 3)

  private def index(ranges: FetchedRange*): BufferIndex = {
    val b = new BufferIndex
    ranges.foreach(b.append)
    b
  }

  test("the end of the buffer is the end of the last range") {
    assert(index().end("s", "shard-0").isEmpty)
    assert(index(r1, r2).end("s", "shard-0").contains(AfterRecord("20")))
    assert(index(r1, r2, r3).end("s", "shard-0").contains(Finished))
  }

  test("every shard's end at once, after ranges appended at once") {
    val other = FetchedRange("s", "shard-1", TrimHorizon, AfterRecord("7"), None, records = 1, bytes = 10)
    val b = new BufferIndex
    b.appendAll(Seq(r1, other, r2))
    assert(b.ends == Map(("s", "shard-0") -> AfterRecord("20"), ("s", "shard-1") -> AfterRecord("7")))
    assert(b.ends.forall { case ((stream, shard), end) => b.end(stream, shard).contains(end) })
    b.dropThrough(KinesisSourceOffset(Map("s" -> Map("shard-0" -> AfterRecord("20")))))
    assert(b.ends.keySet == Set(("s", "shard-1")))
    intercept[IllegalArgumentException](b.appendAll(Seq(r3.copy(shardId = "shard-1"))))
  }

  test("ranges must continue the chain") {
    intercept[IllegalArgumentException](index(r1, r3))
  }

  test("covering returns exactly the ranges that hold (from, to]") {
    val b = index(r1, r2, r3)
    assert(b.covering("s", "shard-0", TrimHorizon, AfterRecord("20")).contains(Seq(r1, r2)))
    assert(b.covering("s", "shard-0", AfterRecord("10"), Finished).contains(Seq(r2, r3)))
    assert(b.covering("s", "shard-0", AfterRecord("15"), AfterRecord("18")).contains(Seq(r2)))
  }

  test("covering is None when the buffer does not hold the whole span") {
    val b = index(r2)
    assert(b.covering("s", "shard-0", TrimHorizon, AfterRecord("20")).isEmpty) // starts before the buffer
    assert(b.covering("s", "shard-0", AfterRecord("10"), AfterRecord("30")).isEmpty) // ends after it
    assert(b.covering("s", "other", TrimHorizon, AfterRecord("1")).isEmpty)
  }

  test("commit drops ranges at or before the committed position and returns their blocks") {
    val b = index(r1, r2, r3)
    val dropped = b.dropThrough(KinesisSourceOffset(Map("s" -> Map("shard-0" -> AfterRecord("20")))))
    assert(dropped.map(_.uniqueId) == Seq(1L, 2L))
    assert(b.bufferedRecords == 10)
    assert(b.clear().map(_.uniqueId) == Seq(3L))
    assert(b.bufferedRecords == 0)
  }

  test("a block that several ranges share is returned once the range of its last segment is dropped") {
    val (a, b, c) = (range(TrimHorizon, AfterRecord("10"), 7, 0, last = false),
      range(AfterRecord("10"), AfterRecord("20"), 7, 50, last = false), range(AfterRecord("20"), AfterRecord("30"), 7, 100))
    val buffer = index(a, b, c)
    assert(buffer.dropThrough(KinesisSourceOffset(Map("s" -> Map("shard-0" -> AfterRecord("20"))))).isEmpty,
      "the third range still reads the block")
    assert(buffer.bufferedRecords == 30 && buffer.bufferedBytes == 300, "the executor still holds the whole block")
    assert(buffer.dropThrough(KinesisSourceOffset(Map("s" -> Map("shard-0" -> AfterRecord("30"))))).map(_.uniqueId) == Seq(7L))
    assert(buffer.bufferedRecords == 0 && buffer.bufferedBytes == 0)
    assert(index(a, b, c).clear().map(_.uniqueId) == Seq(7L) && index(a, b, c).dropStream("s").map(_.uniqueId) == Seq(7L))
  }

  test("ranges that read nothing are not kept") {
    val b = index(FetchedRange("s", "shard-0", AfterRecord("5"), AfterRecord("5"), None, 0, 0L))
    assert(b.end("s", "shard-0").isEmpty)
  }

  test("the buffered totals follow every append and drop, over shards and streams") {
    def on(stream: String, shard: String, from: ShardPosition, to: ShardPosition, records: Int, bytes: Long) =
      FetchedRange(stream, shard, from, to, None, records, bytes)
    val b = new BufferIndex
    b.append(on("s", "a", TrimHorizon, AfterRecord("1"), 3, 30))
    b.append(on("s", "a", AfterRecord("1"), AfterRecord("2"), 4, 40))
    b.append(on("s", "b", TrimHorizon, AfterRecord("9"), 5, 50))
    b.append(on("t", "a", TrimHorizon, AfterRecord("7"), 6, 60))
    assert(b.bufferedRecords == 18 && b.bufferedBytes == 180)
    b.dropThrough(KinesisSourceOffset(Map("s" -> Map("a" -> AfterRecord("1"), "b" -> TrimHorizon))))
    assert(b.bufferedRecords == 15 && b.bufferedBytes == 150)
    b.dropStream("s")
    assert(b.bufferedRecords == 6 && b.bufferedBytes == 60)
    b.clear()
    assert(b.bufferedRecords == 0 && b.bufferedBytes == 0)
    b.append(on("t", "a", AfterRecord("7"), AfterRecord("8"), 1, 10))
    assert(b.bufferedRecords == 1 && b.bufferedBytes == 10)
  }

  test("a snapshot answers as the index did when it was taken, whatever comes after") {
    val b = index(r1, r2)
    val held = b.snapshot
    b.append(r3)
    b.dropThrough(KinesisSourceOffset(Map("s" -> Map("shard-0" -> AfterRecord("10")))))
    assert(held.rangesAfter("s", "shard-0", TrimHorizon) == Seq(r1, r2))
    assert(held.rangesAfter("s", "shard-0", AfterRecord("10")) == Seq(r2))
    assert(held.rangesAfter("s", "shard-0", AfterRecord("20")).isEmpty)
    assert(held.rangesAfter("s", "shard-1", TrimHorizon).isEmpty)
    assert(held.bufferedRecords == 20 && held.bufferedBytes == 200)
    assert(b.rangesAfter("s", "shard-0", AfterRecord("10")) == Seq(r2, r3))
  }
}
