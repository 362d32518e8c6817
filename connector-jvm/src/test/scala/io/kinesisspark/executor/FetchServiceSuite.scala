package io.kinesisspark.executor

import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.kinesisspark.{BlockStoreBridge, FetchResultChannel}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.ShardPosition.TrimHorizon
import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig, GetRecordsResult, KinesisClients}
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.blocks.BlockRef
import io.kinesisspark.reader.FetchLimits

/** The executor's fetch service and the driver's result endpoint, over a local SparkContext's RPC. */
class FetchServiceSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sc: SparkContext = _
  private val streamIds = new AtomicInteger(9500)

  override def beforeAll(): Unit =
    sc = new SparkContext(new SparkConf().setMaster("local[1]").setAppName("FetchServiceSuite")
      .set("spark.ui.enabled", "false"))

  override def afterAll(): Unit = if (sc != null) sc.stop()

  /** A ticket of one shard holding three 1 MB records (three ranges of one block), read through `api`. */
  private def ticket(name: String, api: FakeKinesisApi = new FakeKinesisApi(), maxRoundMillis: Long = 10000L): FetchTicket = {
    val connection = AwsConnection("us-east-1", Some(java.net.URI.create(s"http://127.0.0.1:6/$name")),
      AwsCredentialsConfig.DefaultChain)
    for (i <- 0 until 3) api.put("shard-0", s"k$i", new Array[Byte](1 << 20))
    KinesisClients.install(connection, api)
    FetchTicket(name, 42L, ShardFetchTask(connection, FetchLimits(1, minFetchPeriodMs = 0, maxRoundMillis = maxRoundMillis),
      streamIds.incrementAndGet(), Seq(ShardFetchOrder("s", "shard-0", TrimHorizon, 1L))))
  }

  private def awaitEnded(t: FetchTicket): Unit = {
    val deadline = System.currentTimeMillis() + 20000
    while (FetchService.pending(t.task.streamId) > 0 && System.currentTimeMillis() < deadline) Thread.sleep(10)
    assert(FetchService.pending(t.task.streamId) == 0, "the ticket never ended")
  }

  // Blocks the executor said it removed after a refusal, by the last endpoint opened.
  private val removedBlocks = new java.util.concurrent.atomic.AtomicInteger()

  /** Dispatches `t` to an endpoint answering `answer`; what was delivered, decoded: (ticket id, copy, results). */
  private def deliveries(t: FetchTicket, attempt: Int = 0)(answer: => Int): Seq[(Long, String, Seq[ShardFetchResult])] = {
    val delivered = new java.util.concurrent.ConcurrentLinkedQueue[Array[Byte]]()
    removedBlocks.set(0)
    val receiver = FetchResultChannel.open(t.endpoint)(bytes => { delivered.add(bytes); answer }, _ => (),
      n => removedBlocks.addAndGet(n))
    try {
      assert(FetchService.dispatch(t, attempt) == BlockStoreBridge.location)
      awaitEnded(t)
    } finally receiver.close()
    assert(!delivered.isEmpty, "nothing was delivered")
    delivered.toArray(Array.empty[Array[Byte]]).toSeq.map(decode)
  }

  private def decode(bytes: Array[Byte]): (Long, String, Seq[ShardFetchResult]) = {
    val delivery = FetchDelivery.decode(bytes)
    (delivery.ticket, delivery.copy, delivery.results)
  }

  private def blocks(results: Seq[ShardFetchResult]): Seq[BlockRef] = ShardFetchResult.blocks(results)

  test("a ticket's result reaches the driver's endpoint, and its blocks stay when the driver takes it") {
    val t = ticket("fetch-service-suite-accepted")
    val Seq((id, copy, results)) = deliveries(t)(FetchResultChannel.Accepted)
    assert(id == 42L && copy == s"${BlockStoreBridge.location}/0")
    assert(results.map(_.ranges.map(_.records).sum) == Seq(3))
    assert(blocks(results).nonEmpty && blocks(results).forall(b => BlockStoreBridge.get(b.streamId, b.uniqueId).isDefined))
    BlockStoreBridge.removeAll(t.task.streamId)
  }

  test("the blocks of a result the driver refuses (a late or second copy) are removed on the executor") {
    val t = ticket("fetch-service-suite-refused")
    val Seq((_, _, results)) = deliveries(t)(FetchResultChannel.Refused)
    assert(blocks(results).nonEmpty && blocks(results).forall(b => BlockStoreBridge.get(b.streamId, b.uniqueId).isEmpty))
    assert(removedBlocks.get == blocks(results).size, "the executor tells the driver how many it removed")
  }

  test("a delivery whose answer is not known is tried again, and its blocks stay: the driver may have kept them") {
    val t = ticket("fetch-service-suite-unknown")
    val all = deliveries(t)(throw new IllegalStateException("the driver failed to answer"))
    assert(all.size == 3, s"${all.size} deliveries")
    assert(blocks(all.head._3).forall(b => BlockStoreBridge.get(b.streamId, b.uniqueId).isDefined))
    BlockStoreBridge.removeAll(t.task.streamId)
  }

  test("a second attempt of a dispatch (a retry, a speculative copy) fetches nothing and delivers an empty result") {
    val api = new FakeKinesisApi()
    val t = ticket("fetch-service-suite-second", api)
    val Seq((id, copy, results)) = deliveries(t, attempt = 1)(FetchResultChannel.Accepted)
    assert(id == 42L && copy.endsWith("/1") && results.isEmpty)
    assert(api.getRecordsCalls == 0 && api.iteratorCalls == 0)
  }

  test("while a ticket fetches, its executor lists it to the driver; once the endpoint is gone, the fetch stops") {
    val api = new FakeKinesisApi() {
      override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult = {
        Thread.sleep(200)
        super.getRecords(name, iterator, limit)
      }
    }
    for (i <- 0 until 200) api.put("shard-0", s"more$i", new Array[Byte](10))
    val t = ticket("fetch-service-suite-listed", api, maxRoundMillis = 60000L)
    val listed = new LinkedBlockingQueue[Seq[Long]]()
    val receiver = FetchResultChannel.open(t.endpoint)(_ => FetchResultChannel.Accepted, ids => listed.put(ids.toSeq),
      _ => ())
    try {
      FetchService.dispatch(t, attempt = 0)
      assert(listed.poll(10, TimeUnit.SECONDS) == Seq(42L), "the executor did not list its ticket")
    } finally receiver.close()
    assert(FetchResultChannel.heartbeat(t.endpoint, Array(42L)).contains(false), "the endpoint is not known to be gone")
    assert(FetchResultChannel.deliver(t.endpoint, Array[Byte](1)) == FetchResultChannel.Closed)
    val callsAtClose = api.getRecordsCalls
    awaitEnded(t) // within the check's second, not the round's minute
    assert(api.getRecordsCalls - callsAtClose <= 8, s"${api.getRecordsCalls - callsAtClose} calls after the close")
    assert(BlockStoreBridge.streamBlockCount(t.task.streamId) == 0, "the stopped fetch left blocks")
  }
}
