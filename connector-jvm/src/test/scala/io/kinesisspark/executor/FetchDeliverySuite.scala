package io.kinesisspark.executor

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.KinesisSparkException
import io.kinesisspark.ShardPosition.{AfterRecord, AtTimestamp, Finished, TrimHorizon}
import io.kinesisspark.blocks.{BlockRef, FetchedRange}
import io.kinesisspark.reader.ShardCounters

class FetchDeliverySuite extends AnyFunSuite {
  private val seq = "49590338271490256608559692538361571095921575989136588898"

  private def result(shard: String, ranges: Seq[FetchedRange], failure: Option[Throwable] = None) =
    ShardFetchResult("clicks", shard, ranges, caughtUp = true, Some(1200L), ShardCounters(calls = 3, throttles = 1,
      callMillis = 45, dataLossEvents = 2, outOfRangeSubRecords = 4, corruptAggregates = 5, subscriptions = 6),
      location = "executor_h_1", consumerMissing = true, failure = failure)

  test("a delivery comes back as it was sent: every kind of position, ranges with and without a block") {
    val ranges = Seq(
      FetchedRange("clicks", "shardId-000000000001", TrimHorizon, AfterRecord(seq), Some(BlockRef(7, 1L << 40,
        "executor_h_1", 0, 190, last = false)), 1, 100L, 1700000000000L, 1700000000000L),
      FetchedRange("clicks", "shardId-000000000001", AfterRecord(seq), AfterRecord(seq + "1", Some(3L)),
        Some(BlockRef(7, 1L << 40, "executor_h_1", 190, 500, last = true)), 4, 400L, 1700000000001L, 1700000000002L),
      FetchedRange("clicks", "shardId-000000000001", AfterRecord(seq + "1", Some(3L)), Finished, None, 0, 0L),
      FetchedRange("clicks", "shardId-é", AtTimestamp(1700000000000L), AfterRecord("1", Some(-1L)), None, 1, 1L))
    val sent = FetchDelivery(42L, "executor_h_1/0", Seq(result("shardId-000000000001", ranges),
      result("shardId-000000000002", Nil).copy(millisBehindLatest = None, consumerMissing = false)))
    assert(FetchDelivery.decode(FetchDelivery.encode(sent)) == sent)
    assert(FetchDelivery.decode(FetchDelivery.encode(FetchDelivery(0L, "", Nil))) == FetchDelivery(0L, "", Nil))
  }

  test("a failure travels with its message and class") {
    val failed = result("shardId-000000000003", Nil, Some(new KinesisSparkException("GetRecords refused: no access")))
    val backs = FetchDelivery.decode(FetchDelivery.encode(FetchDelivery(1L, "e/0", Seq(failed)))).results
    assert(backs.size == 1)
    val back = backs.head
    assert(back.copy(failure = None) == failed.copy(failure = None))
    assert(back.failure.exists(e =>
      e.isInstanceOf[KinesisSparkException] && e.getMessage == "GetRecords refused: no access"))
  }

  test("bytes of anything else are refused, naming what was found") {
    val e = intercept[IllegalArgumentException](FetchDelivery.decode(Array[Byte](0, 0, 0, 1, 1)))
    assert(e.getMessage.contains("not a kinesis-spark prefetch delivery (magic 1"))
    val whole = FetchDelivery.encode(FetchDelivery(1L, "e/0", Seq(result("shardId-000000000004", Nil))))
    val cut = intercept[IllegalArgumentException](FetchDelivery.decode(whole.take(whole.length - 3)))
    assert(cut.getMessage.contains(s"cut short (${whole.length - 3} bytes)"))
    val trailing = FetchDelivery.encode(FetchDelivery(1L, "e/0", Nil)) :+ 0.toByte
    assert(intercept[IllegalArgumentException](FetchDelivery.decode(trailing)).getMessage.contains("1 bytes left over"))
  }
}
