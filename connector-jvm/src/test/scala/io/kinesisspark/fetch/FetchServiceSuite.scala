package io.kinesisspark.fetch

import java.util.concurrent.LinkedBlockingQueue

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.kinesisspark.{BlockStoreBridge, FetchResultChannel}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.LoaderBridge
import io.kinesisspark.ShardPosition.TrimHorizon
import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig, KinesisClients}

/** The executor's fetch service and the driver's result endpoint, over a local SparkContext's RPC. */
class FetchServiceSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sc: SparkContext = _
  private val streamIds = new java.util.concurrent.atomic.AtomicInteger(9500)

  override def beforeAll(): Unit =
    sc = new SparkContext(new SparkConf().setMaster("local[1]").setAppName("FetchServiceSuite")
      .set("spark.ui.enabled", "false"))

  override def afterAll(): Unit = if (sc != null) sc.stop()

  /** Dispatches one ticket of one shard of three 1 MB records (3 ranges in one block) to an endpoint answering `answer`. */
  private def deliverOnce(name: String, answer: Int): (FetchTicket, Seq[ShardFetchResult]) = {
    val connection = AwsConnection("us-east-1", Some(java.net.URI.create(s"http://127.0.0.1:6/$name")), AwsCredentialsConfig.DefaultChain)
    val api = new FakeKinesisApi()
    for (i <- 0 until 3) api.put("shard-0", s"k$i", new Array[Byte](1 << 20))
    KinesisClients.install(connection, api)
    val delivered = new LinkedBlockingQueue[Array[Byte]]()
    val receiver = FetchResultChannel.open(name) { bytes => delivered.put(bytes); answer }
    try {
      val streamId = streamIds.incrementAndGet()
      val ticket = FetchTicket(name, 42L, ShardFetchTask(connection, FetchLimits(1, minFetchPeriodMs = 0), streamId,
        Seq(ShardFetchOrder("s", "shard-0", TrimHorizon, 1L))))
      assert(FetchService.dispatch(ticket, attempt = 0) == BlockStoreBridge.location)
      val bytes = delivered.poll(20, java.util.concurrent.TimeUnit.SECONDS)
      assert(bytes != null, "nothing was delivered")
      val deadline = System.currentTimeMillis() + 10000
      while (FetchService.pending(streamId) > 0 && System.currentTimeMillis() < deadline) Thread.sleep(10)
      assert(FetchService.pending(streamId) == 0)
      LoaderBridge.fromBytes(bytes) match {
        case (id: java.lang.Long, results: Seq[_]) =>
          assert(id == 42L)
          (ticket, results.map(_.asInstanceOf[ShardFetchResult]))
        case other => fail(s"delivered: $other")
      }
    } finally receiver.close()
  }

  private def blocks(results: Seq[ShardFetchResult]): Seq[BlockRef] = results.flatMap(_.ranges).flatMap(_.block).filter(_.last)

  test("a ticket's result reaches the driver's endpoint, and its blocks stay when the driver takes it") {
    val (ticket, results) = deliverOnce("fetch-service-suite-accepted", FetchResultChannel.Accepted)
    assert(results.map(_.ranges.map(_.records).sum) == Seq(3))
    assert(blocks(results).nonEmpty && blocks(results).forall(b => BlockStoreBridge.get(b.streamId, b.uniqueId).isDefined))
    BlockStoreBridge.removeAll(ticket.task.streamId)
  }

  test("the blocks of a result the driver refuses (a late or second copy) are removed on the executor") {
    val (_, results) = deliverOnce("fetch-service-suite-refused", FetchResultChannel.Refused)
    assert(blocks(results).nonEmpty && blocks(results).forall(b => BlockStoreBridge.get(b.streamId, b.uniqueId).isEmpty))
  }

  test("a delivery to an endpoint that is gone (the query stopped) is answered Closed, and the endpoint is not open") {
    val receiver = FetchResultChannel.open("fetch-service-suite-gone")(_ => FetchResultChannel.Accepted)
    assert(FetchResultChannel.isOpen("fetch-service-suite-gone"))
    receiver.close()
    assert(!FetchResultChannel.isOpen("fetch-service-suite-gone"))
    assert(FetchResultChannel.deliver("fetch-service-suite-gone", Array[Byte](1)) == FetchResultChannel.Closed)
  }
}
