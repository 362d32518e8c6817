package io.kinesisspark.executor

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.kinesisspark.BlockStoreBridge
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{BlockRow, DataLossPolicy, KinesisRecordSchema, ShardPosition}
import io.kinesisspark.ShardPosition.TrimHorizon
import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig, FetchedRecord, GetRecordsResult}
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.blocks.{KinesisRecord, RecordBlockCodec}
import io.kinesisspark.reader.FetchLimits

/** The prefetch task on an executor's BlockManager (a local SparkContext's). */
class ShardFetcherSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sc: SparkContext = _
  private val connection = AwsConnection("us-east-1", None, AwsCredentialsConfig.DefaultChain)
  private val streamIds = new java.util.concurrent.atomic.AtomicInteger(9000)

  override def beforeAll(): Unit =
    sc = new SparkContext(new SparkConf().setMaster("local[1]").setAppName("ShardFetcherSuite")
      .set("spark.ui.enabled", "false"))

  override def afterAll(): Unit = if (sc != null) sc.stop()

  private def task(shards: Int, roundMillis: Long = FetchLimits.DefaultMaxRoundMillis): ShardFetchTask =
    ShardFetchTask(connection, FetchLimits(5, minFetchPeriodMs = 0, maxRoundMillis = roundMillis),
    streamIds.incrementAndGet(), (0 until shards).map(i => ShardFetchOrder("s", s"shard-$i", TrimHorizon, i.toLong)))

  test("a fetch whose query stopped ends at its next call, returns nothing and removes the blocks it stored") {
    val api = new FakeKinesisApi()
    // 1 MB records, 5 a call: every response is over BlockTargetBytes, so each is stored as it comes.
    for (shard <- Seq("shard-0", "shard-1"); i <- 0 until 10) api.put(shard, s"k$i", new Array[Byte](1 << 20))
    val t = ShardFetchTask(connection, FetchLimits(5, minFetchPeriodMs = 0), streamIds.incrementAndGet(),
      (0 until 2).map(i => ShardFetchOrder("s", s"shard-$i", TrimHorizon, i.toLong)))
    var storedAtStop = -1
    val results = ShardFetcher.fetch(t, api, attempt = 0, cancelled = () => {
      val stop = api.getRecordsCalls >= 3
      if (stop && storedAtStop < 0) storedAtStop = BlockStoreBridge.streamBlockCount(t.streamId)
      stop
    })
    assert(results.isEmpty)
    assert(api.getRecordsCalls == 3, "no call after the stop")
    assert(storedAtStop == 3, s"$storedAtStop blocks were stored when the stop came")
    assert(BlockStoreBridge.streamBlockCount(t.streamId) == 0, "the blocks stored before the stop are gone")
  }

  test("an error is returned to the driver instead of failing the task, and the task's blocks are removed") {
    val api = new FakeKinesisApi() {
      override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult =
        if (getRecordsCalls >= 2) throw new IllegalStateException("boom") else super.getRecords(name, iterator, limit)
    }
    api.add("shard-0", 20)
    val t = task(1)
    val results = ShardFetcher.fetch(t, api, attempt = 0)
    assert(results.size == 1 && results.head.ranges.isEmpty)
    assert(results.head.failure.exists(_.getMessage == "boom"), results.head.failure)
    assert(api.getRecordsCalls == 2, "two responses were stored before the failure")
    // Block ids: order id << 24 | attempt << 20 | a counter (ShardFetcher.store).
    assert(Seq(0L, 1L).forall(id => BlockStoreBridge.get(t.streamId, id).isEmpty), "the blocks stored before the failure are gone")
  }

  test("a response whose sequence numbers are not decimal digits fails the task's result, naming the stream and shard") {
    val api = new FakeKinesisApi()
    api.shards.getOrElseUpdate("shard-0", scala.collection.mutable.ArrayBuffer.empty) +=
      FetchedRecord("4959x", "k", Array[Byte](1), 1000L)
    val results = ShardFetcher.fetch(task(1), api, attempt = 0)
    assert(results.head.failure.exists(e => e.getMessage.contains("stream 's', shard-0") &&
      e.getMessage.contains("not a Kinesis sequence number: '4959x'")), results.head.failure)
  }

  test("the fetched blocks read back, whole ranges straight from the block and cut ones record by record, as Kinesis returns them") {
    val api = new FakeKinesisApi(); api.add("shard-0", 12)
    val t = task(1)
    val ranges = ShardFetcher.fetch(t, api, attempt = 0).head.ranges
    assert(ranges.map(_.records) == Seq(5, 5, 2), "a response of at most 5 records per range")
    assert(ranges.flatMap(_.block).map(b => (b.uniqueId, b.last)) == Seq((0L, false), (0L, false), (0L, true)),
      "one block for the shard's round, its last segment marked")
    assert(BlockStoreBridge.get(t.streamId, 0L).map(_.chunks.size).contains(3), "a segment per response")
    val fromKinesis = new ShardRangeIterator(api, "s", "shard-0", TrimHorizon, ranges.last.to, Nil, t.limits,
      DataLossPolicy(failOnDataLoss = true), ShardRangeIterator.Records).toSeq
    assert(fromKinesis.size == 12)
    def view(r: KinesisRecord) = (r.partitionKey, r.data.toSeq, r.sequenceNumber, r.subSequenceNumber, r.approximateArrivalMillis)
    // Rows as the partition reader makes them, from the block's bytes or from a record: the same either way.
    val rows = new ShardRangeIterator.Output[(String, Seq[Byte], String, Long, String)] {
      def fromRecord(r: KinesisRecord) = (r.partitionKey, r.data.toSeq, r.sequenceNumber, r.approximateArrivalMillis, "record")
      def fromBlock(b: RecordBlockCodec.Cursor) = {
        val r = b.record
        (r.partitionKey, r.data.toSeq, r.sequenceNumber, r.approximateArrivalMillis, "block")
      }
    }
    val positions = TrimHorizon +: fromKinesis.map(_.position)
    for (from <- Seq(0, 3, 5); to <- Seq(5, 7, 12) if to > from) {
      val covering = ranges.filterNot(r => ShardPosition.reaches(positions(from), r.to) || ShardPosition.reaches(r.from, positions(to)))
      val read = new ShardRangeIterator(api, "s", "shard-0", positions(from), positions(to), covering, t.limits,
        DataLossPolicy(failOnDataLoss = true), ShardRangeIterator.Records).toSeq
      assert(read.map(view) == fromKinesis.slice(from, to).map(view), s"($from, $to]")
      val made = new ShardRangeIterator(api, "s", "shard-0", positions(from), positions(to), covering, t.limits,
        DataLossPolicy(failOnDataLoss = true), rows).toSeq
      assert(made.map(_.copy(_5 = "")) == fromKinesis.slice(from, to).map(r =>
        (r.partitionKey, r.data.toSeq, r.sequenceNumber, r.approximateArrivalMillis, "")), s"($from, $to]")
      // Ranges wholly inside come straight from the block; a range the batch cuts is checked record by record.
      val whole = from % 5 == 0 && (to % 5 == 0 || to == 12)
      assert(made.forall(_._5 == "block") == whole, s"($from, $to]: ${made.map(_._5)}")
    }
    assert(api.getRecordsCalls == 3 + 3, "blocks served every read but the one from Kinesis")
    // The partition reader's rows: one view over the block, across its three segments, copied after each `next` as
    // Spark's projection does; the same rows as made from the records Kinesis returned.
    val (stream, shard) = (UTF8String.fromString("s"), UTF8String.fromString("shard-0"))
    for (schema <- KinesisRecordSchema.All) {
      val view = new BlockRow(schema, stream, shard)
      val viewed = new ShardRangeIterator(api, "s", "shard-0", TrimHorizon, ranges.last.to, ranges, t.limits,
        DataLossPolicy(failOnDataLoss = true), new ShardRangeIterator.Output[InternalRow] {
          def fromRecord(r: KinesisRecord) = schema.toRow(stream, shard, r)
          def fromBlock(b: RecordBlockCodec.Cursor) = view.at(b)
        })
      val copies = Iterator.continually(viewed).takeWhile(_.hasNext).map(_.next().copy()).toList
      assert(copies.map(_.toSeq(schema.schema).map(comparable)) ==
        fromKinesis.map(schema.toRow(stream, shard, _).toSeq(schema.schema).map(comparable)), schema)
    }
    assert(api.getRecordsCalls == 3 + 3, "the views read the blocks only")
    var got = Seq.empty[Boolean]
    val counting = new ShardRangeIterator.Output[KinesisRecord] {
      def fromRecord(r: KinesisRecord) = r
      def fromBlock(b: RecordBlockCodec.Cursor) = b.record
      override def blockRead(local: Boolean): Unit = got :+= local
    }
    assert(new ShardRangeIterator(api, "s", "shard-0", TrimHorizon, ranges.last.to, ranges, t.limits,
      DataLossPolicy(failOnDataLoss = true), counting).size == 12)
    assert(got == Seq(true), "the three ranges of one local block get it once")
    BlockStoreBridge.removeAll(t.streamId)
  }


  private def comparable(value: Any): Any = value match {
    case bytes: Array[Byte] => bytes.toSeq
    case other => other
  }

  test("a shard's block is stored once it holds BlockTargetBytes, and again at the end of the round") {
    val api = new FakeKinesisApi()
    val half = new Array[Byte](512 * 1024)
    (0 until 20).foreach(i => api.put("shard-0", s"k$i", half)) // 4 responses of 2.5 MB: stored after 2, and after 4
    val t = task(1)
    val result = ShardFetcher.fetch(t, api, attempt = 0).head
    assert(api.getRecordsCalls == 5, "4 full responses, then one at the tip")
    assert(result.ranges.map(_.records) == Seq(5, 5, 5, 5))
    assert(result.ranges.flatMap(_.block).map(b => (b.uniqueId, b.last)) == Seq((0L, false), (0L, true), (1L, false), (1L, true)),
      result.ranges)
    assert(result.ranges.sliding(2).forall(p => p.head.to == p(1).from), "ranges follow one another")
    BlockStoreBridge.removeAll(t.streamId)
  }

  test("a task stores its largest pending block once its shards together hold TaskPendingBytes") {
    val data = new Array[Byte](700 * 1024) // a response of 5 records: 3.5 MB, under BlockTargetBytes
    var storedBeforeLastShard: Option[Boolean] = None
    val t = task(6)
    val api = new FakeKinesisApi() {
      override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult = {
        if (iterator.startsWith("shard-5:0")) storedBeforeLastShard = Some(BlockStoreBridge.get(t.streamId, 0L).isDefined)
        super.getRecords(name, iterator, limit)
      }
    }
    (0 until 6).foreach(s => (0 until 5).foreach(i => api.put(s"shard-$s", s"k$i", data)))
    val results = ShardFetcher.fetch(t, api, attempt = 0)
    assert(results.map(_.ranges.map(_.records).sum) == Seq.fill(6)(5))
    assert(storedBeforeLastShard.contains(true), "17.5 MB pending over five shards: the first was stored early")
    BlockStoreBridge.removeAll(t.streamId)
  }

  test("the AvailableNow arrival cut ends a range and the round, inside a response or between two") {
    for (cut <- Seq(1006L, 1004L)) { // records arrive at 1000, 1001, ...: inside the second response, or between
      val api = new FakeKinesisApi(); api.add("shard-0", 12)
      val t = task(1).copy(arrivalCut = Some(cut))
      val ranges = ShardFetcher.fetch(t, api, attempt = 0).head.ranges
      val upTo = (cut - 1000 + 1).toInt
      assert(ranges.map(_.records).sum == 10, "the round ends with the response that passed the cut")
      assert(ranges.filter(_.lastArrivalMillis <= cut).map(_.records).sum == upTo, s"cut at $cut: $ranges")
      assert(ranges.forall(r => r.lastArrivalMillis <= cut || r.firstArrivalMillis > cut), "no range holds both sides")
      assert(ranges.sliding(2).forall(p => p.head.to == p(1).from))
      assert(ranges.flatMap(_.block).map(_.uniqueId).distinct == Seq(0L), "one block")
      BlockStoreBridge.removeAll(t.streamId)
    }
  }

  test("a record that arrived after the cut starts a range of its own, though records after it arrived before") {
    // Kinesis's arrival times may be out of order within a shard: 1000, 1010, 1002, 1003, 1004, cut at 1005.
    val api = new FakeKinesisApi(); api.add("shard-0", 5)
    val records = api.shards("shard-0")
    records(1) = records(1).copy(approximateArrivalMillis = 1010L)
    val t = task(1).copy(arrivalCut = Some(1005L))
    val ranges = ShardFetcher.fetch(t, api, attempt = 0).head.ranges
    assert(ranges.map(r => (r.records, r.firstArrivalMillis, r.lastArrivalMillis)) ==
      Seq((1, 1000L, 1000L), (4, 1010L, 1004L)), ranges)
    BlockStoreBridge.removeAll(t.streamId)
  }
}
