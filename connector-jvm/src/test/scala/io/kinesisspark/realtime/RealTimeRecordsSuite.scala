package io.kinesisspark.realtime

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{DataLossPolicy, ShardPosition, SteppedClock}
import io.kinesisspark.ShardPosition.{Finished, TrimHorizon}
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.reader.FetchLimits
import io.kinesisspark.reader.fanout.{FakeShardSubscriber, FanOutShardReader, ManualScheduler, ShardSubscription}
import io.kinesisspark.reader.polling.PollingShardReader

class RealTimeRecordsSuite extends AnyFunSuite {

  private def polling(api: FakeKinesisApi, shard: String, clock: SteppedClock, from: ShardPosition = TrimHorizon) =
    new PollingShardReader(api, "s", shard, from, FetchLimits(100, minFetchPeriodMs = 200), clock, clock.sleep)

  private def drain(records: RealTimeRecords, deadline: Long): Seq[(String, String)] =
    Iterator.continually(records.next(deadline)).takeWhile(_.isDefined).flatten
      .map { case (reader, record) => reader.shardId -> record.sequenceNumber }.toSeq

  test("hands out every record of every shard once, in each shard's order, then nothing until the deadline") {
    val api = new FakeKinesisApi(); api.add("shard-0", 3); api.add("shard-1", 2)
    val clock = new SteppedClock
    val records = new RealTimeRecords(Seq(polling(api, "shard-0", clock), polling(api, "shard-1", clock)), clock,
      Some(clock.sleep))
    val got = drain(records, 1000L)
    assert(got.groupBy(_._1).map { case (s, rs) => s -> rs.map(_._2) } ==
      api.shards.map { case (s, rs) => s -> rs.map(_.sequenceNumber).toSeq }.toMap)
    assert(clock.now == 1000L) // the last call found nothing: it waited out the deadline
  }

  test("a shard's position is the last record handed out, not the last one its reader fetched") {
    val api = new FakeKinesisApi(); api.add("shard-0", 4)
    val clock = new SteppedClock
    val records = new RealTimeRecords(Seq(polling(api, "shard-0", clock)), clock, Some(clock.sleep))
    assert(records.progress.map(_.position) == Seq(TrimHorizon))
    val (_, first) = records.next(1000L).get
    // The reader fetched all four in one call; only one went to Spark.
    val progress = records.progress.head
    assert(progress.position == first.position && progress.records == 1 && progress.bytes == first.data.length)
    assert(progress.position == ShardPosition.AfterRecord(api.shards("shard-0").head.sequenceNumber, None))
  }

  test("records fetched and not handed out stay with the reader: the next task gets them first, with no new call") {
    val api = new FakeKinesisApi(); api.add("shard-0", 4)
    api.closed += "shard-0"
    val clock = new SteppedClock
    val reader = polling(api, "shard-0", clock)
    val first = new RealTimeRecords(Seq(reader), clock, Some(clock.sleep))
    val (_, record) = first.next(1000L).get
    val Seq(kept) = first.readersToKeep()
    assert(kept.position == record.position && !kept.ended && reader.ended) // the call fetched the shard's end too
    val callsBefore = reader.calls
    val second = new RealTimeRecords(Seq(kept), clock, Some(clock.sleep))
    assert(drain(second, 1000L).map(_._2) == api.shards("shard-0").drop(1).map(_.sequenceNumber).toSeq)
    assert(reader.calls == callsBefore && second.progress.head.position == Finished && kept.ended)
    // Nothing left over: the reader itself is kept.
    assert(second.readersToKeep() == Seq(kept))
  }

  test("a closed shard is finished once its last record is handed out; an empty closed shard at once") {
    val api = new FakeKinesisApi(); api.add("shard-0", 2); api.shards.getOrElseUpdate("shard-1", ArrayBuffer.empty)
    api.closed ++= Seq("shard-0", "shard-1")
    val clock = new SteppedClock
    val records = new RealTimeRecords(Seq(polling(api, "shard-0", clock), polling(api, "shard-1", clock)), clock,
      Some(clock.sleep))
    records.next(1000L)
    assert(records.progress.head.position != Finished)
    records.next(1000L)
    assert(records.progress.head.position == Finished)
    assert(records.next(1000L).isEmpty)
    assert(records.progress.map(_.position) == Seq(Finished, Finished))
    assert(clock.now < 1000L) // every shard ended: nothing to wait for
  }

