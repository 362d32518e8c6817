package io.kinesisspark.blocks

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{DataLossPolicy, KinesisInputPartition, KinesisRecordSchema, RecordLayout, ShardSlice}
import io.kinesisspark.ShardPosition.{AfterRecord, AtTimestamp, Finished, TrimHorizon}
import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig, HashKeyRange}
import io.kinesisspark.executor.{FetchTicket, ShardFetchOrder, ShardFetchTask}
import io.kinesisspark.reader.FetchLimits

/** What crosses between driver and executors in bulk: as Java serialization sends it, and back. */
class WireFormatSuite extends AnyFunSuite {
  private val connection = AwsConnection("us-east-1", None, AwsCredentialsConfig.DefaultChain)
  private def seq(i: Int) = f"4959033827149025660855969253836157109592157598913$i%07d"

  private def javaRoundTrip[T](value: T): (T, Int) = {
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(value)
    out.close()
    (new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject().asInstanceOf[T], bytes.size())
  }

  /** A shard's slice as a batch plans it: two ranges of one block, each starting where the one before ended. */
  private def slice(i: Int): ShardSlice = {
    val shard = f"shardId-$i%012d"
    val ranges = Seq(
      FetchedRange("clicks", shard, AfterRecord(seq(i)), AfterRecord(seq(i + 1)),
        Some(BlockRef(3, i.toLong << 24, "executor_host-1_1", 0, 190, last = false)), 1, 190L, 1700000000000L,
        1700000000000L),
      FetchedRange("clicks", shard, AfterRecord(seq(i + 1)), AfterRecord(seq(i + 2), Some(4L)),
        Some(BlockRef(3, i.toLong << 24, "executor_host-1_1", 190, 380, last = true)), 2, 380L, 1700000000001L,
        1700000000002L))
    ShardSlice("clicks", shard, ranges.head.from, ranges.last.to, ranges)
  }

  test("a batch's partition crosses Java serialization unchanged, in well under a Java-serialized slice's size") {
    val odd = Seq(
      ShardSlice("clicks", "shardId-é", TrimHorizon, Finished, Seq(
        FetchedRange("clicks", "shardId-é", TrimHorizon, AfterRecord("1", Some(-1L)), None, 1, 1L),
        FetchedRange("clicks", "shardId-é", AfterRecord("1", Some(-1L)), Finished, None, 0, 0L))),
      ShardSlice("views", "shardId-000000000001", AtTimestamp(1700000000000L), AtTimestamp(1700000000000L), Nil))
    val slices = (0 until 1000).map(slice) ++ odd
    val partition = KinesisInputPartition(connection, slices, FetchLimits(10000), failOnDataLoss = false,
      KinesisRecordSchema(RecordLayout.Databricks, subSequenceNumber = true))
    val (back, size) = javaRoundTrip(partition)
    assert(back == partition)
    val (_, javaSize) = javaRoundTrip(slices.toVector) // the slices as Java serialization writes the case classes
    assert(size < javaSize / 2, s"$size bytes for ${slices.size} slices, against $javaSize")
  }

  test("a prefetch ticket's orders cross Java serialization unchanged, every field set and unset") {
    val orders = Seq(
      ShardFetchOrder("clicks", "shardId-000000000000", TrimHorizon, 1L),
      ShardFetchOrder("clicks", "shardId-000000000001", AfterRecord(seq(1), Some(3L)), 2L, Some(1600000000000L),
        Some(HashKeyRange(BigInt(0), BigInt(2).pow(128) - 1)),
        Some("arn:aws:kinesis:us-east-1:1:stream/c/consumer/x:1"), shardClosed = true,
        retentionMillis = Some(86400000L)),
      ShardFetchOrder("views", "shardId-000000000001", AtTimestamp(1700000000000L), 3L),
      ShardFetchOrder("views", "shardId-000000000002", AtTimestamp(1700000000000L), 4L,
        consumerArn = Some("arn:aws:kinesis:us-east-1:1:stream/c/consumer/x:1")))
    val task = ShardFetchTask(connection, FetchLimits(500, minFetchPeriodMs = 250), 7, orders, maxBytes = 1L << 30,
      DataLossPolicy(failOnDataLoss = false), Some(3), Some(1700000000005L))
    val ticket = FetchTicket("spark://driver:7077", 9L, task)
    assert(javaRoundTrip(ticket)._1 == ticket)
    assert(javaRoundTrip(task.copy(orders = Nil))._1 == task.copy(orders = Nil))
    // Sent as bytes, not as the case classes: a round's orders take well under what Java serialization makes of them.
    val many = (0 until 1000).map(i => ShardFetchOrder("clicks", f"shardId-$i%012d", AfterRecord(seq(i)), i.toLong))
    val (back, size) = javaRoundTrip(task.copy(orders = many))
    assert(back.orders == many)
    val (_, javaSize) = javaRoundTrip(many.toVector)
    assert(size < javaSize / 2, s"$size bytes for ${many.size} orders, against $javaSize")
  }

