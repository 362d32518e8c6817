package io.kinesisspark.fetch

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

/**
 * The bytes of one prefetched block: the records of one shard, in order. A small hand-rolled format (not Java
 * or Kryo serialization) because blocks are written and read on every batch and must stay compact and
 * independent of the serializer Spark is configured with.
 *
 * Layout (big-endian): magic (int), version (byte), count (int), then per record: partition key (length, UTF-8
 * bytes), data (length, bytes), sequence number (length, UTF-8 bytes), sub-sequence flag (byte) [+ long], arrival
 * millis (long).
 *
 * Encoding and decoding were half of the read path's CPU (ReadPathBenchmark, issue 17) with DataOutputStream's
 * writeUTF, a synchronized stream and a copy of every block on each side. Version 2 writes straight into one heap
 * buffer of the block's exact size (stored as is, never copied) and reads from the stored buffer.
 * Blocks never outlive the query that wrote them, so no older version needs reading.
 *
 * {{{
 *   val block: ByteBuffer = RecordBlockCodec.encode(records)
 *   RecordBlockCodec.decode(block).foreach(println)
 * }}}
 */
object RecordBlockCodec {
  private val Magic = 0x4b534231 // "KSB1"
  private val FormatVersion: Byte = 2
  private val HeaderBytes = 4 + 1 + 4
  // Lengths of the three variable parts, sub-sequence flag, arrival time (and a sub-sequence number if there is one).
  private val FixedBytesPerRecord = 4 * 3 + 1 + 8

  /** The records as one block: a heap buffer positioned at 0 whose limit is the block's end. */
  def encode(records: Seq[KinesisRecord]): ByteBuffer = {
    var size = HeaderBytes.toLong
    records.foreach { r =>
      size += FixedBytesPerRecord + r.data.length + utf8Length(r.partitionKey) + utf8Length(r.sequenceNumber) +
        (if (r.subSequenceNumber.isDefined) 8 else 0)
    }
    require(size <= Int.MaxValue, s"a block of ${records.size} records would take over 2 GB ($size bytes)")
    val out = ByteBuffer.allocate(size.toInt)
    out.putInt(Magic).put(FormatVersion).putInt(records.size)
    records.foreach { r =>
      putString(out, r.partitionKey)
      out.putInt(r.data.length).put(r.data)
      putString(out, r.sequenceNumber)
      r.subSequenceNumber match {
        case Some(sub) => out.put(1.toByte).putLong(sub)
        case None      => out.put(0.toByte)
      }
      out.putLong(r.approximateArrivalMillis)
    }
    assert(!out.hasRemaining, s"a block was sized ${out.capacity()} bytes but ${out.position()} were written")
    out.flip()
    out
  }

  /** The records of a block, read lazily from `block` (which is not modified). */
  def decode(block: ByteBuffer): Iterator[KinesisRecord] = {
    val in = block.duplicate()
    require(in.remaining() >= HeaderBytes, s"not a kinesis-spark record block (${in.remaining()} bytes)")
    val magic = in.getInt()
    val version = in.get()
    require(magic == Magic && version == FormatVersion, s"not a kinesis-spark record block (magic $magic, version $version)")
    val count = in.getInt()
    Iterator.tabulate(count) { _ =>
      val key = getString(in)
      val data = new Array[Byte](in.getInt())
      in.get(data)
      val seq = getString(in)
      val sub = if (in.get() == 1) Some(in.getLong()) else None
      KinesisRecord(key, data, seq, sub, in.getLong())
    }
  }

  /** The length of `s` in UTF-8: its length when all ASCII, as partition keys usually are and sequence numbers are. */
  private def utf8Length(s: String): Int = {
    var i = 0
    while (i < s.length && s.charAt(i) < 0x80) i += 1
    if (i == s.length) s.length else s.getBytes(UTF_8).length
  }

  /** Length, then UTF-8 bytes: ASCII copied char by char. */
  private def putString(out: ByteBuffer, s: String): Unit = {
    val lengthAt = out.position()
    val array = out.array()
    var at = lengthAt + 4
    var i = 0
    while (i < s.length && s.charAt(i) < 0x80) {
      array(at) = s.charAt(i).toByte
      at += 1
      i += 1
    }
    if (i < s.length) {
      out.position(lengthAt + 4)
      out.put(s.getBytes(UTF_8))
    } else out.position(at)
    out.putInt(lengthAt, out.position() - lengthAt - 4)
  }

  private def getString(in: ByteBuffer): String = {
    val length = in.getInt()
    val s = if (in.hasArray) new String(in.array(), in.arrayOffset() + in.position(), length, UTF_8)
      else { val bytes = new Array[Byte](length); in.duplicate().get(bytes); new String(bytes, UTF_8) }
    in.position(in.position() + length)
    s
  }
}
