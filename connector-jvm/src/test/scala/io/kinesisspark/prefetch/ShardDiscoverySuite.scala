package io.kinesisspark.prefetch

import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.exception.AbortedException

import io.kinesisspark.{BufferIndex, KinesisSourceOffset, KinesisSourceOptions, LogCapture, ShardPosition, SteppedClock}
import io.kinesisspark.ShardPosition.{AfterRecord, AtTimestamp, Finished, TrimHorizon}
import io.kinesisspark.aws.{ShardInfo, StreamSummary}
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.blocks.{BlockRef, FetchedRange}

/** Shard discovery and the book of starts, against an in-memory Kinesis and a clock that moves only when told. */
class ShardDiscoverySuite extends AnyFunSuite {
  private def options(extra: (String, String)*): KinesisSourceOptions =
    KinesisSourceOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1", "endpoint" -> "http://127.0.0.1:9",
      "awsAccessKey" -> "test", "awsSecretKey" -> "test") ++ extra)

  private def offset(created: Long, positions: (String, ShardPosition)*): KinesisSourceOffset =
    KinesisSourceOffset(Map("s" -> positions.toMap), Map("s" -> created))

  /** A discovery over `api` with what it removes and forgets recorded, and `list()` to run a listing that is due. */
  private class Fixture(val api: FakeKinesisApi, opts: KinesisSourceOptions = options()) {
    val clock = new SteppedClock
    val buffer = new BufferIndex
    val removed = mutable.ArrayBuffer.empty[BlockRef]
    val forgotten = mutable.ArrayBuffer.empty[String]
    val discovery = new ShardDiscovery(api, opts, buffer, removed ++= _, clock, forgetStream = forgotten += _)

    def list(): Unit = {
      clock.now += opts.shardFetchIntervalMs
      discovery.refreshShards()
    }

    def start(shardId: String): Option[ShardPosition] = discovery.starts.get(("s", shardId))

    def listed: Seq[String] = discovery.listings.get("s").toSeq.flatMap(_.graph.shards.map(_.shardId))
  }

  /** A stream of one shard, shardId-0, that the start holds after record 110, listed once. */
  private def listedOnce(): Fixture = {
    val api = new FakeKinesisApi("s")
    api.add("shardId-0", 3)
    val f = new Fixture(api)
    f.discovery.addStart(offset(api.createdMillis, "shardId-0" -> AfterRecord("110")))
    f.list()
    f
  }

  private def split(api: FakeKinesisApi, parent: String, children: String*): Unit = {
    api.closed += parent
    children.foreach { child => api.add(child, 1); api.parents(child) = Seq(parent) }
  }

  test("through a split and a merge, new shards start at TRIM_HORIZON and the known ones keep their starts") {
    val f = listedOnce()
    val api = f.api
    assert(f.listed == Seq("shardId-0"))
    assert(f.start("shardId-0").contains(AfterRecord("110")))

    split(api, "shardId-0", "shardId-1", "shardId-2")
    f.list()
    assert(f.listed.toSet == Set("shardId-0", "shardId-1", "shardId-2"))
    assert(f.discovery.listings("s").graph.shards.find(_.shardId == "shardId-0").exists(_.closed),
      "the children close their parent")
    assert(f.start("shardId-0").contains(AfterRecord("110")), "the parent is read on from where it was")
    assert(f.start("shardId-1").contains(TrimHorizon) && f.start("shardId-2").contains(TrimHorizon))

    api.closed ++= Seq("shardId-1", "shardId-2")
    api.add("shardId-3", 1)
    api.parents("shardId-3") = Seq("shardId-1", "shardId-2")
    f.list()
    assert(f.start("shardId-3").contains(TrimHorizon))
    assert(f.discovery.listings("s").graph.parentsOf("shardId-3") == Seq("shardId-1", "shardId-2"))
    assert(f.discovery.dataLossEvents == 0)
  }

  test("a parent left out of the start because its children moved on is Finished, not read again") {
    val api = new FakeKinesisApi("s")
    api.add("shardId-0", 3)
    split(api, "shardId-0", "shardId-1", "shardId-2")
    val f = new Fixture(api)
    f.discovery.addStart(offset(api.createdMillis, "shardId-1" -> AfterRecord("100"), "shardId-2" -> TrimHorizon))
    f.list()
    assert(f.start("shardId-0").contains(Finished), "a child has read a record: its parent ended")
    assert(f.start("shardId-1").contains(AfterRecord("100")) && f.start("shardId-2").contains(TrimHorizon))
  }

  test("a stream added to streamName starts at the initial position as of when it was added; later shards at TRIM_HORIZON") {
    val api = new FakeKinesisApi("s")
    api.add("shardId-0", 3)
    api.add("shardId-1", 3)
    val f = new Fixture(api) // initialPosition latest
    f.clock.now = 5000L
    // A checkpoint of a query that read another stream: "s" was added to streamName since.
    f.discovery.addStart(KinesisSourceOffset(Map("old" -> Map("shardId-0" -> AfterRecord("5"))), Map("old" -> 1L)))
    f.list()
    assert(f.start("shardId-0").contains(AtTimestamp(5000L)) && f.start("shardId-1").contains(AtTimestamp(5000L)))
    assert(f.discovery.starts.keySet.forall(_._1 == "s"), "a stream not read is not tracked")
    split(api, "shardId-1", "shardId-2", "shardId-3")
    f.list()
    assert(f.start("shardId-2").contains(TrimHorizon), "a reshard after the stream's first listing")
  }

  test("a stream's retention period is known after its first listing, also when the start gave its creation time") {
    val dayMillis = 24 * 3600 * 1000L // FakeKinesisApi describes a retention of 24 hours
    def describing(describes: mutable.ArrayBuffer[String]): FakeKinesisApi = {
      val api = new FakeKinesisApi("s") {
        override def describeStream(name: String): StreamSummary = { describes += name; super.describeStream(name) }
      }
      api.add("shardId-0", 3)
      api
    }
    // A restarted query: its start holds the stream's creation time, which the listing then need not describe.
    val restartDescribes = mutable.ArrayBuffer.empty[String]
    val restarted = new Fixture(describing(restartDescribes))
    restarted.discovery.addStart(offset(restarted.api.createdMillis, "shardId-0" -> AfterRecord("110")))
    assert(restarted.discovery.listed.created.contains("s") && restarted.discovery.listed.retention.isEmpty,
      "the start gives the creation time, not the retention period")
    restarted.list()
    assert(restarted.discovery.listed.retention == Map("s" -> dayMillis))
    // A stream the start does not hold: described once, for both.
    val addedDescribes = mutable.ArrayBuffer.empty[String]
    val added = new Fixture(describing(addedDescribes))
    added.discovery.addStart(KinesisSourceOffset(Map.empty))
    added.list()
    assert(added.discovery.listed.retention == Map("s" -> dayMillis))
    assert(added.discovery.listed.created == Map("s" -> added.api.createdMillis))

    restarted.list()
    added.list()
    assert(restartDescribes == Seq("s") && addedDescribes == Seq("s"), "described once, not at every listing")
  }

  test("a deleted stream counts one data-loss event; created again, its starts, buffer and statistics go and it is read from TRIM_HORIZON") {
    val api = new FakeKinesisApi("s")
    api.add("shardId-0", 3)
    api.add("shardId-1", 3)
    val f = new Fixture(api, options("failOnDataLoss" -> "false"))
    f.discovery.addStart(offset(1000L, "shardId-0" -> AfterRecord("110"), "shardId-1" -> AfterRecord("120")))
    val block = BlockRef(1, 7L, "executor_host_0", 0, 50, last = true)
    f.buffer.append(FetchedRange("s", "shardId-0", AfterRecord("110"), AfterRecord("120"), Some(block), 1, 50L))
    f.list()
    assert(f.listed.size == 2)

    api.deleted = true
    f.list()
    assert(f.discovery.listings.get("s").isEmpty, "a deleted stream has no listing")
    assert(f.discovery.dataLossEvents == 1)
    f.list()
    assert(f.discovery.dataLossEvents == 1, "one event per deletion, however often it is listed")

    api.deleted = false
    api.createdMillis = 2000L
    api.shards.clear()
    api.add("shardId-0", 1)
    f.list()
    assert(f.discovery.listings.get("s").map(_.createdMillis).contains(2000L))
    assert(f.discovery.starts == Map(("s", "shardId-0") -> TrimHorizon), "the old starts are dropped")
    assert(f.buffer.bufferedRecords == 0 && f.removed == Seq(block), "what was buffered of the old stream goes")
    assert(f.forgotten == Seq("s"))
    assert(f.discovery.dataLossEvents == 1)

    // A batch of the old stream, committed late, moves nothing of the new one.
    f.discovery.committed(offset(1000L, "shardId-0" -> AfterRecord("500")))
    assert(f.start("shardId-0").contains(TrimHorizon))
    f.discovery.committed(offset(2000L, "shardId-0" -> AfterRecord("100")))
    assert(f.start("shardId-0").contains(AfterRecord("100")))
  }

  test("a transient listing failure keeps the shards known and lists again after a back-off") {
    val f = listedOnce()
    val api = f.api
    val (listings, starts) = (f.discovery.listings, f.discovery.starts)

    api.failListingsNext = 2
    api.add("shardId-1", 1)
    api.parents("shardId-1") = Seq("shardId-0")
    val (_, logged) = LogCapture.of(classOf[ShardDiscovery])(f.list())
    assert(logged.exists(l => l.level == "WARN" && l.message.contains("Listing Kinesis shards failed") &&
      l.message.contains("retry 1 of 8")), logged)
    assert((f.discovery.listings eq listings) && (f.discovery.starts eq starts), "the shards known stand")
    f.clock.now += 100 // the first retry comes after 250 to 500 ms
    f.discovery.refreshShards()
    assert(api.failListingsNext == 1, "listed again before the back-off ended")
    f.clock.now += 500
    f.discovery.refreshShards()
    assert(api.failListingsNext == 0 && (f.discovery.starts eq starts))
    f.clock.now += 2000
    f.discovery.refreshShards()
    assert(f.listed.toSet == Set("shardId-0", "shardId-1"))
    assert(f.start("shardId-0").contains(AfterRecord("110")) && f.start("shardId-1").contains(TrimHorizon))
  }

  test("a listing that the stop aborts is no failure: nothing at WARN, nothing handed on") {
    val entered = new CountDownLatch(1)
    val api = new FakeKinesisApi("s") {
      override def listShards(name: String, pageSize: Int, afterShardId: Option[String]): Seq[ShardInfo] = {
        entered.countDown()
        // As the SDK answers a call whose thread is interrupted.
        try Thread.sleep(60000) catch {
          case _: InterruptedException => throw AbortedException.builder().message("Thread was interrupted").build()
        }
        Nil
      }
    }
    val f = new Fixture(api)
    val failures = mutable.ArrayBuffer.empty[Throwable]
    val (_, logged) = LogCapture.of(classOf[ShardDiscovery]) {
      val lister = new Thread(() => f.discovery.listUntilStopped(e => failures.synchronized(failures += e)))
      lister.start()
      assert(entered.await(10, TimeUnit.SECONDS), "the lister never listed")
      f.discovery.stop()
      lister.interrupt() // as the prefetcher's stop does
      lister.join(10000)
      assert(!lister.isAlive, "the lister did not end")
    }
    assert(failures.isEmpty, failures)
    assert(!logged.exists(l => l.level == "WARN" || l.level == "ERROR"), logged)
    assert(logged.exists(l => l.level == "DEBUG" && l.message.contains("AbortedException")), logged)
  }
}
