package io.kinesisspark.sink

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.aws.{HashKeyRange, ShardInfo}
import io.kinesisspark.kpl.{KplAggregate, KplDecoded, UserRecord}

class KplAggregatorSuite extends AnyFunSuite {
  private val space = UserRecord.HashKeySpace
  /** Four shards splitting the hash key space evenly. */
  private val shards = (0 until 4).map(i => ShardInfo(s"shard-$i", Nil, closed = false,
    Some(HashKeyRange(space * i / 4, space * (i + 1) / 4 - 1))))
  private val map = ShardMap(shards :+ ShardInfo("closed", Nil, closed = true, Some(HashKeyRange(0, space - 1))))

  private def aggregator(maxBytes: Int = 51200): (KplAggregator, mutable.ArrayBuffer[SinkEntry]) = {
    val out = mutable.ArrayBuffer.empty[SinkEntry]
    (new KplAggregator(_ => map, AggregateFill.fixed(maxBytes), out += _), out)
  }

  private def userRecords(e: SinkEntry): Seq[UserRecord] = KplAggregate.decode(e.put.data) match {
    case KplDecoded.Aggregated(rs) => rs
    case KplDecoded.NotAggregated => Seq(UserRecord(e.put.partitionKey, e.put.explicitHashKey, e.put.data))
    case other => fail(s"$other")
  }

  test("the shard map finds the open shard of a hash key") {
    assert(map.shardCount == 4)
    assert(map.shardFor(0) == "shard-0" && map.shardFor(space / 4 - 1) == "shard-0" && map.shardFor(space / 4) == "shard-1")
    assert(map.shardFor(space - 1) == "shard-3")
  }

  test("rows of one shard share an aggregate, whose keys place it in that shard") {
    val (a, out) = aggregator()
    val rows = (1 to 400).map(i => UserRecord(s"key-$i", None, s"row-$i".getBytes(UTF_8)))
    rows.foreach(a.add("s", _))
    assert(out.isEmpty) // nothing is full yet
    a.flush()
    assert(out.size == 4 && out.forall(_.aggregated) && out.map(_.userRecords).sum == 400)
    out.foreach { e =>
      val shard = e.predictedShard.get
      val placedBy = UserRecord(e.put.partitionKey, e.put.explicitHashKey, e.put.data).effectiveHashKey.get
      assert(map.shardFor(placedBy) == shard && e.orderKey == shard)
      val inside = userRecords(e)
      assert(inside.forall(r => map.shardFor(r.effectiveHashKey.get) == shard))
      assert(e.put.partitionKey == inside.head.partitionKey)
      assert(e.userBytes == inside.map(r => r.data.length + r.partitionKey.length).sum)
    }
    // Every row once, and in the order added within its shard.
    val back = out.flatMap(userRecords).map(r => new String(r.data, UTF_8))
    assert(back.sorted == rows.map(r => new String(r.data, UTF_8)).sorted)
    out.foreach(e => assert(userRecords(e).map(_.partitionKey.drop(4).toInt) == userRecords(e).map(_.partitionKey.drop(4).toInt).sorted))
  }

  test("explicit hash keys place rows, inside and outside the aggregate") {
    val (a, out) = aggregator()
    val hashKey = (space * 3 / 4 + 5).toString
    a.add("s", UserRecord("x", Some(hashKey), "1".getBytes(UTF_8)))
    a.add("s", UserRecord("y", Some(hashKey), "2".getBytes(UTF_8)))
    a.flush()
    assert(out.size == 1 && out.head.predictedShard.contains("shard-3") && out.head.put.explicitHashKey.contains(hashKey))
    assert(userRecords(out.head).map(_.explicitHashKey) == Seq(Some(hashKey), Some(hashKey)))
  }

  test("an aggregate never outgrows maxBytes, counting its partition key") {
    val (a, out) = aggregator(maxBytes = 2000)
    val key = "same-key" // one key: one shard
    (1 to 100).foreach(i => a.add("s", UserRecord(key, None, Array.fill(90)(i.toByte))))
    a.flush()
    assert(out.size > 1)
    assert(out.forall(e => e.put.data.length + e.put.partitionKey.length <= 2000), out.map(_.size))
    assert(out.init.forall(e => e.put.data.length + key.length > 2000 - 120)) // closed when the next row would not fit
    assert(out.flatMap(userRecords).map(_.data.head.toInt) == (1 to 100))
  }

  test("a lone row, or one too large to share, is put as a plain record, after the rows before it") {
    val (a, out) = aggregator(maxBytes = 2000)
    a.add("s", UserRecord("k", None, "small".getBytes(UTF_8)))
    a.add("s", UserRecord("k", None, Array.fill(1995)(1.toByte)))
    a.add("s", UserRecord("k", None, "after".getBytes(UTF_8)))
    a.flush()
    assert(out.map(e => (e.aggregated, e.userRecords, e.put.data.length)) == Seq((false, 1, 5), (false, 1, 1995), (false, 1, 5)))
    assert(out.forall(e => KplAggregate.decode(e.put.data) == KplDecoded.NotAggregated))
  }

  test("open aggregates are closed once together they hold a call's worth") {
    val (a, out) = aggregator(maxBytes = 1024 * 1024)
    (1 to 60).foreach(i => a.add("s", UserRecord(s"k$i", None, Array.fill(100 * 1024)(0.toByte))))
    assert(out.nonEmpty && out.map(_.size.toLong).sum <= 60L * 101 * 1024)
    a.flush()
    assert(out.map(_.userRecords).sum == 60)
  }

  test("streams aggregate apart") {
    val (a, out) = aggregator()
    a.add("one", UserRecord("k", None, "1".getBytes(UTF_8)))
    a.add("two", UserRecord("k", None, "2".getBytes(UTF_8)))
    a.add("one", UserRecord("k", None, "3".getBytes(UTF_8)))
    a.flush()
    assert(out.map(e => (e.stream, e.userRecords)).toSet == Set(("one", 2), ("two", 1)))
  }
}
