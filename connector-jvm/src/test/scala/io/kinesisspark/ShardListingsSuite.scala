package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition.{AfterRecord, Finished, TrimHorizon}
import io.kinesisspark.aws.{HashKeyRange, SequenceNumberRange, ShardInfo}

class ShardListingsSuite extends AnyFunSuite {
  private val Max = BigInt(2).pow(128) - 1
  private val Half = Max / 2

  private def shard(id: String, from: BigInt, to: BigInt, closed: Boolean = false, parents: Seq[String] = Nil) =
    ShardInfo(id, parents, closed, Some(HashKeyRange(from, to)))

  // shard-0 split into shard-1 and shard-2.
  private val parent = shard("shard-0", 0, Max, closed = true)
  private val left = shard("shard-1", 0, Half, parents = Seq("shard-0"))
  private val right = shard("shard-2", Half + 1, Max, parents = Seq("shard-0"))

  test("a listing whose open shards leave part of the hash key space uncovered, or overlap, is refused") {
    val listings = new ShardListings
    assert(listings.update("s", 1L, Seq(parent, left, right)).isRight)
    val missingOpen = listings.update("s", 1L, Seq(parent, left))
    assert(missingOpen.left.exists(w => w.contains("'s'") && w.contains(s"${Half + 1} to $Max")), missingOpen)
    val overlapping = listings.update("s", 1L, Seq(left, right, shard("shard-3", 5, 10)))
    assert(overlapping.left.exists(_.contains("overlaps")), overlapping)
    assert(listings.update("s", 1L, Seq(parent)).left.exists(_.contains("no open shard")))
  }

  test("a shard missing from one listing is kept; missing from two in a row, it is gone") {
    val listings = new ShardListings
    listings.update("s", 1L, Seq(parent, left, right))
    val once = listings.update("s", 1L, Seq(left, right)).toOption.get
    assert(once.shards.map(_.shardId).toSet == Set("shard-0", "shard-1", "shard-2"))
    assert(once.parentsOf("shard-1") == Seq("shard-0"), "the parent still orders its children")
    val back = listings.update("s", 1L, Seq(parent, left, right)).toOption.get
    assert(back.shards.size == 3)
    listings.update("s", 1L, Seq(left, right))
    val twice = listings.update("s", 1L, Seq(left, right)).toOption.get
    assert(twice.shards.map(_.shardId).toSet == Set("shard-1", "shard-2"))
  }

  test("a listing with a closed shard but none of its children is refused (a finished shard out of the offset is known by them)") {
    val listings = new ShardListings
    assert(listings.update("s", 1L, Seq(parent, left, right)).isRight)
    val lostChildren = shard("shard-3", 0, Max)
    val refused = listings.update("s", 1L, Seq(parent, lostChildren))
    assert(refused.left.exists(_.contains("closed shard shard-0 is listed without its children")), refused)
  }

  test("a stream created again, or forgotten, starts afresh") {
    val listings = new ShardListings
    listings.update("s", 1L, Seq(parent, left, right))
    assert(listings.update("s", 2L, Seq(shard("shard-0", 0, Max))).toOption.get.shards.size == 1)
    listings.update("s", 2L, Seq(shard("shard-0", 0, Max), shard("shard-9", 0, 0, closed = true)))
    listings.forget("s")
    assert(listings.update("s", 2L, Seq(shard("shard-0", 0, Max))).toOption.get.shards.size == 1)
  }

