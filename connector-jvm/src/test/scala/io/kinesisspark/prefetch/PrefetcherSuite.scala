package io.kinesisspark.prefetch

import org.apache.spark.{SparkConf, SparkContext}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{KinesisSourceOffset, KinesisSourceOptions, ShardPosition, StartReconciler}
import io.kinesisspark.ShardPosition.{AfterRecord, Finished, TrimHorizon}
import io.kinesisspark.aws.{GetRecordsResult, KinesisClients}
import io.kinesisspark.aws.FakeKinesisApi

/** The prefetcher on the driver of a one-core local SparkContext, against an in-memory Kinesis. */
class PrefetcherSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sc: SparkContext = _

  override def beforeAll(): Unit =
    sc = new SparkContext(new SparkConf().setMaster("local[1]").setAppName("PrefetcherSuite").set("spark.ui.enabled", "false"))

  override def afterAll(): Unit = if (sc != null) sc.stop()

  private def offset(positions: (String, ShardPosition)*): KinesisSourceOffset =
    KinesisSourceOffset(Map("s" -> positions.toMap), Map("s" -> 1000L))

  test("a batch released out of order never moves where fetching continues backwards") {
    // With asynchronous progress tracking, Spark commits an older batch after the stream released a later one.
    val options = KinesisSourceOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1",
      "endpoint" -> "http://127.0.0.1:9", "awsAccessKey" -> "test", "awsSecretKey" -> "test"))
    val prefetcher = new Prefetcher(sc, options, streamId = 77)
    try {
      val older = offset("shardId-0" -> AfterRecord("100"), "shardId-1" -> AfterRecord("200"), "shardId-2" -> TrimHorizon)
      val later = offset("shardId-0" -> AfterRecord("150"), "shardId-1" -> Finished, "shardId-2" -> TrimHorizon)
      prefetcher.committed(later)
      prefetcher.committed(older)
      assert(prefetcher.startingPosition("s", "shardId-0").contains(AfterRecord("150")))
      assert(prefetcher.startingPosition("s", "shardId-1").contains(Finished), "a finished parent stays finished")
      prefetcher.committed(offset("shardId-0" -> AfterRecord("1000"), "shardId-2" -> AfterRecord("5")))
      assert(prefetcher.startingPosition("s", "shardId-0").contains(AfterRecord("1000")), "a later batch moves it on")
      assert(prefetcher.startingPosition("s", "shardId-2").contains(AfterRecord("5")))
    } finally prefetcher.stop()
  }

  test("a start with a shard the prefetcher does not know adds it, after the same start was known before") {
    // `start` skips a start it knew with the same starts and listing; a different start must still be walked.
    val options = KinesisSourceOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1",
      "endpoint" -> "http://127.0.0.1:5", "awsAccessKey" -> "test", "awsSecretKey" -> "test"))
    val prefetcher = new Prefetcher(sc, options, streamId = 76) // nothing listens there: listings fail, change nothing
    try {
      val first = offset("shardId-0" -> AfterRecord("100"))
      prefetcher.start(first)
      prefetcher.start(first)
      assert(prefetcher.startingPositions == Map(("s", "shardId-0") -> AfterRecord("100")))
      prefetcher.start(offset("shardId-0" -> AfterRecord("100"), "shardId-1" -> AfterRecord("7")))
      assert(prefetcher.startingPosition("s", "shardId-1").contains(AfterRecord("7")))
      prefetcher.committed(offset("shardId-0" -> AfterRecord("150"), "shardId-1" -> AfterRecord("7")))
      prefetcher.start(offset("shardId-0" -> AfterRecord("150"), "shardId-1" -> AfterRecord("7"),
        "shardId-2" -> TrimHorizon))
      assert(prefetcher.startingPositions == Map(("s", "shardId-0") -> AfterRecord("150"),
        ("s", "shardId-1") -> AfterRecord("7"), ("s", "shardId-2") -> TrimHorizon))
    } finally prefetcher.stop()
  }

  test("a finished parent left out of the checkpoint is not read again after a restart") {
    // StartReconciler drops a finished shard from the offset once its children moved on; the shard is still listed.
    val options = KinesisSourceOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1",
      "endpoint" -> "http://127.0.0.1:8", "awsAccessKey" -> "test", "awsSecretKey" -> "test"))
    val api = new FakeKinesisApi("s")
    api.add("shardId-0", 3); api.closed += "shardId-0"
    api.add("shardId-1", 3); api.parents("shardId-1") = Seq("shardId-0")
    KinesisClients.install(options.connection, api)
    val prefetcher = new Prefetcher(sc, options, streamId = 78)
    try {
      prefetcher.start(offset("shardId-1" -> AfterRecord("110")))
      val deadline = System.currentTimeMillis() + 20000
      while (!prefetcher.listings.contains("s") && System.currentTimeMillis() < deadline) Thread.sleep(20)
      assert(prefetcher.listings.contains("s"), "the stream was never listed")
      assert(prefetcher.startingPosition("s", "shardId-0").contains(Finished))
      val r = StartReconciler.reconcile(offset("shardId-1" -> AfterRecord("110")), Seq("s"), prefetcher.listings,
        prefetcher.startingPosition, allowStreamRemoval = false)
      assert(r.base.streams("s") == Map("shardId-1" -> AfterRecord("110")) && r.fresh.isEmpty, r)
    } finally prefetcher.stop()
  }

  test("a prefetch round holds no task slot while Kinesis answers: a job submitted during the round runs at once") {
    // Issue 17: rounds were Spark jobs whose tasks held a core for up to maxFetchDuration, and under Spark's FIFO
    // scheduling a batch's tasks waited behind them. Here: one core, and a 4 s round against a slow Kinesis.
    val options = KinesisSourceOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1",
      "endpoint" -> "http://127.0.0.1:7", "awsAccessKey" -> "test", "awsSecretKey" -> "test",
      "maxFetchDuration" -> "4s", "maxRecordsPerFetch" -> "10", "minFetchPeriod" -> "200ms"))
    val api = new FakeKinesisApi("s") {
      override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult = {
        Thread.sleep(100)
        super.getRecords(name, iterator, limit)
      }
    }
    api.add("shardId-0", 10000)
    KinesisClients.install(options.connection, api)
    val prefetcher = new Prefetcher(sc, options, streamId = 79)
    def await(what: String)(condition: => Boolean): Unit = {
      val deadline = System.currentTimeMillis() + 20000
      while (!condition && System.currentTimeMillis() < deadline) Thread.sleep(20)
      assert(condition, what)
    }
    try {
      prefetcher.start(offset("shardId-0" -> TrimHorizon))
      await("the round never called GetRecords twice")(api.getRecordsCalls >= 2)
      val started = System.nanoTime()
      assert(sc.parallelize(1 to 10, 1).map(_ * 2).sum() == 110.0)
      val tookMs = (System.nanoTime() - started) / 1000000
      assert(prefetcher.buffer.bufferedRecords == 0, "the round had ended before the job: nothing was shown")
      assert(tookMs < 2000, s"a job submitted during a prefetch round took $tookMs ms: it waited for the round")
      await("the round's records never reached the buffer")(prefetcher.buffer.bufferedRecords > 0)
      assert(prefetcher.buffer.bufferedRecords >= 30, "the round fetched for seconds: several calls of ten records")
    } finally prefetcher.stop()
  }

  test("a fetch task's records are in the buffer as soon as it is done, while the round's other tasks fetch on") {
    // A round ended only when its slowest task did: at 1,000 shards about a second, which every record waited out.
    // Here one task's shard is caught up after one call; the other's has a backlog it reads for 4 s.
    val options = KinesisSourceOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1",
      "endpoint" -> "http://127.0.0.1:6", "awsAccessKey" -> "test", "awsSecretKey" -> "test",
      "maxFetchDuration" -> "4s", "maxRecordsPerFetch" -> "10", "minFetchPeriod" -> "200ms", "shardsPerTask" -> "1"))
    val api = new FakeKinesisApi("s") {
      override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult = {
        if (iterator.startsWith("shardId-1:")) Thread.sleep(100)
        super.getRecords(name, iterator, limit)
      }
    }
    api.add("shardId-0", 5)
    api.add("shardId-1", 10000)
    KinesisClients.install(options.connection, api)
    val prefetcher = new Prefetcher(sc, options, streamId = 75)
    try {
      prefetcher.start(offset("shardId-0" -> TrimHorizon, "shardId-1" -> TrimHorizon))
      val deadline = System.currentTimeMillis() + 10000
      def fast = prefetcher.buffer.rangesAfter("s", "shardId-0", TrimHorizon)
      while (fast.isEmpty && System.currentTimeMillis() < deadline) {
        prefetcher.awaitFetchAfter(prefetcher.fetched, 100) // ends early when a task's records come
      }
      assert(fast.map(_.records).sum == 5, s"shard 0's records were not in the buffer: $fast")
      val slowRecords = prefetcher.buffer.rangesAfter("s", "shardId-1", TrimHorizon).map(_.records).sum
      assert(slowRecords == 0, "the slow task had ended too: this shows nothing")
      assert(prefetcher.lastRoundMillis == 0, "a round that fetched had ended: this shows nothing")
    } finally prefetcher.stop()
  }
}
