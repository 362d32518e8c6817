package io.kinesisspark.realtime

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{KinesisSourceOffset, ShardGraph, ShardPosition}
import io.kinesisspark.ShardPosition.{AfterRecord, Finished, TrimHorizon}
import io.kinesisspark.aws.ShardInfo
import io.kinesisspark.executor.ShardFetchOrder

class BatchChildrenSuite extends AnyFunSuite {

  private def id(n: Int) = f"shardId-$n%012d"
  private def shard(n: Int, parents: Int*) = ShardInfo(id(n), parents.map(id), closed = false)

  /**
   * A batch over `graph`, planned with `planned` read and `base` as its start; `later` is what a new listing adds.
   * The stream planned 2 tasks of query batch `key` in `ends`, and its tasks' stage has `stageTasks`; the stage is its
   * job's only one unless `shuffle`.
   */
  private final class Batch(shards: Seq[ShardInfo], base: Map[String, ShardPosition], planned: Set[Int],
      later: Seq[ShardInfo] = Nil, stageTasks: Int = 2, ends: QueryBatchEnds = new QueryBatchEnds,
      key: QueryBatch = QueryBatch("query", 4L), streamId: Int = 1, shuffle: Boolean = false) {
    ends.planned(key, streamId, tasks = 2)
    var graph = ShardGraph(shards)
    var starts: Map[(String, String), ShardPosition] = shards.map(s => ("s", s.shardId) -> TrimHorizon).toMap
    var listings = 0
    val children = new BatchChildren(KinesisSourceOffset(Map("s" -> base), Map("s" -> 1L)),
      planned.map(n => ("s", id(n))), () => Map("s" -> graph), () => starts,
      () => {
        listings += 1
        graph = ShardGraph(shards ++ later)
        starts = starts ++ later.map(s => ("s", s.shardId) -> TrimHorizon)
      },
      (stream, s, from) => ShardFetchOrder(stream, s.shardId, from, 0L), ends.of(key, _ => !shuffle))
    def finished(n: Int, task: Int = 0): Seq[(String, ShardPosition)] =
      children.finished("s", id(n), task, TaskStage(9, stageTasks)).map(o => o.shardId -> o.from)
  }

  test("a split's children go to the task that finished their parent, once") {
    val batch = new Batch(Seq(shard(0), shard(1), shard(2, 0), shard(3, 0)),
      Map(id(0) -> AfterRecord("5"), id(1) -> TrimHorizon, id(2) -> TrimHorizon, id(3) -> TrimHorizon), Set(0, 1))
    assert(batch.finished(1).isEmpty && batch.listings == 1) // no child listed: listed again, none found
    assert(batch.finished(0) == Seq(id(2) -> TrimHorizon, id(3) -> TrimHorizon))
    assert(batch.finished(0).isEmpty) // a task retried: the children were handed out already
    assert(!batch.children.endRequested)
  }

  test("a merge's child waits for its last parent; read at once when one task read both") {
    val batch = new Batch(Seq(shard(0), shard(1), shard(2, 0, 1)),
      Map(id(0) -> AfterRecord("5"), id(1) -> AfterRecord("7"), id(2) -> TrimHorizon), Set(0, 1))
    assert(batch.finished(1, task = 3).isEmpty)
    assert(batch.finished(0, task = 3) == Seq(id(2) -> TrimHorizon))
    assert(batch.listings == 0 && !batch.children.endRequested) // the child was listed
  }

  test("a merge whose parents ended in different tasks is read by none: the batch is asked to end") {
    val batch = new Batch(Seq(shard(0), shard(1), shard(2, 0, 1)),
      Map(id(0) -> AfterRecord("5"), id(1) -> AfterRecord("7"), id(2) -> TrimHorizon), Set(0, 1))
    assert(batch.finished(1, task = 1).isEmpty && !batch.children.endRequested)
    assert(batch.finished(0, task = 0).isEmpty && batch.children.endRequested)
  }