  test("between full listings only the shards after the highest id are listed; their parents close") {
    val listings = new ShardListings
    val s0 = shard("shardId-000000000000", 0, Half)
    val s1 = shard("shardId-000000000001", Half + 1, Max)
    assert(listings.listAfter("s").isEmpty, "a stream not listed yet is listed in full")
    val full = listings.update("s", 1L, Seq(s0, s1)).toOption.get
    assert(listings.listAfter("s").contains("shardId-000000000001"))
    val unchanged = listings.updateAfter("s", Nil).toOption.get
    assert(unchanged.shards == Seq(s0, s1), "nothing new: the shards known stand")
    assert(unchanged eq full, "nothing new: the graph made at the full listing stands (the prefetcher keeps its starts)")
    // shardId-000000000001 is split into 2 and 3.
    val s2 = shard("shardId-000000000002", Half + 1, Half + 100, parents = Seq(s1.shardId))
    val s3 = shard("shardId-000000000003", Half + 101, Max, parents = Seq(s1.shardId))
    val graph = listings.updateAfter("s", Seq(s2, s3)).toOption.get
    assert(listings.updateAfter("s", Nil).toOption.get eq graph)
    assert(graph.shards.map(s => s.shardId -> s.closed) == Seq(s0.shardId -> false, s1.shardId -> true,
      s2.shardId -> false, s3.shardId -> false))
    assert(graph.parentsOf(s3.shardId) == Seq(s1.shardId))
    assert(listings.listAfter("s").contains("shardId-000000000003"))
  }

  test("an incremental listing that does not fit is refused, and a full listing follows; so does every tenth") {
    val listings = new ShardListings
    val s0 = shard("shardId-000000000000", 0, Max)
    listings.update("s", 1L, Seq(s0))
    val lonelyChild = shard("shardId-000000000001", 0, Half, parents = Seq(s0.shardId)) // its sibling not listed yet
    val refused = listings.updateAfter("s", Seq(lonelyChild))
    assert(refused.left.exists(w => w.contains("'s'") && w.contains(s"${Half + 1} to $Max")), refused)
    assert(listings.listAfter("s").isEmpty, "the next listing is a full one")
    listings.update("s", 1L, Seq(s0))
    (1 until ShardListings.FullListingEvery).foreach { i =>
      assert(listings.listAfter("s").isDefined, s"listing $i after a full one")
      listings.updateAfter("s", Nil)
    }
    assert(listings.listAfter("s").isEmpty, s"every ${ShardListings.FullListingEvery}th listing is full")
    assert(new ShardListings().listAfter("s").isEmpty)
    val unnumbered = new ShardListings
    unnumbered.update("s", 1L, Seq(shard("shard-0", 0, Max)))
    assert(unnumbered.listAfter("s").isEmpty, "ids without a number cannot be listed after")
  }

  test("a shard whose child was read has ended, though its own position is not known") {
    val graph = ShardGraph(Seq(parent, left, right, shard("shard-3", 0, Half, parents = Seq("shard-1"))))
    assert(!graph.endedByDescendants("shard-0", Map("shard-1" -> TrimHorizon, "shard-2" -> TrimHorizon)))
    assert(graph.endedByDescendants("shard-0", Map("shard-1" -> TrimHorizon, "shard-2" -> AfterRecord("5"))))
    assert(graph.endedByDescendants("shard-0", Map("shard-3" -> Finished)), "a grandchild read counts too")
    assert(!graph.endedByDescendants("shard-3", Map("shard-0" -> Finished)))
  }

  test("a stream is described when first listed or when its listing shows it was created again, not in steady state") {
    def at(s: ShardInfo, start: Int) = s.copy(sequenceNumberRange = Some(SequenceNumberRange(BigInt(start), None)))
    val listings = new ShardListings
    val first = Seq(at(parent, 100), at(left, 200), at(right, 300))
    assert(listings.needsDescribe("s", first))
    listings.update("s", 1L, first)
    assert(!listings.needsDescribe("s", first))
    val grandchild = at(shard("shardId-000000000003", 0, Half, parents = Seq("shard-1")), 400)
    assert(!listings.needsDescribe("s", first :+ grandchild), "a new shard of the same stream")
    assert(listings.needsDescribe("s", Seq(at(parent, 999))), "same id, another starting sequence number")
    assert(listings.update("s", 1L, Seq(at(parent, 100), at(left.copy(closed = true), 200), at(right, 300), grandchild)).isRight)
    val renumbered = at(shard("shardId-000000000000", 0, Max), 50)
    assert(listings.needsDescribe("s", Seq(renumbered)), "a new shard numbered below a known one")
  }
}
