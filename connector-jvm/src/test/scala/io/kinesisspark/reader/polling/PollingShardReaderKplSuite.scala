package io.kinesisspark.reader.polling

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.DataLossPolicy
import io.kinesisspark.ShardPosition._
import io.kinesisspark.aws.HashKeyRange
import io.kinesisspark.kpl.{KplAggregateBuilder, UserRecord}
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.blocks.KinesisRecord
import io.kinesisspark.executor.ShardRangeIterator
import io.kinesisspark.reader.FetchLimits

/** KPL aggregates through the shard reader and the re-read path: user records out, each exactly once. */
class PollingShardReaderKplSuite extends AnyFunSuite {
  private val limits = FetchLimits(100, minFetchPeriodMs = 0)

  private def users(prefix: String, n: Int): Seq[UserRecord] =
    (0 until n).map(i => UserRecord(s"$prefix-key-$i", None, s"$prefix-$i".getBytes(UTF_8)))

  /** What a record looks like to a test: (partition key, data, sequence number, sub-sequence number). */
  private def view(r: KinesisRecord): (String, String, String, Option[Long]) =
    (r.partitionKey, new String(r.data, UTF_8), r.sequenceNumber, r.subSequenceNumber)

  private def readAll(reader: PollingShardReader): Seq[KinesisRecord] = {
    val out = Seq.newBuilder[KinesisRecord]
    var batch = reader.next()
    out ++= batch.records
    while (!batch.caughtUp) { batch = reader.next(); out ++= batch.records }
    out.result()
  }

  /** plain, an aggregate of 5, plain, an aggregate of 3: returns the shard and what reading it must give. */
  private def mixedShard(): (FakeKinesisApi, Seq[(String, String, String, Option[Long])]) = {
    val api = new FakeKinesisApi()
    val s1 = api.put("shard-0", "plain-a", "plain a".getBytes(UTF_8))
    val s2 = api.put("shard-0", "outer-1", KplAggregateBuilder.encode(users("agg1", 5)))
    val s3 = api.put("shard-0", "plain-b", "plain b".getBytes(UTF_8))
    val s4 = api.put("shard-0", "outer-2", KplAggregateBuilder.encode(users("agg2", 3)))
    val expected = Seq(("plain-a", "plain a", s1, None)) ++
      (0 until 5).map(i => (s"agg1-key-$i", s"agg1-$i", s2, Some(i.toLong))) ++
      Seq(("plain-b", "plain b", s3, None)) ++
      (0 until 3).map(i => (s"agg2-key-$i", s"agg2-$i", s4, Some(i.toLong)))
    (api, expected)
  }

  test("aggregates become their user records, in order, sharing the sequence number; plain records stay whole") {
    val (api, expected) = mixedShard()
    val reader = new PollingShardReader(api, "s", "shard-0", TrimHorizon, limits)
    val batch = reader.next()
    assert(batch.records.map(view) == expected)
    assert(reader.position == AfterRecord(expected.last._3, Some(2L)))
    // Rate limits count what Kinesis sent: the aggregates, not the user records.
    assert(batch.bytes == api.shards("shard-0").map(_.data.length.toLong).sum)
    assert(reader.counters.corruptAggregates == 0 && reader.counters.outOfRangeSubRecords == 0)
  }

  test("resuming from any position, inside an aggregate or not, returns exactly the records after it") {
    val (api, expected) = mixedShard()
    val all = readAll(new PollingShardReader(api, "s", "shard-0", TrimHorizon, limits))
    all.indices.foreach { k =>
      val resumed = readAll(new PollingShardReader(api, "s", "shard-0", all(k).position, limits))
      assert((all.take(k + 1) ++ resumed).map(view) == expected, s"resumed after ${all(k).position}")
    }
  }

  test("a batch boundary inside an aggregate: each user record once across the two readers") {
    val api = new FakeKinesisApi()
    val seq = api.put("shard-0", "outer", KplAggregateBuilder.encode(users("a", 10)))
    // The first batch ended after user record 3 of the aggregate; the next starts at its sequence number.
    val second = readAll(new PollingShardReader(api, "s", "shard-0", AfterRecord(seq, Some(3L)), limits))
    assert(second.map(view) == (4 until 10).map(i => (s"a-key-$i", s"a-$i", seq, Some(i.toLong))))
  }

