package io.kinesisspark.fetch

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.kinesisspark.BlockStoreBridge
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition.TrimHorizon
import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig, GetRecordsResult}

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

  test("a second attempt of a prefetch task (a retry, a speculative copy) fetches nothing, after the original's round") {
    val api = new FakeKinesisApi(); api.add("shard-0", 10); api.add("shard-1", 10)
    val started = System.nanoTime()
    assert(ShardFetcher.fetch(task(2, roundMillis = 200L), api, attemptNumber = Some(1)).isEmpty)
    val waitedMs = (System.nanoTime() - started) / 1000000
    assert(waitedMs >= 200L + ShardFetcher.SecondAttemptMarginMs, s"returned after $waitedMs ms: a copy would win")
    assert(api.getRecordsCalls == 0 && api.iteratorCalls == 0)
    val t = task(2)
    val first = ShardFetcher.fetch(t, api, attemptNumber = Some(0))
    assert(first.map(_.ranges.map(_.records).sum) == Seq(10, 10))
    assert(BlockStoreBridge.get(t.streamId, 0L).isDefined)
    BlockStoreBridge.removeAll(t.streamId)
  }

  test("an error is returned to the driver instead of failing the task, and the task's blocks are removed") {
    val api = new FakeKinesisApi() {
      override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult =
        if (getRecordsCalls >= 2) throw new IllegalStateException("boom") else super.getRecords(name, iterator, limit)
    }
    api.add("shard-0", 20)
    val t = task(1)
    val results = ShardFetcher.fetch(t, api, attemptNumber = Some(0))
    assert(results.size == 1 && results.head.ranges.isEmpty)
    assert(results.head.failure.exists(_.getMessage == "boom"), results.head.failure)
    assert(api.getRecordsCalls == 2, "two responses were stored before the failure")
    // Block ids: order id << 24 | attempt << 20 | a counter (ShardFetcher.store).
    assert(Seq(0L, 1L).forall(id => BlockStoreBridge.get(t.streamId, id).isEmpty), "the blocks stored before the failure are gone")
  }
}
