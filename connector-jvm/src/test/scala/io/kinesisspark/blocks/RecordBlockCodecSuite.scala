package io.kinesisspark.blocks

import java.nio.ByteBuffer

import org.scalatest.funsuite.AnyFunSuite
import io.kinesisspark.reader.Deaggregator

class RecordBlockCodecSuite extends AnyFunSuite {
  test("records survive a round trip, including binary data, empty data, sub-sequence numbers and unicode keys") {
    val records = Seq(
      KinesisRecord("k1", Array[Byte](0, -1, 127, -128), "4959", None, 1700000000123L),
      KinesisRecord("ключ-✓", Array.emptyByteArray, "4960", Some(0L), 0L),
      KinesisRecord("k3", Array.fill(100000)(7.toByte), "4960", Some(41L), Long.MaxValue))
    val decoded = RecordBlockCodec.decode(RecordBlockCodec.encode(records)).toSeq
    assert(decoded.size == 3)
    decoded.zip(records).foreach { case (d, r) =>
      assert(d.partitionKey == r.partitionKey && d.data.sameElements(r.data) && d.sequenceNumber == r.sequenceNumber &&
        d.subSequenceNumber == r.subSequenceNumber && d.approximateArrivalMillis == r.approximateArrivalMillis)
    }
  }

  test("a writer fed record by record makes the bytes encode makes, trimmed to size however far it grew") {
    val records = Seq(
      KinesisRecord("k1", Array[Byte](0, -1, 127, -128), "4959", None, 1700000000123L),
      KinesisRecord("ключ-✓-\uD83D\uDE00", Array.emptyByteArray, "4960", Some(0L), 0L),
      KinesisRecord("k3", Array.fill(100000)(7.toByte), "4960", Some(41L), Long.MaxValue))
    for (hint <- Seq(0, 16, 1 << 20)) {
      val writer = new RecordBlockCodec.Writer(hint)
      assert(writer.lastPosition.isEmpty && writer.count == 0)
      records.foreach(r => writer.add(r.partitionKey, r.data, r.sequenceNumber, r.subSequenceNumber.isDefined,
        r.subSequenceNumber.getOrElse(-5L), r.approximateArrivalMillis))
      assert(writer.count == 3 && writer.lastPosition.contains(records.last.position))
      assert(writer.firstArrivalMillis == 1700000000123L && writer.lastArrivalMillis == Long.MaxValue)
      val segment = writer.result()
      val encoded = RecordBlockCodec.encode(records)
      assert(segment == encoded, s"size hint $hint")
      assert(segment.position() == 0 && segment.capacity() == encoded.capacity(), "exactly the records' size")
    }
    val empty = new RecordBlockCodec.Writer(64).result()
    assert(empty == RecordBlockCodec.encode(Nil) && RecordBlockCodec.decode(empty).isEmpty)
    // Both shard readers take their writer from their de-aggregator, which names the shard in what it refuses.
    val bad = new Deaggregator("clicks", "shardId-000000000007", None).writerFor(Nil)
    bad.add("k", Array.emptyByteArray, "12a", hasSub = false, 0L, 0L)
    val refused = intercept[IllegalArgumentException](bad.result()).getMessage
    assert(refused.startsWith("stream 'clicks', shardId-000000000007: not a Kinesis sequence number: '12a'"), refused)
    val done = new RecordBlockCodec.Writer(64)
    done.result()
    assert(intercept[IllegalArgumentException](done.result()).getMessage.contains("one result"))
    assert(intercept[IllegalArgumentException](done.add("k", Array.emptyByteArray, "1", hasSub = false, 0L, 0L))
      .getMessage.contains("no record after its result"))
  }

  test("a block is exactly as large as its records, whatever their keys' alphabet") {
    val ascii = KinesisRecord("key", Array[Byte](1, 2, 3), "49590000000000000000000000000000000000000000000000000001", None, 1L)
    val wide = ascii.copy(partitionKey = "ключ-✓-\uD83D\uDE00") // 2-, 3- and 4-byte UTF-8
    for (records <- Seq(Nil, Seq(ascii), Seq(ascii, wide, ascii.copy(subSequenceNumber = Some(7L))))) {
      val block = RecordBlockCodec.encode(records)
      val expected = 9 + records.map(r => 4 + r.partitionKey.getBytes("UTF-8").length + 4 + r.data.length + 4 +
        r.sequenceNumber.length + 1 + r.subSequenceNumber.fold(0)(_ => 8) + 8).sum
      assert(block.position() == 0 && block.limit() == expected && block.capacity() == expected)
      assert(RecordBlockCodec.decode(block).map(_.partitionKey).toSeq == records.map(_.partitionKey))
      assert(block.position() == 0, "decoding leaves the stored buffer as it was")
    }
  }

