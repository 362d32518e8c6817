package io.kinesisspark

import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.BatchEndPlanner.Budget
import io.kinesisspark.ShardPosition._
import io.kinesisspark.blocks.FetchedRange

class BatchEndPlannerSuite extends AnyFunSuite {
  private def chain(shard: String, ends: Seq[Int], recordsEach: Int = 10, bytesEach: Long = 100): Seq[FetchedRange] =
  {
    val positions = TrimHorizon +: ends.map(e => AfterRecord(e.toString))
    positions.zip(positions.tail).map { case (from, to) => FetchedRange("s", shard, from, to, None, recordsEach, bytesEach) }
  }

  private val buffered = Map(
    "a" -> chain("a", Seq(10, 20, 30)),
    "b" -> chain("b", Seq(11, 21)))

  private def plan(start: KinesisSourceOffset, budget: Budget,
                   parents: Map[String, Seq[String]] = Map.empty,
                   ranges: Map[String, Seq[FetchedRange]] = buffered,
                   fresh: Set[String] = Set.empty): Map[String, ShardPosition] =
    BatchEndPlanner.plan(
      start,
      fresh.map("s" -> _),
      (_, shard) => parents.getOrElse(shard, Nil),
      (_, shard, from) => {
        val c = ranges.getOrElse(shard, Nil)
        val i = c.indexWhere(_.from == from)
        if (i < 0) Nil else c.drop(i)
      },
      budget).streams("s")

  private val fromStart = KinesisSourceOffset(Map("s" -> Map("a" -> TrimHorizon, "b" -> TrimHorizon)))

  test("without a limit everything buffered is exposed") {
    assert(plan(fromStart, Budget.Unbounded) == Map("a" -> AfterRecord("30"), "b" -> AfterRecord("21")))
  }

  test("a record limit is met by whole ranges, shards taking turns") {
    assert(plan(fromStart, Budget.of(ReadLimit.maxRows(30))) == Map("a" -> AfterRecord("20"), "b" -> AfterRecord("11")))
    assert(plan(fromStart, Budget.of(ReadLimit.maxRows(20))) == Map("a" -> AfterRecord("10"), "b" -> AfterRecord("11")))
  }

  test("a byte limit, and the tighter of two limits") {
    assert(plan(fromStart, Budget.of(ByteReadLimit(100))) == Map("a" -> AfterRecord("10"), "b" -> TrimHorizon))
    val both = ReadLimit.compositeLimit(Array(ReadLimit.maxRows(40), ByteReadLimit(200)))
    assert(plan(fromStart, Budget.of(both)) == Map("a" -> AfterRecord("10"), "b" -> AfterRecord("11")))
  }

  test("one range is taken even when it alone exceeds the limit, so the query never stalls") {
    assert(plan(fromStart, Budget.of(ReadLimit.maxRows(3))) == Map("a" -> AfterRecord("10"), "b" -> TrimHorizon))
  }

  test("planning continues from the batch start") {
    val start = KinesisSourceOffset(Map("s" -> Map("a" -> AfterRecord("20"), "b" -> AfterRecord("21"))))
    assert(plan(start, Budget.Unbounded) == Map("a" -> AfterRecord("30"), "b" -> AfterRecord("21")))
  }

  test("a child is exposed only once its parents are finished at the batch start") {
    val ranges = Map("p" -> Seq(FetchedRange("s", "p", TrimHorizon, Finished, None, 5, 50)), "c" -> chain("c", Seq(7)))
    val parents = Map("c" -> Seq("p"))
    val first = plan(KinesisSourceOffset(Map("s" -> Map("p" -> TrimHorizon, "c" -> TrimHorizon))), Budget.Unbounded, parents, ranges)
    assert(first == Map("p" -> Finished, "c" -> TrimHorizon))
    val second = plan(KinesisSourceOffset(Map("s" -> first)), Budget.Unbounded, parents, ranges)
    assert(second == Map("p" -> Finished, "c" -> AfterRecord("7")))
  }