  test("an iterator that expires after an aggregate is renewed without repeating its user records") {
    val api = new FakeKinesisApi()
    val seq1 = api.put("shard-0", "outer", KplAggregateBuilder.encode(users("a", 4)))
    val seq2 = api.put("shard-0", "plain", "p".getBytes(UTF_8))
    val reader = new PollingShardReader(api, "s", "shard-0", TrimHorizon, FetchLimits(1, minFetchPeriodMs = 0))
    val first = reader.next().records
    api.expireNext = 1
    val second = readAll(reader)
    assert((first ++ second).map(r => (r.sequenceNumber, r.subSequenceNumber)) ==
      (0 until 4).map(i => (seq1, Some(i.toLong))) :+ ((seq2, None)))
  }

  test("user records outside the shard's hash key range are returned and counted") {
    val lowerHalf = HashKeyRange(BigInt(0), (BigInt(1) << 127) - 1)
    val inRange = Seq("0", ((BigInt(1) << 127) - 1).toString)
    val outOfRange = Seq((BigInt(1) << 127).toString, ((BigInt(1) << 128) - 1).toString, "not-a-number")
    // Keys whose MD5 (read as an unsigned number) falls in the upper half, found the way Kinesis hashes them.
    val upperKeys = Iterator.from(0).map(i => s"k$i")
      .filter(k => UserRecord(k, None, Array.emptyByteArray).effectiveHashKey.exists(_ >= (BigInt(1) << 127))).take(2).toSeq
    val records = inRange.map(h => UserRecord("x", Some(h), "in".getBytes(UTF_8))) ++
      outOfRange.map(h => UserRecord("x", Some(h), "out".getBytes(UTF_8))) ++
      upperKeys.map(k => UserRecord(k, None, "out".getBytes(UTF_8)))
    val api = new FakeKinesisApi()
    val seq = api.put("shard-0", "outer", KplAggregateBuilder.encode(records))

    val checked = new PollingShardReader(api, "s", "shard-0", TrimHorizon, limits, hashKeyRange = Some(lowerHalf))
    val delivered = readAll(checked)
    assert(delivered.map(r => (new String(r.data, UTF_8), r.subSequenceNumber)) ==
      records.zipWithIndex.map { case (r, i) => (new String(r.data, UTF_8), Some(i.toLong)) })
    assert(checked.counters.outOfRangeSubRecords == 5)

    // Resuming inside the aggregate counts only what is returned again.
    val resumed = new PollingShardReader(api, "s", "shard-0", AfterRecord(seq, Some(3L)), limits,
      hashKeyRange = Some(lowerHalf))
    assert(readAll(resumed).size == records.size - 4 && resumed.counters.outOfRangeSubRecords == 3)

    // Without a range (the re-read path) the same records come back, unchecked.
    val unchecked = new PollingShardReader(api, "s", "shard-0", TrimHorizon, limits)
    assert(readAll(unchecked).map(view) == delivered.map(view) && unchecked.counters.outOfRangeSubRecords == 0)
  }

  test("a corrupt aggregate is returned once, raw, counted; the records around it are unaffected") {
    val api = new FakeKinesisApi()
    val good = KplAggregateBuilder.encode(users("a", 2))
    val corrupt = good.clone(); corrupt(corrupt.length - 1) = (corrupt(corrupt.length - 1) ^ 0x55).toByte
    val before = api.put("shard-0", "outer-1", good)
    val bad = api.put("shard-0", "outer-2", corrupt)
    val after = api.put("shard-0", "plain", "p".getBytes(UTF_8))
    val reader = new PollingShardReader(api, "s", "shard-0", TrimHorizon, FetchLimits(1, minFetchPeriodMs = 0))
    val all = readAll(reader)
    assert(all.map(r => (r.sequenceNumber, r.subSequenceNumber)) == Seq((before, Some(0L)), (before, Some(1L)), (bad, None), (after, None)))
    val raw = all(2)
    assert(raw.data.sameElements(corrupt) && raw.partitionKey == "outer-2")
    assert(reader.counters.corruptAggregates == 1)
    // Resuming right after it does not return (or count) it again.
    val resumed = new PollingShardReader(api, "s", "shard-0", raw.position, limits)
    assert(readAll(resumed).map(_.sequenceNumber) == Seq(after) && resumed.counters.corruptAggregates == 0)
  }

  test("the re-read path returns exactly the user records in (from, to], ends inside aggregates included") {
    val (api, expected) = mixedShard()
    val all = readAll(new PollingShardReader(api, "s", "shard-0", TrimHorizon, limits))
    for (from <- Seq(2, 5, 6); to <- Seq(3, 6, 9) if to >= from) {
      val range = new ShardRangeIterator(api, "s", "shard-0", all(from).position, all(to).position, Nil,
        FetchLimits(2, minFetchPeriodMs = 0), DataLossPolicy(failOnDataLoss = true), ShardRangeIterator.Records).toSeq
      assert(range.map(view) == expected.slice(from + 1, to + 1), s"($from, $to]")
    }
  }
}