  test("a response whose first or last sequence number is not decimal digits is refused, not written wrong") {
    val good = KinesisRecord("k", Array[Byte](1), "0123456789", None, 1L)
    assert(RecordBlockCodec.decode(RecordBlockCodec.encode(Seq(good))).next().sequenceNumber == "0123456789")
    // '/' and ':' lie either side of the digits; U+0673 and U+4E2D keep a non-digit low byte, U+0130 a digit one.
    for (bad <- Seq("4959/1", "4959:", "49a5", "-1", "4959\u0673", "49\u4e2d", "49\u0130", " 1", "");
         records <- Seq(Seq(good, good.copy(sequenceNumber = bad)), Seq(good.copy(sequenceNumber = bad), good))) {
      val message = intercept[IllegalArgumentException](RecordBlockCodec.encode(records)).getMessage
      assert(message.contains(s"not a Kinesis sequence number: '$bad'"), message)
    }
  }

  test("a block read from a slice of a larger buffer") {
    val records = Seq(KinesisRecord("k", Array[Byte](9), "1", None, 5L))
    val encoded = RecordBlockCodec.encode(records)
    val padded = ByteBuffer.allocate(encoded.limit() + 10)
    padded.position(7)
    padded.put(encoded.duplicate())
    padded.position(7)
    val slice = padded.slice()
    assert(RecordBlockCodec.decode(slice).map(r => (r.partitionKey, r.data.toSeq)).toSeq == Seq(("k", Seq[Byte](9))))
  }

  test("a range's segment is found in a block's chunks, whether stored one per segment or received as one buffer") {
    val segments = Seq(Seq(KinesisRecord("a", Array[Byte](1), "1", None, 5L), KinesisRecord("b", Array[Byte](2), "2", Some(3L), 6L)),
      Seq(KinesisRecord("c", Array[Byte](3), "3", None, 7L))).map(RecordBlockCodec.encode(_))
    val joined = ByteBuffer.allocate(segments.map(_.remaining()).sum)
    segments.foreach(c => joined.put(c.duplicate()))
    joined.flip()
    val (first, second) = (segments.head.remaining(), segments(1).remaining())
    for (chunks <- Seq(segments, Seq(joined))) {
      assert(RecordBlockCodec.decode(RecordBlockCodec.segment(chunks, 0, first)).map(_.partitionKey).toSeq == Seq("a", "b"))
      assert(RecordBlockCodec.decode(RecordBlockCodec.segment(chunks, first, second)).map(_.partitionKey).toSeq == Seq("c"))
    }
    // Chunks of another size (a block read back from disk): a segment across two of them is copied out whole.
    val halves = Seq({ val b = joined.duplicate(); b.limit(first / 2); b }, { val b = joined.duplicate(); b.position(first / 2); b.slice() })
    assert(RecordBlockCodec.decode(RecordBlockCodec.segment(halves, 0, first)).map(_.partitionKey).toSeq == Seq("a", "b"))
    assert(RecordBlockCodec.decode(RecordBlockCodec.segment(halves, first, second)).map(_.partitionKey).toSeq == Seq("c"))
    val e = intercept[IllegalArgumentException](RecordBlockCodec.segment(segments, first, second + 1))
    assert(e.getMessage.contains("damaged"), e.getMessage)
  }

  test("bytes that are not a block are refused") {
    intercept[IllegalArgumentException](RecordBlockCodec.decode(ByteBuffer.wrap(Array[Byte](1, 2, 3, 4, 5))).toSeq)
    intercept[IllegalArgumentException](RecordBlockCodec.decode(ByteBuffer.wrap(Array[Byte](1, 2))).toSeq)
    // A block whose first length was damaged: negative, then beyond the block's end.
    for (damaged <- Seq(-5, 1000)) {
      val block = RecordBlockCodec.encode(Seq(KinesisRecord("k", Array[Byte](1), "1", None, 0L)))
      block.putInt(9, damaged)
      val e = intercept[IllegalArgumentException](RecordBlockCodec.decode(block).toSeq)
      assert(e.getMessage.contains(s"a length of $damaged"), e.getMessage)
    }
  }
}
