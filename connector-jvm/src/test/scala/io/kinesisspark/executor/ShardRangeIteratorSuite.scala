package io.kinesisspark.executor

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{DataLossPolicy, KinesisSparkException, ShardPosition}
import io.kinesisspark.ShardPosition._
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.reader.FetchLimits

/** The re-read path: ranges whose blocks are gone are read again from Kinesis, exactly (from, to]. */
class ShardRangeIteratorSuite extends AnyFunSuite {
  private val limits = FetchLimits(4, minFetchPeriodMs = 0)

  private def read(api: FakeKinesisApi, from: ShardPosition, to: ShardPosition, fail: Boolean = true): Seq[String] =
    new ShardRangeIterator(api, "s", "shard-0", from, to, Nil, limits, DataLossPolicy(fail), ShardRangeIterator.Records).map(_.sequenceNumber).toSeq

  private def seqs(range: Range): Seq[String] = range.map(i => (100 + i * 10).toString)

  test("reads exactly (from, to] across several GetRecords pages") {
    val api = new FakeKinesisApi(); api.add("shard-0", 20)
    assert(read(api, TrimHorizon, AfterRecord("190")) == seqs(0 to 9))
    assert(read(api, AfterRecord("190"), AfterRecord("250")) == seqs(10 to 15))
  }

  test("an end inside a record is compared on the sub-sequence number too") {
    val api = new FakeKinesisApi(); api.add("shard-0", 5)
    assert(read(api, TrimHorizon, AfterRecord("120")) == seqs(0 to 2))
    // A whole record sorts after its sub-records, so an end at sub-record 0 of 120 does not include all of 120.
    assert(read(api, TrimHorizon, AfterRecord("120", Some(0L))) == seqs(0 to 1))
  }

  test("reads a closed shard to its end") {
    val api = new FakeKinesisApi(); api.add("shard-0", 7); api.closed += "shard-0"
    assert(read(api, AfterRecord("120"), Finished) == seqs(3 to 6))
  }

  test("a range whose end record can no longer be reached is data loss, by policy") {
    val api = new FakeKinesisApi(); api.add("shard-0", 3); api.closed += "shard-0"
    val e = intercept[KinesisSparkException](read(api, TrimHorizon, AfterRecord("500")))
    assert(e.getMessage.contains("shard-0") && e.getMessage.contains("failOnDataLoss"))
    assert(read(api, TrimHorizon, AfterRecord("500"), fail = false) == seqs(0 to 2))
  }

  test("an empty range reads nothing and makes no calls") {
    val api = new FakeKinesisApi(); api.add("shard-0", 3)
    assert(read(api, AfterRecord("120"), AfterRecord("120")).isEmpty)
    assert(api.getRecordsCalls == 0)
  }
}
