package io.kinesisspark.fetch

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import scala.annotation.nowarn

/**
 * The bytes of one prefetched block: the records of one shard, in order. A small hand-rolled format (not Java
 * or Kryo serialization) because blocks are written and read on every batch and must stay compact and
 * independent of the serializer Spark is configured with.
 *
 * Layout (big-endian): magic (int), version (byte), count (int), then per record: partition key (length, UTF-8
 * bytes), data (length, bytes), sequence number (length, UTF-8 bytes), sub-sequence flag (byte) [+ long], arrival
 * millis (long). One encoded response is a segment; a stored block is one or more segments one after another, and
 * a range of records is read from its own ([[segment]]).
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
    // Each key in UTF-8 once, to size the block before writing it: String.getBytes copies an ASCII string's bytes in
    // one go, where a loop over its chars took a fifth of the read path's CPU.
    val keys = new Array[Array[Byte]](records.size)
    var size = HeaderBytes.toLong
    var i = 0
    val sizing = records.iterator
    while (sizing.hasNext) {
      val r = sizing.next()
      keys(i) = r.partitionKey.getBytes(UTF_8)
      size += FixedBytesPerRecord + keys(i).length + r.data.length + r.sequenceNumber.length +
        (if (r.subSequenceNumber.isDefined) 8 else 0)
      i += 1
    }
    require(size <= Int.MaxValue, s"a block of ${records.size} records would take over 2 GB ($size bytes)")
    if (records.nonEmpty) {
      requireDecimal(records.head.sequenceNumber)
      requireDecimal(records.last.sequenceNumber)
    }
    val out = ByteBuffer.allocate(size.toInt)
    out.putInt(Magic).put(FormatVersion).putInt(records.size)
    i = 0
    val writing = records.iterator
    while (writing.hasNext) {
      val r = writing.next()
      out.putInt(keys(i).length).put(keys(i))
      out.putInt(r.data.length).put(r.data)
      putDigits(r.sequenceNumber, out)
      r.subSequenceNumber match {
        case Some(sub) => out.put(1.toByte).putLong(sub)
        case None      => out.put(0.toByte)
      }
      out.putLong(r.approximateArrivalMillis)
      i += 1
    }
    out.flip()
    out
  }

  /**
   * A sequence number's length and characters, one byte each, copied straight into the block (no array of its own:
   * that was a tenth of the fetch threads' allocation in ReadPathBenchmark). A sequence number is decimal digits
   * (the pattern `0|([1-9]\d{0,128})` in the API reference of GetRecords' `Record`), so a byte per character is its
   * UTF-8. Only the first and last of each block are checked ([[requireDecimal]]): checking every byte cost the fetch
   * threads about a sixth of their CPU in ReadPathBenchmark, and all of a stream's sequence numbers have one form, so a
   * source whose sequence numbers are not decimal is refused at its first response.
   */
  @nowarn("cat=deprecation") // String.getBytes(int, int, byte[], int): the one copy of a String's chars into bytes
  private def putDigits(sequenceNumber: String, out: ByteBuffer): Unit = {
    val n = sequenceNumber.length
    out.putInt(n)
    sequenceNumber.getBytes(0, n, out.array(), out.arrayOffset() + out.position())
    out.position(out.position() + n)
  }

  private def requireDecimal(sequenceNumber: String): Unit = {
    var i = 0
    while (i < sequenceNumber.length && sequenceNumber.charAt(i) >= '0' && sequenceNumber.charAt(i) <= '9') i += 1
    if (sequenceNumber.isEmpty || i < sequenceNumber.length)
      throw new IllegalArgumentException(s"not a Kinesis sequence number: '$sequenceNumber' (Kinesis's are decimal " +
        "digits)")
  }

  /** The records of a block, read lazily from `block` (which is not modified). */
  def decode(block: ByteBuffer): Iterator[KinesisRecord] = read(block)(_.record)

  /**
   * What `make` makes of each record of `block`, read lazily through one [[Cursor]]. What `make` returns may be a
   * view of the cursor (a [[io.kinesisspark.BlockRow]]): it is then valid only until the iterator's next `hasNext`.
   */
  def read[T](block: ByteBuffer)(make: Cursor => T): Iterator[T] = {
    val records = cursor(block)
    Iterator.continually(records).takeWhile(_.next()).map(make)
  }

  /**
   * The `length` bytes from `offset` of a block stored as `chunks`: a view of the chunk that holds them (a block
   * stored in this executor's memory keeps one chunk per segment; one from disk or another executor comes as one
   * buffer), or a copy when they span chunks (a block read back from disk in chunks of another size).
   */
  def segment(chunks: Seq[ByteBuffer], offset: Int, length: Int): ByteBuffer = {
    var start = 0
    val it = chunks.iterator
    while (it.hasNext) {
      val chunk = it.next()
      val size = chunk.remaining()
      if (offset >= start && offset + length <= start + size) {
        val view = chunk.duplicate()
        val at = view.position() + offset - start
        view.limit(at + length)
        view.position(at)
        return view.slice()
      }
      start += size
    }
    require(offset >= 0 && length >= 0 && offset + length <= start,
      s"a damaged kinesis-spark record block: no segment of $length bytes at $offset in $start bytes")
    val copy = ByteBuffer.allocate(length)
    start = 0
    chunks.foreach { chunk =>
      val size = chunk.remaining()
      val from = math.max(offset, start)
      val until = math.min(offset + length, start + size)
      if (from < until) {
        val part = chunk.duplicate()
        part.position(part.position() + from - start)
        part.limit(part.position() + until - from)
        copy.put(part)
      }
      start += size
    }
    copy.flip()
    copy
  }

  /** A [[Cursor]] over the records of `block` (which is not modified). */
  def cursor(block: ByteBuffer): Cursor = {
    val in = if (block.hasArray) block.duplicate() else { // a block spilled to disk may come back memory-mapped
      val copy = ByteBuffer.allocate(block.remaining())
      copy.put(block.duplicate()).flip()
      copy
    }
    require(in.remaining() >= HeaderBytes, s"not a kinesis-spark record block (${in.remaining()} bytes)")
    val magic = in.getInt()
    val version = in.get()
    require(magic == Magic && version == FormatVersion, s"not a kinesis-spark record block (magic $magic, version $version)")
    new Cursor(in, in.getInt())
  }

  /**
   * Reads a block's records one at a time, leaving each in its fields: the partition key, data and sequence number
   * as places in `bytes` (the block's own array, not copied), so that rows can be made without a String, an array or
   * a [[KinesisRecord]] per record, and a column left unread is never copied.
   */
  final class Cursor private[RecordBlockCodec] (in: ByteBuffer, count: Int) {
    private var left = count
    val bytes: Array[Byte] = in.array()
    var keyAt, keyLength, dataAt, dataLength, sequenceAt, sequenceLength: Int = 0
    /** Meaningful only when `hasSubSequenceNumber`. */
    var subSequenceNumber: Long = 0L
    var hasSubSequenceNumber: Boolean = false
    var arrivalMillis: Long = 0L

    /** Moves to the next record; false when there is none. */
    def next(): Boolean = left > 0 && {
      left -= 1
      keyLength = length()
      keyAt = in.arrayOffset() + in.position()
      in.position(in.position() + keyLength)
      dataLength = length()
      dataAt = in.arrayOffset() + in.position()
      in.position(in.position() + dataLength)
      sequenceLength = length()
      sequenceAt = in.arrayOffset() + in.position()
      in.position(in.position() + sequenceLength)
      hasSubSequenceNumber = in.get() == 1
      subSequenceNumber = if (hasSubSequenceNumber) in.getLong() else 0L // a plain record's reads as 0, not the last
      arrivalMillis = in.getLong()
      true
    }

    /** A length that the rest of the block holds: a damaged block fails here rather than read out of place. */
    private def length(): Int = {
      val n = in.getInt()
      // Not `require`: its message is a closure, made on every call (three a record) whether it fails or not.
      if (n < 0 || n > in.remaining())
        throw new IllegalArgumentException(
          s"a damaged kinesis-spark record block: a length of $n with ${in.remaining()} bytes left")
      n
    }

    /** A copy of the current record's data. */
    def data: Array[Byte] = java.util.Arrays.copyOfRange(bytes, dataAt, dataAt + dataLength)

    /** The current record as a [[KinesisRecord]]. */
    def record: KinesisRecord = KinesisRecord(new String(bytes, keyAt, keyLength, UTF_8), data,
      new String(bytes, sequenceAt, sequenceLength, UTF_8), if (hasSubSequenceNumber) Some(subSequenceNumber) else None,
      arrivalMillis)
  }
}
