package io.kinesisspark.blocks

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream, IOException}

import scala.collection.mutable

import io.kinesisspark.ShardPosition
import io.kinesisspark.ShardPosition.{AfterRecord, AtTimestamp, Finished, TrimHorizon}

/**
 * Writes values in the [[WireFormat]] layout, one after another; a [[WireReader]] reads them back in the same order.
 *
 * {{{
 *   val bytes = WireFormat.encode(sizeHint = 256) { wire => wire.text("clicks"); wire.range(range) }
 * }}}
 */
final class WireWriter(val out: DataOutputStream) {
  import WireFormat._

  private val strings = mutable.HashMap.empty[String, Int]
  private var lastPosition: ShardPosition = _
  private var lastSequence = ""

  /**
   * A string: its number (plus one) if this writer wrote it before, else 0 and the string, which then gets the next
   * number.
   */
  def text(s: String): Unit = strings.get(s) match {
    case Some(n) => varInt(n + 1)
    case None =>
      varInt(0)
      out.writeUTF(s)
      strings(s) = strings.size
  }

  private def varInt(n: Int): Unit = {
    var left = n
    while ((left & ~0x7f) != 0) {
      out.writeByte((left & 0x7f) | 0x80)
      left >>>= 7
    }
    out.writeByte(left)
  }

  /** Digits shared with the sequence number written before (at most 255, a byte), then the rest. */
  private def sequence(s: String): Unit = {
    val limit = math.min(255, math.min(s.length, lastSequence.length))
    var shared = 0
    while (shared < limit && s.charAt(shared) == lastSequence.charAt(shared)) shared += 1
    out.writeByte(shared)
    out.writeUTF(s.substring(shared))
    lastSequence = s
  }

  def position(p: ShardPosition): Unit =
    if (lastPosition != null && p == lastPosition) out.writeByte(SameAsLastTag)
    else {
      p match {
        case TrimHorizon => out.writeByte(TrimHorizonTag)
        case AtTimestamp(millis) =>
          out.writeByte(AtTimestampTag)
          out.writeLong(millis)
        case AfterRecord(sequenceNumber, sub) =>
          out.writeByte(AfterRecordTag)
          sequence(sequenceNumber)
          optionalLong(sub)
        case Finished => out.writeByte(FinishedTag)
      }
      lastPosition = p
    }

  def optionalLong(value: Option[Long]): Unit = {
    out.writeBoolean(value.isDefined)
    value.foreach(out.writeLong)
  }

  /**
   * Stream, shard id, from, to, block flag [stream id, unique id, location, offset, length, last], records, bytes,
   * first and last arrival.
   */
  def range(r: FetchedRange): Unit = {
    text(r.stream)
    text(r.shardId)
    position(r.from)
    position(r.to)
    out.writeBoolean(r.block.isDefined)
    r.block.foreach { b =>
      out.writeInt(b.streamId)
      out.writeLong(b.uniqueId)
      text(b.location)
      out.writeInt(b.offset)
      out.writeInt(b.length)
      out.writeBoolean(b.last)
    }
    out.writeInt(r.records)
    out.writeLong(r.bytes)
    out.writeLong(r.firstArrivalMillis)
    out.writeLong(r.lastArrivalMillis)
  }

  def ranges(rs: Seq[FetchedRange]): Unit = {
    out.writeInt(rs.size)
    rs.foreach(range)
  }
}

/**
 * Reads what a [[WireWriter]] wrote, in the same order; `what` names the bytes in the error for damaged ones.
 *
 * {{{
 *   WireFormat.decode(bytes, "kinesis-spark input partition") { wire => (wire.text(), wire.range()) }
 * }}}
 */
final class WireReader(val in: DataInputStream, what: String) {
  import WireFormat._

  private val strings = mutable.ArrayBuffer.empty[String]
  private var lastPosition: ShardPosition = _
  private var lastSequence = ""

  def text(): String = varInt() match {
    case 0 =>
      val s = in.readUTF()
      strings += s
      s
    case n if n > 0 && n <= strings.size => strings(n - 1)
    case n => throw damaged(s"string number ${n - 1} of ${strings.size}")
  }

  private def varInt(): Int = {
    var n = 0
    var shift = 0
    var b = 0
    do {
      if (shift > 28) throw damaged("a number of more than 5 bytes")
      b = in.readUnsignedByte()
      if (shift == 28 && (b & 0x70) != 0) throw damaged("a number of more than 31 bits")
      n |= (b & 0x7f) << shift
      shift += 7
    } while ((b & 0x80) != 0)
    n
  }

  private def sequence(): String = {
    val shared = in.readUnsignedByte()
    if (shared > lastSequence.length)
      throw damaged(s"a sequence number sharing $shared digits of ${lastSequence.length}")
    lastSequence = lastSequence.substring(0, shared) + in.readUTF()
    lastSequence
  }

