package io.kinesisspark.realtime

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{KinesisSourceOffset, ShardPosition}
import io.kinesisspark.ShardPosition.{AfterRecord, Finished, TrimHorizon}
import io.kinesisspark.executor.ShardFetchOrder
import io.kinesisspark.reader.ShardCounters

class RealTimePlannerSuite extends AnyFunSuite {

  private def order(shard: Int, stream: String = "s") = ShardFetchOrder(stream, f"shardId-$shard%012d", TrimHorizon, 0L)
  private def progress(shard: Int, position: ShardPosition) =
    ShardProgress("s", f"shardId-$shard%012d", position, 1, 1, None, caughtUp = false, ShardCounters.Zero)

  test("deals shards to at most the tasks asked for, balanced, the same way whatever order they come in") {
    val orders = (0 until 5).map(order(_))
    val groups = RealTimePlanner.group(orders.reverse, tasks = 2, _ => None)
    assert(groups.map(_.orders.map(_.shardId.takeRight(1))) == Seq(Seq("0", "2", "4"), Seq("1", "3")))
    assert(RealTimePlanner.group(orders, tasks = 2, _ => None) == groups)
    assert(RealTimePlanner.group(orders.take(1), tasks = 8, _ => None).size == 1)
  }

  test("no shard to read: one task with none, which waits out the batch") {
    assert(RealTimePlanner.group(Nil, tasks = 4, _ => None) == Seq(RealTimePlanner.Group(Nil, None)))
  }

  test("a task goes where most of its shards were read last") {
    val where = Map(("s", "shardId-000000000000") -> "executor_a_1", ("s", "shardId-000000000002") -> "executor_b_2",
      ("s", "shardId-000000000004") -> "executor_b_2")
    val groups = RealTimePlanner.group((0 until 5).map(order(_)), tasks = 2, where.get)
    assert(groups.map(_.location) == Seq(Some("executor_b_2"), None))
  }

  test("the end is the start with each reported shard moved forward; never back, other shards untouched") {
    val base = KinesisSourceOffset(Map("s" -> Map(
      "shardId-000000000000" -> TrimHorizon,
      "shardId-000000000001" -> AfterRecord("20"),
      "shardId-000000000002" -> AfterRecord("30"))), Map("s" -> 5L))
    val end = RealTimePlanner.merge(base, Seq(progress(0, AfterRecord("11")), progress(1, Finished),
      progress(1, AfterRecord("25")), progress(2, AfterRecord("30"))))
    assert(end == KinesisSourceOffset(Map("s" -> Map(
      "shardId-000000000000" -> AfterRecord("11"),
      "shardId-000000000001" -> Finished,
      "shardId-000000000002" -> AfterRecord("30"))), Map("s" -> 5L)))
    assert(RealTimePlanner.merge(base, Seq(progress(2, AfterRecord("30")))) eq base)
  }
}
