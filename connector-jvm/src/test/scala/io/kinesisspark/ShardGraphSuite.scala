package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._
import io.kinesisspark.aws.ShardInfo

class ShardGraphSuite extends AnyFunSuite {
  // shard 0 split into 1 and 2; 1 and 2 merged into 3
  private val graph = ShardGraph(Seq(
    ShardInfo("s0", Nil, closed = true),
    ShardInfo("s1", Seq("s0"), closed = true),
    ShardInfo("s2", Seq("s0"), closed = true),
    ShardInfo("s3", Seq("s1", "s2"), closed = false)))

  private def readable(positions: (String, ShardPosition)*): Seq[String] = graph.readable(positions.toMap).map(_.shardId)

  test("children wait until their parent is read to its end, not merely closed") {
    assert(readable("s0" -> AfterRecord("5"), "s1" -> TrimHorizon, "s2" -> TrimHorizon, "s3" -> TrimHorizon) == Seq("s0"))
    assert(readable("s0" -> Finished, "s1" -> TrimHorizon, "s2" -> TrimHorizon, "s3" -> TrimHorizon) == Seq("s1", "s2"))
  }

  test("a merged child waits for both parents") {
    assert(readable("s0" -> Finished, "s1" -> Finished, "s2" -> AfterRecord("9"), "s3" -> TrimHorizon) == Seq("s2"))
    assert(readable("s0" -> Finished, "s1" -> Finished, "s2" -> Finished, "s3" -> TrimHorizon) == Seq("s3"))
  }

  test("parents that aged out of the stream do not block their children") {
    val trimmed = ShardGraph(Seq(ShardInfo("s3", Seq("s1", "s2"), closed = false)))
    assert(trimmed.readable(Map("s3" -> TrimHorizon)).map(_.shardId) == Seq("s3"))
  }

  test("finished shards are not read again") {
    assert(readable("s0" -> Finished, "s1" -> Finished, "s2" -> Finished, "s3" -> Finished).isEmpty)
  }
}