  test("counts calls of the task and the lag the last call reported") {
    val api = new FakeKinesisApi(); api.add("shard-0", 1)
    val clock = new SteppedClock
    val reader = polling(api, "shard-0", clock)
    reader.next() // a call before the task: not the task's
    api.add("shard-0", 1)
    val records = new RealTimeRecords(Seq(reader), clock, Some(clock.sleep))
    assert(records.next(1000L).isDefined)
    val progress = records.progress.head
    assert(progress.counters.calls == 1 && progress.millisBehindLatest.contains(0L) && progress.caughtUp)
  }

  test("readers kept for the next task stop raising this task's signal: an idle fan-out one waits in its calls again") {
    val api = new FakeKinesisApi(); api.shards.getOrElseUpdate("shard-0", ArrayBuffer.empty)
    val clock = new SteppedClock
    val scheduler = new ManualScheduler(clock)
    val subscriber = new FakeShardSubscriber(api.shards("shard-0"), 10, clock)
    val arn = "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/c:1"
    val reader = new FanOutShardReader(api, { from =>
      val s = new ShardSubscription(subscriber, arn, "s", "shard-0", from, 4, None, scheduler, clock, new Random(1))
      s.start()
      s
    }, "s", "shard-0", TrimHorizon, arn, FetchLimits(100), clock, DataLossPolicy(failOnDataLoss = true),
      pollWaitMs = 0L)
    scheduler.runNext()
    val records = new RealTimeRecords(Seq(reader), clock, Some(clock.sleep))
    assert(records.next(500L).isEmpty)
    // Called at 0 and found idle: with the task's signal, looked at again only after the recheck.
    assert(reader.readyAt == FanOutShardReader.IdleRecheckMs)
    val Seq(kept) = records.readersToKeep()
    // Without it, ready from its last call on, as the prefetch path has it.
    assert((kept eq reader) && reader.readyAt == 0L)
  }

  test("a finished shard's children join the task once Spark asks past its last record, and come after it") {
    val api = new FakeKinesisApi(); api.add("parent", 2); api.add("child-a", 2); api.add("child-b", 1)
    api.closed += "parent"
    val clock = new SteppedClock
    val asked = ArrayBuffer.empty[String]
    val records = new RealTimeRecords(Seq(polling(api, "parent", clock)), clock, Some(clock.sleep), { parent =>
      asked += parent.shardId
      Seq(polling(api, "child-a", clock), polling(api, "child-b", clock))
    })
    assert(records.next(1000L).isDefined && records.next(1000L).isDefined)
    // The parent's last record is out, not yet processed by the sink: its children are not asked for yet.
    assert(asked.isEmpty && records.progress.map(_.position) == Seq(Finished))
    val rest = drain(records, 1000L)
    assert(asked == Seq("parent")) // once
    assert(rest.map(_._1).sorted == Seq("child-a", "child-a", "child-b"))
    assert(records.progress.map(_.shardId) == Seq("parent", "child-a", "child-b"))
    assert(records.progress.drop(1).map(_.position) ==
      Seq("child-a", "child-b").map(s => ShardPosition.AfterRecord(api.shards(s).last.sequenceNumber, None)))
    assert(records.readersToKeep().map(_.shardId) == Seq("parent", "child-a", "child-b"))
  }

  test("an empty closed shard's children are asked for at once; without an answer the task reads on") {
    val api = new FakeKinesisApi(); api.shards.getOrElseUpdate("parent", ArrayBuffer.empty); api.add("other", 1)
    api.closed += "parent"
    val clock = new SteppedClock
    var asked = 0
    val records = new RealTimeRecords(Seq(polling(api, "parent", clock), polling(api, "other", clock)), clock,
      Some(clock.sleep), { _ => asked += 1; Nil })
    assert(drain(records, 1000L).map(_._1) == Seq("other"))
    assert(asked == 1 && records.progress.head.position == Finished)
  }
}