  test("a shard entering the offset with this batch keeps its start position; the next batch reads it") {
    val first = plan(fromStart, Budget.Unbounded, fresh = Set("b"))
    assert(first == Map("a" -> AfterRecord("30"), "b" -> TrimHorizon))
    assert(plan(KinesisSourceOffset(Map("s" -> first)), Budget.Unbounded) == Map("a" -> AfterRecord("30"), "b" -> AfterRecord("21")))
  }

  test("the end offset keeps the streams' creation times") {
    val start = KinesisSourceOffset(Map("s" -> Map("a" -> TrimHorizon, "b" -> TrimHorizon)), Map("s" -> 42L))
    assert(BatchEndPlanner.plan(start, Set.empty, (_, _) => Nil, (_, _, _) => Nil, Budget.Unbounded).created == Map("s" -> 42L))
  }

  test("without a limit, the end is the one a limit nothing reaches gives: parents, fresh and finished shards alike") {
    // The unbounded plan takes a shortcut (no turns, no sorting); it must end every shard where taking turns would.
    val ranges = Map(
      "p" -> Seq(FetchedRange("s", "p", AfterRecord("3"), Finished, None, 5, 50)),
      "c" -> chain("c", Seq(7, 8)),
      "d" -> chain("d", Seq(4)),
      "e" -> chain("e", Seq(1, 2, 3)),
      "f" -> Seq(FetchedRange("s", "f", TrimHorizon, AfterRecord("9"), None, 0, 0)))
    val start = KinesisSourceOffset(Map("s" -> Map("p" -> AfterRecord("3"), "c" -> TrimHorizon, "d" -> TrimHorizon,
      "e" -> AfterRecord("1"), "f" -> TrimHorizon, "g" -> Finished, "h" -> TrimHorizon)), Map("s" -> 7L))
    val parents = Map("c" -> Seq("p"))
    val unlimited = Budget(Some(Long.MaxValue), Some(Long.MaxValue))
    val expected = Map("p" -> Finished, "c" -> TrimHorizon, "d" -> TrimHorizon, "e" -> AfterRecord("3"),
      "f" -> AfterRecord("9"), "g" -> Finished, "h" -> TrimHorizon)
    assert(plan(start, unlimited, parents, ranges, fresh = Set("d")) == expected)
    assert(plan(start, Budget.Unbounded, parents, ranges, fresh = Set("d")) == expected)
    val finished = KinesisSourceOffset(Map("s" -> expected))
    assert(plan(finished, Budget.Unbounded, parents, ranges) == plan(finished, unlimited, parents, ranges))
    assert(plan(finished, Budget.Unbounded, parents, ranges)("c") == AfterRecord("8"))
    // A stream nothing moved in keeps its very map.
    val idle = KinesisSourceOffset(Map("s" -> Map("g" -> Finished, "h" -> TrimHorizon)))
    assert(BatchEndPlanner.plan(idle, Set.empty, (_, _) => Nil, (_, _, _) => Nil, Budget.Unbounded).streams("s") eq
      idle.streams("s"))
  }

  test("without a limit, each stream ends where a limit nothing reaches ends it, and an idle stream keeps its map") {
    val start = KinesisSourceOffset(Map(
      "s" -> Map("a" -> TrimHorizon, "b" -> AfterRecord("11")),
      "t" -> Map("a" -> TrimHorizon)), Map("s" -> 1L, "t" -> 2L))
    val ranges: (String, String, ShardPosition) => Seq[FetchedRange] = {
      case ("s", "a", TrimHorizon)          => chain("a", Seq(10, 20))
      case ("s", "b", AfterRecord("11", _)) => Seq(FetchedRange("s", "b", AfterRecord("11"), AfterRecord("21"), None, 1, 1))
      case _                                => Nil
    }
    def planned(budget: Budget) = BatchEndPlanner.plan(start, Set.empty, (_, _) => Nil, ranges, budget)
    val unbounded = planned(Budget.Unbounded)
    assert(unbounded == planned(Budget(Some(Long.MaxValue), None)))
    assert(unbounded.streams("s") == Map("a" -> AfterRecord("20"), "b" -> AfterRecord("21")))
    assert(unbounded.streams("t") eq start.streams("t"))
    assert(unbounded.created == start.created)
  }
}