  test("positions and strings that repeat, or nearly, come back as they were") {
    val positions = Seq(
      AfterRecord(seq(1)), TrimHorizon, AfterRecord(seq(2)), // the prefix is shared across another kind of position
      AfterRecord(seq(2)), // the same as the last: one byte
      AfterRecord(seq(2), Some(3L)), // all digits shared, but not the same position
      AtTimestamp(1700000000000L), AtTimestamp(1700000000000L), Finished, Finished,
      AfterRecord("1"), AfterRecord("10"), AfterRecord("0"), AfterRecord(seq(2) + "0"), AfterRecord(seq(2)))
    val texts = Seq("clicks", "shardId-é", "clicks", "", "", "shardId-é")
    val bytes = WireFormat.encode(16) { wire =>
      positions.foreach(wire.position)
      texts.foreach(wire.text)
    }
    val back = WireFormat.decode(bytes, "test") { wire =>
      (positions.map(_ => wire.position()), texts.map(_ => wire.text()))
    }
    assert(back == (positions, texts))
  }

  test("a slice bounded inside its ranges, or with no range, keeps its bounds; an empty partition is empty") {
    // Its from is the last range's to, the position written just before it: the same-as-last tag, across a boundary.
    val inside = slice(1).copy(from = slice(1).ranges.last.to, to = AfterRecord(seq(2)))
    val empty = ShardSlice("clicks", "shardId-000000000009", AfterRecord(seq(9)), AfterRecord(seq(9)), Nil)
    assert(KinesisInputPartition.decode(KinesisInputPartition.encode(Seq(inside, empty, slice(2)))) ==
      Seq(inside, empty, slice(2)))
    assert(KinesisInputPartition.decode(KinesisInputPartition.encode(Nil)) == Nil)
  }

  test("damaged or cut bytes are refused with what was found, not read out of place") {
    val whole = KinesisInputPartition.encode(Seq(slice(1)))
    val cut = intercept[IllegalArgumentException](KinesisInputPartition.decode(whole.take(whole.length - 3)))
    assert(cut.getMessage.contains("a damaged kinesis-spark input partition: cut short"), cut.getMessage)
    val extra = intercept[IllegalArgumentException](KinesisInputPartition.decode(whole :+ 0.toByte))
    assert(extra.getMessage.contains("1 bytes left over"), extra.getMessage)
    // The first string of the first slice refers to string number 5, when none was written yet.
    val badString = whole.clone()
    badString(4) = 6
    val refused = intercept[IllegalArgumentException](KinesisInputPartition.decode(badString))
    assert(refused.getMessage.contains("string number 5 of 0"), refused.getMessage)
    val orders = ShardFetchTask.encode(Seq(ShardFetchOrder("clicks", "shardId-000000000000", Finished, 1L)))
    val badTag = orders.clone()
    badTag(4 + 1 + 2 + 6 + 1 + 2 + 20) = 9 // the position's tag, after the count and two new strings
    val tag = intercept[IllegalArgumentException](ShardFetchTask.decode(badTag))
    assert(tag.getMessage == "a damaged kinesis-spark prefetch ticket: position tag 9", tag.getMessage)
    badTag(36) = 4 // the same as the last position, with none before it
    val same = intercept[IllegalArgumentException](ShardFetchTask.decode(badTag))
    assert(same.getMessage.contains("a position the same as the last, with none before it"), same.getMessage)
    // A slice with no range, whose from says it is its first range's.
    val bounded = KinesisInputPartition.encode(Seq(ShardSlice("s", "shard", TrimHorizon, Finished, Nil)))
    bounded(4 + 1 + 2 + 1 + 1 + 2 + 5 + 4) = 1
    val noRange = intercept[IllegalArgumentException](KinesisInputPartition.decode(bounded))
    assert(noRange.getMessage.contains("a slice of shard bounded by a range it does not have"), noRange.getMessage)
    val absurd = whole.clone()
    Seq(0, 1, 2).foreach(absurd(_) = 0x7f) // a count of slices far beyond the bytes
    val count = intercept[IllegalArgumentException](KinesisInputPartition.decode(absurd))
    assert(count.getMessage.contains(s"with ${whole.length - 4} bytes left"), count.getMessage)
    val malformed = ShardFetchTask.encode(Seq(ShardFetchOrder("clicks", "shardId-000000000000", Finished, 1L,
      hashKeyRange = Some(HashKeyRange(BigInt(1), BigInt(2))))))
    malformed(malformed.length - 7) = 'x' // the hash key range's start, "1", is no longer a number
    val number = intercept[IllegalArgumentException](ShardFetchTask.decode(malformed))
    assert(number.getMessage.contains("NumberFormatException"), number.getMessage)
  }
}
