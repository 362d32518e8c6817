package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition.{AfterRecord, Finished, TrimHorizon}

class ShardFamiliesSuite extends AnyFunSuite {

  private def slice(shard: String, from: ShardPosition, to: ShardPosition, stream: String = "s") =
    ShardSlice(stream, shard, from, to, Nil)

  private val parents = Map("c1" -> Seq("p"), "c2" -> Seq("p"), "m" -> Seq("c2", "q"), "g" -> Seq("c1"))
  private var asked = 0
  private def parentsOf(stream: String, shard: String): Seq[String] = { asked += 1; parents.getOrElse(shard, Nil) }

  test("a batch in which no shard ends is left as it is, without asking for parents") {
    asked = 0
    val slices = Seq(slice("p", TrimHorizon, AfterRecord("1")), slice("c1", TrimHorizon, AfterRecord("2")))
    assert(ShardFamilies.split(slices, parentsOf) == ((slices, Nil)))
    assert(asked == 0)
  }

  test("a parent and its children, and a merge with its other parent, go to one group, parents first") {
    val slices = Seq(
      slice("m", TrimHorizon, AfterRecord("9")),
      slice("other", AfterRecord("1"), Finished),
      slice("c2", TrimHorizon, Finished),
      slice("q", AfterRecord("3"), Finished),
      slice("c1", TrimHorizon, AfterRecord("5")),
      slice("p", AfterRecord("1"), Finished))
    val (alone, families) = ShardFamilies.split(slices, parentsOf)
    assert(alone.map(_.shardId) == Seq("other"))
    val Seq(family) = families
    assert(family.map(_.shardId) == Seq("p", "q", "c1", "c2", "m"))
  }

  test("families of two streams stay apart; a parent whose child has nothing in the batch is alone") {
    val slices = Seq(slice("p", AfterRecord("1"), Finished, "a"), slice("c1", TrimHorizon, AfterRecord("2"), "b"),
      slice("q", AfterRecord("1"), Finished, "b"), slice("m", TrimHorizon, AfterRecord("4"), "b"))
    val (alone, families) = ShardFamilies.split(slices, parentsOf)
    assert(alone.map(s => s.stream -> s.shardId) == Seq("a" -> "p", "b" -> "c1"))
    assert(families.map(_.map(_.shardId)) == Seq(Seq("q", "m")))
  }

  test("parents are asked for only in streams where a shard ends") {
    asked = 0
    val slices = Seq(slice("p", AfterRecord("1"), Finished, "a"), slice("c1", TrimHorizon, AfterRecord("2"), "a"),
      slice("x", AfterRecord("1"), AfterRecord("5"), "b"), slice("y", AfterRecord("1"), AfterRecord("5"), "b"))
    val (alone, families) = ShardFamilies.split(slices, parentsOf)
    assert(families.map(_.map(_.shardId)) == Seq(Seq("p", "c1")) && alone.map(_.shardId) == Seq("x", "y"))
    assert(asked == 2) // stream a's two slices, not stream b's
  }
}
