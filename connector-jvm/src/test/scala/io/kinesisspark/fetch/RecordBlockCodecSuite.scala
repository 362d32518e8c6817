package io.kinesisspark.fetch

import org.scalatest.funsuite.AnyFunSuite

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

  test("bytes that are not a block are refused") {
    intercept[IllegalArgumentException](RecordBlockCodec.decode(Array[Byte](1, 2, 3, 4, 5)).toSeq)
  }
}
