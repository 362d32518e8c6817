package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition._
import io.kinesisspark.StartReconciler.{Listing, Loss}
import io.kinesisspark.aws.ShardInfo

class StartReconcilerSuite extends AnyFunSuite {
  private def listing(created: Long, shards: (String, Seq[String])*): Listing =
    Listing(created, ShardGraph(shards.map { case (id, parents) => ShardInfo(id, parents, closed = false) }))

  /** Where the prefetcher starts shards it was not given: TRIM_HORIZON for every listed shard. */
  private def trimHorizon(listings: Map[String, Listing]): (String, String) => Option[ShardPosition] =
    (stream, shard) => listings.get(stream).filter(_.graph.shards.exists(_.shardId == shard)).map(_ => TrimHorizon)

  private def reconcile(start: KinesisSourceOffset, streams: Seq[String], listings: Map[String, Listing],
                        allowStreamRemoval: Boolean = false): StartReconciler.Reconciled =
    StartReconciler.reconcile(start, streams, listings, trimHorizon(listings), allowStreamRemoval)

  test("a start that matches the listing is kept as it is") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> AfterRecord("5"))), Map("a" -> 1L))
    val r = reconcile(start, Seq("a"), Map("a" -> listing(1L, "s0" -> Nil)))
    assert(r.base == start && r.fresh.isEmpty && r.lost.isEmpty)
  }

  test("shards that appeared by resharding enter at TRIM_HORIZON and read nothing in this batch") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> AfterRecord("5"))), Map("a" -> 1L))
    val r = reconcile(start, Seq("a"), Map("a" -> listing(1L, "s0" -> Nil, "s1" -> Seq("s0"), "s2" -> Seq("s0"))))
    assert(r.base.streams("a") == Map("s0" -> AfterRecord("5"), "s1" -> TrimHorizon, "s2" -> TrimHorizon))
    assert(r.fresh == Set("a" -> "s1", "a" -> "s2"))
    assert(r.lost.isEmpty)
  }

  test("a finished shard that aged out of the stream leaves the offset quietly") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> Finished, "s1" -> AfterRecord("9"))), Map("a" -> 1L))
    val r = reconcile(start, Seq("a"), Map("a" -> listing(1L, "s1" -> Seq("s0"))))
    assert(r.base.streams("a") == Map("s1" -> AfterRecord("9")))
    assert(r.lost.isEmpty)
  }

  test("a finished shard leaves the offset once all its children have read a record or finished") {
    val resharded = Map("a" -> listing(1L, "s0" -> Nil, "s1" -> Seq("s0"), "s2" -> Seq("s0"), "s3" -> Seq("s1", "s4"),
      "s4" -> Nil))
    def positions(ps: (String, ShardPosition)*) = KinesisSourceOffset(Map("a" -> ps.toMap), Map("a" -> 1L))
    // s2 has not read anything yet: s0 stays, so its children's order is kept across a restart.
    val waiting = reconcile(positions("s0" -> Finished, "s1" -> AfterRecord("7"), "s2" -> TrimHorizon,
      "s3" -> TrimHorizon, "s4" -> AfterRecord("1")), Seq("a"), resharded)
    assert(waiting.base.streams("a").keySet == Set("s0", "s1", "s2", "s3", "s4"))
    // Both children moved on: s0 goes. s1 finished, but its child s3 has not read yet: s1 stays.
    val movedOn = reconcile(positions("s0" -> Finished, "s1" -> Finished, "s2" -> AfterRecord("3"),
      "s3" -> TrimHorizon, "s4" -> Finished), Seq("a"), resharded)
    assert(movedOn.base.streams("a") == Map("s1" -> Finished, "s2" -> AfterRecord("3"), "s3" -> TrimHorizon,
      "s4" -> Finished))
    assert(movedOn.fresh.isEmpty && movedOn.lost.isEmpty)
    // Listed again while absent (the prefetcher says it finished): it does not come back, nor is it fresh.
    val again = StartReconciler.reconcile(movedOn.base.copy(streams = Map("a" -> (movedOn.base.streams("a") ++
      Map("s3" -> AfterRecord("2"))))), Seq("a"), resharded, (_, _) => Some(Finished), allowStreamRemoval = false)
    assert(again.base.streams("a") == Map("s2" -> AfterRecord("3"), "s3" -> AfterRecord("2")), again.base)
    assert(again.fresh.isEmpty)
  }

  test("an unfinished shard that is gone from the stream is data loss") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> AfterRecord("3"), "s1" -> TrimHorizon)), Map("a" -> 1L))
    val r = reconcile(start, Seq("a"), Map("a" -> listing(1L, "s1" -> Seq("s0"))))
    assert(r.base.streams("a") == Map("s1" -> TrimHorizon))
    assert(r.lost.size == 1)
    val Loss(stream, shard, what) = r.lost.head
    assert(stream == "a" && shard == "s0")
    assert(what.contains("no longer in the stream") && what.contains("3"), what)
  }

  test("a stream created again under the same name is data loss; its new shards start at TRIM_HORIZON") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> AfterRecord("5"))), Map("a" -> 1L))
    val r = reconcile(start, Seq("a"), Map("a" -> listing(2L, "s0" -> Nil)))
    assert(r.lost.size == 1)
    val loss = r.lost.head
    assert(loss.stream == "a" && loss.what.contains("deleted and created again"), loss)
    assert(r.base.streams("a") == Map("s0" -> TrimHorizon))
    assert(r.base.created == Map("a" -> 2L))
    assert(r.fresh == Set("a" -> "s0"), "records of the new stream come from the next batch on")
  }

  test("a stream added to streamName enters at its starting position") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> AfterRecord("5"))), Map("a" -> 1L))
    val listings = Map("a" -> listing(1L, "s0" -> Nil), "b" -> listing(7L, "t0" -> Nil, "t1" -> Nil))
    val r = StartReconciler.reconcile(start, Seq("a", "b"), listings,
      (stream, _) => if (stream == "b") Some(AtTimestamp(99L)) else None, allowStreamRemoval = false)
    assert(r.base.streams("b") == Map("t0" -> AtTimestamp(99L), "t1" -> AtTimestamp(99L)))
    assert(r.base.created == Map("a" -> 1L, "b" -> 7L))
    assert(r.fresh == Set("b" -> "t0", "b" -> "t1"))
  }

  test("a stream removed from streamName is refused unless allowed, naming it and the option to set") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> Finished), "b" -> Map("t0" -> TrimHorizon)))
    val listings = Map("a" -> listing(1L, "s0" -> Nil))
    val e = intercept[KinesisSparkException](reconcile(start, Seq("a"), listings))
    assert(e.getMessage.contains("'b'") && e.getMessage.contains("allowStreamRemoval"), e.getMessage)
    val r = reconcile(start, Seq("a"), listings, allowStreamRemoval = true)
    assert(r.base.streams.keySet == Set("a"))
  }

  test("a stream not listed yet keeps the start's positions") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> AfterRecord("5"))), Map("a" -> 1L))
    val r = reconcile(start, Seq("a"), Map.empty)
    assert(r.base == start && r.fresh.isEmpty && r.lost.isEmpty)
  }

  test("a checkpoint from before creation times were recorded is not taken for a recreated stream") {
    val start = KinesisSourceOffset(Map("a" -> Map("s0" -> AfterRecord("5"))))
    val r = reconcile(start, Seq("a"), Map("a" -> listing(1L, "s0" -> Nil)))
    assert(r.lost.isEmpty && r.base.streams("a") == Map("s0" -> AfterRecord("5")) && r.base.created == Map("a" -> 1L))
  }
}
