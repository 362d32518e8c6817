package io.kinesisspark.blocks

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import scala.annotation.nowarn

import io.kinesisspark.ShardPosition.AfterRecord

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
 * array, as the records are de-aggregated ([[Writer]]), trimmed to the segment's exact size and stored as is, and
 * reads from the stored buffer.
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
  def encode(records: Seq[KinesisRecord], source: String = ""): ByteBuffer = {
    val writer = new Writer(HeaderBytes + 128 * math.min(records.size, 100000), source)
    records.foreach(r => writer.add(r.partitionKey, r.data, r.sequenceNumber, r.subSequenceNumber.isDefined,
      r.subSequenceNumber.getOrElse(0L), r.approximateArrivalMillis))
    writer.result()
  }

  /**
   * Writes records into one segment as they come, so a response's records are encoded while the de-aggregation that
   * makes them has them at hand: made into [[KinesisRecord]]s first and encoded after, each record was touched twice
   * more, and those touches were most of the fetch threads' CPU in ReadPathBenchmark. Grows as needed (from
   * `sizeHint` bytes); [[result]] trims it to the records' exact size, which is what the block store counts.
   *
   * {{{
   *   val writer = new RecordBlockCodec.Writer(sizeHint = 4096, source = "stream 'clicks', shardId-000000000000")
   *   writer.add("key", data, "49590338271490256608559692538361571095921575989136588898", hasSub = false, 0L, millis)
   *   val segment: ByteBuffer = writer.result()
   * }}}
   *
   * @param source where the records come from, for the error that refuses them
   */
  final class Writer(sizeHint: Int, source: String = "") {
    private var bytes = new Array[Byte](math.max(HeaderBytes + 64, sizeHint))
    private var at = HeaderBytes
    private var records = 0
    private var firstArrival = Long.MinValue
    private var lastArrival = Long.MinValue
    private var maxArrival = Long.MinValue
    private var firstSequenceNumber: String = _
    private var lastSequenceNumber: String = _
    private var lastHasSub = false
    private var lastSub = 0L

    /** Records written so far. */
    def count: Int = records
    /** Bytes written so far, the header's included. */
    def size: Int = at
    /**
     * The first, last and latest records' arrival times (`Long.MinValue` before any). Kinesis's arrival times may be
     * out of order within a shard, so the latest need not be the last's.
     */
    def firstArrivalMillis: Long = firstArrival
    def lastArrivalMillis: Long = lastArrival
    def maxArrivalMillis: Long = maxArrival

    /** The last record's position, if any record was written. */
    def lastPosition: Option[AfterRecord] =
      if (records == 0) None else Some(AfterRecord(lastSequenceNumber, if (lastHasSub) Some(lastSub) else None))

    /** Appends a record; `subSequenceNumber` counts only when `hasSub`. */
    def add(partitionKey: String, data: Array[Byte], sequenceNumber: String, hasSub: Boolean, subSequenceNumber: Long,
        arrivalMillis: Long): Unit = {
      require(bytes != null, "a record block writer takes no record after its result")
      val key = partitionKey.getBytes(UTF_8)
      val size = FixedBytesPerRecord.toLong + key.length + data.length + sequenceNumber.length + (if (hasSub) 8 else 0)
      ensure(size)
      // Straight into the array (a ByteBuffer over it per record was an allocation per record).
      putInt(key.length)
      System.arraycopy(key, 0, bytes, at, key.length)
      at += key.length
      putInt(data.length)
      System.arraycopy(data, 0, bytes, at, data.length)
      at += data.length
      putInt(sequenceNumber.length)
      copyDigits(sequenceNumber, bytes, at)
      at += sequenceNumber.length
      if (hasSub) {
        bytes(at) = 1
        at += 1
        putLong(subSequenceNumber)
      } else {
        bytes(at) = 0
        at += 1
      }
      putLong(arrivalMillis)
      if (records == 0) {
        firstSequenceNumber = sequenceNumber
        firstArrival = arrivalMillis
      }
      records += 1
      lastArrival = arrivalMillis
      maxArrival = math.max(maxArrival, arrivalMillis)
      lastSequenceNumber = sequenceNumber
      lastHasSub = hasSub
      lastSub = subSequenceNumber
    }

    private def prefix = if (source.isEmpty) "" else s"$source: "

    private def putInt(v: Int): Unit = {
      bytes(at) = (v >>> 24).toByte
      bytes(at + 1) = (v >>> 16).toByte
      bytes(at + 2) = (v >>> 8).toByte
      bytes(at + 3) = v.toByte
      at += 4
    }

    private def putLong(v: Long): Unit = {
      putInt((v >>> 32).toInt)
      putInt(v.toInt)
    }

    private def ensure(more: Long): Unit = if (at + more > bytes.length) {
      val needed = at + more
      require(needed <= Int.MaxValue - 8, s"${prefix}a block of over 2 GB ($needed bytes after $records records)")
      bytes = java.util.Arrays.copyOf(bytes, math.min(Int.MaxValue - 8L, math.max(needed, bytes.length * 2L)).toInt)
    }

    /** The records as one segment: a heap buffer positioned at 0 whose limit is its end, and whose array is its own. */
    def result(): ByteBuffer = {
      require(bytes != null, "a record block writer gives one result")
      if (records > 0) {
        requireDecimal(firstSequenceNumber, prefix)
        requireDecimal(lastSequenceNumber, prefix)
      }
      ByteBuffer.wrap(bytes, 0, HeaderBytes).putInt(Magic).put(FormatVersion).putInt(records)
      val exact = if (at == bytes.length) bytes else java.util.Arrays.copyOf(bytes, at)
      bytes = null // one result per writer
      ByteBuffer.wrap(exact)
    }
  }

  /**
   * A sequence number's characters, one byte each, copied straight into the block (no array of its own:
   * that was a tenth of the fetch threads' allocation in ReadPathBenchmark). A sequence number is decimal digits
   * (the pattern `0|([1-9]\d{0,128})` in the API reference of GetRecords' `Record`), so a byte per character is its
   * UTF-8. Only the first and last of each block are checked ([[requireDecimal]]): checking every byte cost the fetch
   * threads about a sixth of their CPU in ReadPathBenchmark, and all of a stream's sequence numbers have one form, so a
   * source whose sequence numbers are not decimal is refused at its first response.
   */
  @nowarn("cat=deprecation") // String.getBytes(int, int, byte[], int): the one copy of a String's chars into bytes
  private def copyDigits(sequenceNumber: String, into: Array[Byte], at: Int): Unit =
    sequenceNumber.getBytes(0, sequenceNumber.length, into, at)

  private def requireDecimal(sequenceNumber: String, prefix: String): Unit = {
    var i = 0
    while (i < sequenceNumber.length && sequenceNumber.charAt(i) >= '0' && sequenceNumber.charAt(i) <= '9') i += 1
    if (sequenceNumber.isEmpty || i < sequenceNumber.length)
      throw new IllegalArgumentException(s"${prefix}not a Kinesis sequence number: '$sequenceNumber' (Kinesis's are " +
        "decimal digits)")
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