  def position(): ShardPosition = {
    val p = in.readByte() match {
      case TrimHorizonTag => TrimHorizon
      case AtTimestampTag => AtTimestamp(in.readLong())
      case AfterRecordTag => AfterRecord(sequence(), optionalLong())
      case FinishedTag    => Finished
      case SameAsLastTag if lastPosition != null => lastPosition
      case SameAsLastTag => throw damaged("a position the same as the last, with none before it")
      case other => throw damaged(s"position tag $other")
    }
    lastPosition = p
    p
  }

  def optionalLong(): Option[Long] = if (in.readBoolean()) Some(in.readLong()) else None

  def range(): FetchedRange = {
    val stream = text()
    val shardId = text()
    val from = position()
    val to = position()
    val block = if (in.readBoolean()) {
      Some(BlockRef(streamId = in.readInt(), uniqueId = in.readLong(), location = text(), offset = in.readInt(),
        length = in.readInt(), last = in.readBoolean()))
    } else None
    FetchedRange(stream, shardId, from, to, block, records = in.readInt(), bytes = in.readLong(),
      firstArrivalMillis = in.readLong(), lastArrivalMillis = in.readLong())
  }

  def ranges(): Vector[FetchedRange] = Vector.fill(count())(range())

  /**
   * A count of things that follow, each of a byte or more: refused when negative or larger than the bytes left
   * (damaged bytes would otherwise ask for an absurd collection).
   */
  def count(): Int = {
    val n = in.readInt()
    if (n < 0 || n > in.available()) throw damaged(s"a count of $n with ${in.available()} bytes left")
    n
  }

  /** Fails unless every byte was read. */
  def end(): Unit = if (in.available() != 0) throw damaged(s"${in.available()} bytes left over")

  def damaged(detail: String): IllegalArgumentException = new IllegalArgumentException(s"a damaged $what: $detail")
}

/**
 * The small binary layout of positions and ranges that cross between driver and executors in bulk: prefetch
 * deliveries ([[FetchDelivery]]), the shards of a prefetch ticket ([[ShardFetchTask]]) and a batch's shard slices
 * ([[io.kinesisspark.KinesisInputPartition]]). At 10,000 shards these carry tens of thousands of positions a second,
 * and Java serialization of the case classes (class descriptors, a handle for every object, reflection on every
 * field) took most of the driver's RPC threads in DriverScaleBenchmark and made batch tasks of 4 MB.
 *
 * What repeats is written once: a string (stream name, shard id, executor) seen before in the same bytes is its
 * number; a position equal to the one written just before (a range starts where the one before it ended) is one
 * byte; a sequence number is the count of leading digits it shares with the sequence number written before it (a
 * shard's share their first 40 or so of 56 digits) and the rest. Strings are `DataOutput.writeUTF`'s, string numbers
 * unsigned LEB128 varints, other numbers big-endian. A position is a tag byte: trim horizon, at a timestamp
 * [millis], after a record [sequence number, sub-sequence flag [long]], finished, or the same as the last. These
 * bytes never outlive the query that wrote them, so only this layout is read.
 *
 * {{{
 *   val bytes = WireFormat.encode(sizeHint = 256)(_.range(range))
 *   WireFormat.decode(bytes, "kinesis-spark input partition")(_.range()) == range
 * }}}
 */
object WireFormat {
  /** What `write` writes, as bytes. */
  def encode(sizeHint: Int)(write: WireWriter => Unit): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(sizeHint)
    val wire = new WireWriter(new DataOutputStream(bytes))
    write(wire)
    wire.out.flush()
    bytes.toByteArray
  }

  /**
   * What `read` reads from `bytes`, which it must read to their end. Bytes that are cut short or damaged are refused
   * with an IllegalArgumentException naming `what` and what was found.
   */
  def decode[T](bytes: Array[Byte], what: String)(read: WireReader => T): T = {
    val wire = new WireReader(new DataInputStream(new ByteArrayInputStream(bytes)), what)
    val value = try read(wire) catch {
      case e: java.io.EOFException => throw wire.damaged(s"cut short (${bytes.length} bytes)").initCause(e)
      // Malformed modified UTF-8 (UTFDataFormatException), or a hash key that is not a number.
      case e @ (_: IOException | _: NumberFormatException) => throw wire.damaged(e.toString).initCause(e)
    }
    wire.end()
    value
  }

  private[kinesisspark] val TrimHorizonTag: Byte = 0
  private[kinesisspark] val AtTimestampTag: Byte = 1
  private[kinesisspark] val AfterRecordTag: Byte = 2
  private[kinesisspark] val FinishedTag: Byte = 3
  private[kinesisspark] val SameAsLastTag: Byte = 4
}
