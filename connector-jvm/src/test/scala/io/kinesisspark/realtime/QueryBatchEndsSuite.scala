package io.kinesisspark.realtime

import org.scalatest.funsuite.AnyFunSuite

class QueryBatchEndsSuite extends AnyFunSuite {

  private val oneStage: Int => Boolean = _ => true

  test("a batch may end early only when its stage's tasks are the tasks its streams planned") {
    val ends = new QueryBatchEnds
    val batch = QueryBatch("query", 3L)
    ends.planned(batch, streamId = 1, tasks = 2)
    assert(ends.of(batch, oneStage).mayEnd(TaskStage(5, tasks = 2)))
    assert(!ends.of(batch, oneStage).mayEnd(TaskStage(5, tasks = 3))) // another source's task shares the stage
    ends.planned(batch, streamId = 2, tasks = 1)
    assert(ends.of(batch, oneStage).mayEnd(TaskStage(5, 3)) && !ends.of(batch, oneStage).mayEnd(TaskStage(5, 2)))
    assert(!ends.of(batch, oneStage).mayEnd(TaskStage(-1, -1))) // asked from outside a Spark task
  }

  test("nor when the stage is not its job's only one (a shuffle: another stage may read another source)") {
    val ends = new QueryBatchEnds
    val batch = QueryBatch("query", 3L)
    ends.planned(batch, streamId = 1, tasks = 2)
    var asked = List.empty[Int]
    val end = ends.of(batch, stage => { asked ::= stage; stage != 5 })
    assert(!end.mayEnd(TaskStage(5, 2)) && end.mayEnd(TaskStage(6, 2)))
    assert(asked == List(6, 5))
  }

  test("a request ends the batch for each of its streams, and for no other batch") {
    val ends = new QueryBatchEnds
    val (batch, next, other) = (QueryBatch("query", 3L), QueryBatch("query", 4L), QueryBatch("other query", 3L))
    Seq(batch -> 1, batch -> 2, other -> 3).foreach { case (b, stream) => ends.planned(b, stream, tasks = 1) }
    ends.of(batch, oneStage).request()
    assert(ends.of(batch, oneStage).requested && !ends.of(other, oneStage).requested)
    ends.planned(next, streamId = 1, tasks = 1) // stream 1 moved on; stream 2 still runs batch 3
    assert(ends.of(batch, oneStage).requested && !ends.of(next, oneStage).requested)
    assert(ends.of(batch, oneStage).mayEnd(TaskStage(5, 1))) // only stream 2's task is left of batch 3
  }

  test("a batch planned again (Spark plans a real-time batch twice) keeps its request and takes the last count") {
    val ends = new QueryBatchEnds
    val batch = QueryBatch("query", 3L)
    ends.planned(batch, streamId = 1, tasks = 2)
    ends.of(batch, oneStage).request()
    ends.planned(batch, streamId = 1, tasks = 3)
    assert(ends.of(batch, oneStage).requested && ends.of(batch, oneStage).mayEnd(TaskStage(5, 3)))
  }

  test("a batch every stream is done with is forgotten; asking about it says no") {
    val ends = new QueryBatchEnds
    val batch = QueryBatch("query", 3L)
    ends.planned(batch, streamId = 1, tasks = 2)
    ends.of(batch, oneStage).request()
    ends.done(1)
    assert(!ends.of(batch, oneStage).requested && !ends.of(batch, oneStage).mayEnd(TaskStage(5, 2)))
    ends.of(batch, oneStage).request() // a late ask: nothing to end
    assert(!ends.of(batch, oneStage).requested)
  }

  test("the query's batch is read from Spark's local properties; the run tells a restart's replay apart") {
    val properties = Map(QueryBatch.QueryIdProperty -> "query-7", QueryBatch.RunIdProperty -> "run-2",
      QueryBatch.BatchIdProperty -> "12")
    assert(QueryBatch.current(properties.get) == Some(QueryBatch("query-7/run-2", 12L)))
    val restarted = QueryBatch.current((properties + (QueryBatch.RunIdProperty -> "run-3")).get)
    assert(restarted.exists(_ != QueryBatch("query-7/run-2", 12L)))
    assert(QueryBatch.current((properties - QueryBatch.RunIdProperty).get) == Some(QueryBatch("query-7", 12L)))
    assert(QueryBatch.current((properties - QueryBatch.BatchIdProperty).get).isEmpty)
    assert(QueryBatch.current((properties + (QueryBatch.BatchIdProperty -> "x")).get).isEmpty)
  }
}
