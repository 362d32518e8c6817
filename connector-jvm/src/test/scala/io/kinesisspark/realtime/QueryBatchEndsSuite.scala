package io.kinesisspark.realtime

import org.scalatest.funsuite.AnyFunSuite

class QueryBatchEndsSuite extends AnyFunSuite {

  test("a batch may end early only when its stage's tasks are the tasks its streams planned") {
    val ends = new QueryBatchEnds
    val batch = QueryBatch("query", 3L)
    ends.planned(batch, streamId = 1, tasks = 2)
    assert(ends.of(batch).mayEnd(stageTasks = 2))
    assert(!ends.of(batch).mayEnd(stageTasks = 3)) // another source's task shares the stage
    ends.planned(batch, streamId = 2, tasks = 1)
    assert(ends.of(batch).mayEnd(stageTasks = 3) && !ends.of(batch).mayEnd(stageTasks = 2))
    assert(!ends.of(batch).mayEnd(stageTasks = -1)) // asked from outside a Spark task
  }

  test("a request ends the batch for each of its streams, and for no other batch") {
    val ends = new QueryBatchEnds
    val (batch, next, other) = (QueryBatch("query", 3L), QueryBatch("query", 4L), QueryBatch("other query", 3L))
    Seq(batch -> 1, batch -> 2, other -> 3).foreach { case (b, stream) => ends.planned(b, stream, tasks = 1) }
    ends.of(batch).request()
    assert(ends.of(batch).requested && !ends.of(other).requested)
    ends.planned(next, streamId = 1, tasks = 1) // stream 1 moved on; stream 2 still runs batch 3
    assert(ends.of(batch).requested && !ends.of(next).requested)
    assert(ends.of(batch).mayEnd(stageTasks = 1)) // only stream 2's task is left of batch 3
  }

  test("a batch every stream is done with is forgotten; asking about it says no") {
    val ends = new QueryBatchEnds
    val batch = QueryBatch("query", 3L)
    ends.planned(batch, streamId = 1, tasks = 2)
    ends.of(batch).request()
    ends.done(1)
    assert(!ends.of(batch).requested && !ends.of(batch).mayEnd(stageTasks = 2))
    ends.of(batch).request() // a late ask: nothing to end
    assert(!ends.of(batch).requested)
  }

  test("the query's batch is read from Spark's local properties") {
    val properties = Map(QueryBatch.QueryIdProperty -> "query-7", QueryBatch.BatchIdProperty -> "12")
    assert(QueryBatch.current(properties.get) == Some(QueryBatch("query-7", 12L)))
    assert(QueryBatch.current((properties - QueryBatch.BatchIdProperty).get).isEmpty)
    assert(QueryBatch.current((properties + (QueryBatch.BatchIdProperty -> "x")).get).isEmpty)
  }
}
