package io.kinesisspark.realtime

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition.{AfterRecord, Finished}
import io.kinesisspark.aws.ShardInfo

class ChildShardsSuite extends AnyFunSuite {
  private def shard(id: Int, parents: Int*) =
    ShardInfo(f"shardId-$id%012d", parents.map(p => f"shardId-$p%012d"), closed = false)
  private def id(n: Int) = f"shardId-$n%012d"

  // 0 split into 2 and 3; 2 and 3 merged into 4; 1 and 5 (another task's) merged into 6.
  private val listing = Seq(shard(0), shard(1), shard(5), shard(2, 0), shard(3, 0), shard(4, 2, 3), shard(6, 1, 5))
  private val children = new ChildShards(_ => listing)

  test("a split's children may be read as soon as their parent is finished") {
    assert(children.startable("s", id(0), Map(id(0) -> Finished, id(1) -> AfterRecord("7"))).map(_.shardId) ==
      Seq(id(2), id(3)))
  }

  test("a merge's child waits until every parent the task reads is finished") {
    assert(children.startable("s", id(2), Map(id(2) -> Finished, id(3) -> AfterRecord("9"))).isEmpty)
    assert(children.startable("s", id(3), Map(id(2) -> Finished, id(3) -> Finished)).map(_.shardId) == Seq(id(4)))
  }

  test("a merge's child with a parent in another task is left to the next batch; a child already read is not again") {
    assert(children.startable("s", id(1), Map(id(1) -> Finished)).isEmpty)
    assert(children.startable("s", id(0), Map(id(0) -> Finished, id(2) -> AfterRecord("1"))).map(_.shardId) ==
      Seq(id(3)))
  }

  test("a parent gone from the listing (past retention) holds nothing back") {
    val aged = new ChildShards(_ => listing.filterNot(_.shardId == id(5)))
    assert(aged.startable("s", id(1), Map(id(1) -> Finished)).map(_.shardId) == Seq(id(6)))
  }
}