  test("a retried task is another task: a merge whose first parent an earlier attempt finished ends the batch") {
    val batch = new Batch(Seq(shard(0), shard(1), shard(2, 0, 1)),
      Map(id(0) -> AfterRecord("5"), id(1) -> AfterRecord("7"), id(2) -> TrimHorizon), Set(0, 1))
    assert(batch.finished(0, task = 11).isEmpty) // attempt 11 finished shard 0, then failed
    assert(batch.finished(1, task = 12).isEmpty && batch.children.endRequested) // its retry, reading shard 0 again
  }

  test("with another source's tasks in the stage the batch does not end early: a merge across tasks waits") {
    val batch = new Batch(Seq(shard(0), shard(1), shard(2, 0, 1)),
      Map(id(0) -> AfterRecord("5"), id(1) -> AfterRecord("7"), id(2) -> TrimHorizon), Set(0, 1), stageTasks = 3)
    assert(batch.finished(1, task = 1).isEmpty)
    assert(batch.finished(0, task = 0).isEmpty && !batch.children.endRequested)
  }

  test("in a query with a shuffle the batch does not end early: another stage may read another source") {
    val batch = new Batch(Seq(shard(0), shard(1), shard(2, 0, 1)),
      Map(id(0) -> AfterRecord("5"), id(1) -> AfterRecord("7"), id(2) -> TrimHorizon), Set(0, 1), shuffle = true)
    assert(batch.finished(1, task = 1).isEmpty)
    assert(batch.finished(0, task = 0).isEmpty && !batch.children.endRequested)
  }

  test("in a union of Kinesis streams a merge across one stream's tasks ends the batch of every stream") {
    val ends = new QueryBatchEnds
    def merging(streamId: Int, key: QueryBatch) = new Batch(Seq(shard(0), shard(1), shard(2, 0, 1)),
      Map(id(0) -> AfterRecord("5"), id(1) -> AfterRecord("7"), id(2) -> TrimHorizon), Set(0, 1), stageTasks = 4,
      ends = ends, key = key, streamId = streamId)
    // Two streams of 2 tasks each in batch 4 of a query; a stream of another query whose stage has 2 more tasks.
    val (first, second) = (merging(1, QueryBatch("query", 4L)), merging(2, QueryBatch("query", 4L)))
    val other = merging(3, QueryBatch("other query", 4L))
    assert(other.finished(1, task = 1).isEmpty && other.finished(0, task = 0).isEmpty)
    assert(!other.children.endRequested && !first.children.endRequested)
    assert(first.finished(1, task = 1).isEmpty && first.finished(0, task = 0).isEmpty)
    assert(first.children.endRequested && second.children.endRequested && !other.children.endRequested)
  }

  test("a parent finished in an earlier batch counts; a child planned at the batch's start is not handed out again") {
    val earlier = new Batch(Seq(shard(0), shard(1), shard(2, 0, 1)),
      Map(id(0) -> Finished, id(1) -> AfterRecord("7"), id(2) -> TrimHorizon), Set(1))
    assert(earlier.finished(1, task = 1) == Seq(id(2) -> TrimHorizon)) // its other parent's records are committed
    val planned = new Batch(Seq(shard(0), shard(1, 0), shard(2, 0)),
      Map(id(0) -> Finished, id(1) -> AfterRecord("3"), id(2) -> TrimHorizon), Set(1, 2))
    assert(planned.finished(1).isEmpty) // shard 1 has no child; shard 2 was planned
  }

  test("a reshard newer than the batch's listing is listed again, and its children read from their start") {
    val batch = new Batch(Seq(shard(0)), Map(id(0) -> AfterRecord("5")), Set(0), later = Seq(shard(1, 0), shard(2, 0)))
    assert(batch.finished(0) == Seq(id(1) -> TrimHorizon, id(2) -> TrimHorizon))
    assert(batch.listings == 1)
  }

  test("a child that its position says was read to its end is not read again") {
    val batch = new Batch(Seq(shard(0), shard(1, 0)), Map(id(0) -> AfterRecord("5"), id(1) -> Finished), Set(0))
    assert(batch.finished(0).isEmpty)
  }
}
