package io.kinesisspark.fetch

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import io.kinesisspark.{LoaderBridge, ShardPosition}
import io.kinesisspark.ShardPosition.{AfterRecord, AtTimestamp, Finished, TrimHorizon}

/**
 * What an executor's [[FetchService]] sends the driver for one ticket: the ticket's id, which copy of it this is
 * (executor and attempt), and its results, as bytes of a small fixed layout. The driver decodes every delivery on its
 * RPC threads, and a round brings one per `shardsPerTask` shards: Java serialization of the same results (class
 * descriptors, handle tables and a stream per delivery) was the largest allocation of the driver JVM at 1,000
 * shards in DriverScaleBenchmark, and its garbage collections were the query thread's longest waits. Bytes of JDK
 * types only also cross the class loaders of a Spark Connect session (see [[LoaderBridge]]) as they are. A
 * failure, rare and of any class, still travels Java-serialized inside.
 *
 * Layout (big-endian, strings as `DataOutput.writeUTF`): magic (int), version (byte), ticket (long), copy, count
 * (int), then per result: stream, shard id, ranges (count, then each: stream, shard id, from, to, block flag
 * [stream id (int), unique id (long), location, offset (int), length (int), last (boolean)], records (int), bytes,
 * first and last arrival (longs)), caught up (boolean), lag flag [long], calls, throttles, call millis (longs),
 * location, data-loss events, out-of-range sub-records, corrupt aggregates (longs), consumer missing (boolean),
 * subscriptions (long), failure flag [length (int), Java-serialized bytes]. A position is a tag byte: trim
 * horizon, at a timestamp [millis], after a record [sequence number, sub-sequence flag [long]], finished. Deliveries
 * never outlive the query that made them, so no other version is read.
 *
 * {{{
 *   val bytes = FetchDelivery.encode(FetchDelivery(ticket.id, s"$location/$attempt", results))
 *   FetchDelivery.decode(bytes).results
 * }}}
 *
 * @param copy the executor and dispatch attempt that fetched it: a copy delivered again is recognised
 */
final case class FetchDelivery(ticket: Long, copy: String, results: Seq[ShardFetchResult])

object FetchDelivery {
  private val Magic = 0x4b534644 // "KSFD"
  private val Version: Byte = 1
  private val TrimHorizonTag: Byte = 0
  private val AtTimestampTag: Byte = 1
  private val AfterRecordTag: Byte = 2
  private val FinishedTag: Byte = 3

  def encode(delivery: FetchDelivery): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(64 + 256 * delivery.results.size)
    val out = new DataOutputStream(bytes)
    out.writeInt(Magic)
    out.writeByte(Version)
    out.writeLong(delivery.ticket)
    out.writeUTF(delivery.copy)
    out.writeInt(delivery.results.size)
    delivery.results.foreach(writeResult(out, _))
    out.flush()
    bytes.toByteArray
  }

  /** A delivery [[encode]] made; anything else, or one cut short, is refused with what was found. */
  def decode(bytes: Array[Byte]): FetchDelivery =
    try read(new DataInputStream(new ByteArrayInputStream(bytes)))
    catch {
      case e: java.io.EOFException =>
        throw new IllegalArgumentException(s"a kinesis-spark prefetch delivery cut short (${bytes.length} bytes)", e)
    }

  private def read(in: DataInputStream): FetchDelivery = {
    val magic = in.readInt()
    val version = in.readByte()
    require(magic == Magic && version == Version,
      s"not a kinesis-spark prefetch delivery (magic $magic, version $version; expected $Magic, $Version)")
    val ticket = in.readLong()
    val copy = in.readUTF()
    val results = Vector.fill(in.readInt())(readResult(in))
    require(in.available() == 0, s"a kinesis-spark prefetch delivery with ${in.available()} bytes left over")
    FetchDelivery(ticket, copy, results)
  }

  private def writeResult(out: DataOutputStream, r: ShardFetchResult): Unit = {
    out.writeUTF(r.stream)
    out.writeUTF(r.shardId)
    out.writeInt(r.ranges.size)
    r.ranges.foreach(writeRange(out, _))
    out.writeBoolean(r.caughtUp)
    writeOptionalLong(out, r.millisBehindLatest)
    out.writeLong(r.calls)
    out.writeLong(r.throttles)
    out.writeLong(r.callMillis)
    out.writeUTF(r.location)
    out.writeLong(r.dataLossEvents)
    out.writeLong(r.outOfRangeSubRecords)
    out.writeLong(r.corruptAggregates)
    out.writeBoolean(r.consumerMissing)
    out.writeLong(r.subscriptions)
    out.writeBoolean(r.failure.isDefined)
    r.failure.foreach { e =>
      val serialized = LoaderBridge.toBytes(e)
      out.writeInt(serialized.length)
      out.write(serialized)
    }
  }

  private def readResult(in: DataInputStream): ShardFetchResult = {
    val stream = in.readUTF()
    val shardId = in.readUTF()
    val ranges = Vector.fill(in.readInt())(readRange(in))
    ShardFetchResult(stream, shardId, ranges, caughtUp = in.readBoolean(), millisBehindLatest = readOptionalLong(in),
      calls = in.readLong(), throttles = in.readLong(), callMillis = in.readLong(), location = in.readUTF(),
      dataLossEvents = in.readLong(), outOfRangeSubRecords = in.readLong(), corruptAggregates = in.readLong(),
      consumerMissing = in.readBoolean(), subscriptions = in.readLong(),
      failure = if (in.readBoolean()) {
        val serialized = new Array[Byte](in.readInt())
        in.readFully(serialized)
        Some(LoaderBridge.fromBytes(serialized).asInstanceOf[Throwable])
      } else None)
  }

  private def writeRange(out: DataOutputStream, r: FetchedRange): Unit = {
    out.writeUTF(r.stream)
    out.writeUTF(r.shardId)
    writePosition(out, r.from)
    writePosition(out, r.to)
    out.writeBoolean(r.block.isDefined)
    r.block.foreach { b =>
      out.writeInt(b.streamId)
      out.writeLong(b.uniqueId)
      out.writeUTF(b.location)
      out.writeInt(b.offset)
      out.writeInt(b.length)
      out.writeBoolean(b.last)
    }
    out.writeInt(r.records)
    out.writeLong(r.bytes)
    out.writeLong(r.firstArrivalMillis)
    out.writeLong(r.lastArrivalMillis)
  }

  private def readRange(in: DataInputStream): FetchedRange = {
    val stream = in.readUTF()
    val shardId = in.readUTF()
    val from = readPosition(in)
    val to = readPosition(in)
    val block = if (in.readBoolean()) {
      Some(BlockRef(streamId = in.readInt(), uniqueId = in.readLong(), location = in.readUTF(), offset = in.readInt(),
        length = in.readInt(), last = in.readBoolean()))
    } else None
    FetchedRange(stream, shardId, from, to, block, records = in.readInt(), bytes = in.readLong(),
      firstArrivalMillis = in.readLong(), lastArrivalMillis = in.readLong())
  }

  private def writePosition(out: DataOutputStream, position: ShardPosition): Unit = position match {
    case TrimHorizon => out.writeByte(TrimHorizonTag)
    case AtTimestamp(millis) =>
      out.writeByte(AtTimestampTag)
      out.writeLong(millis)
    case AfterRecord(sequenceNumber, sub) =>
      out.writeByte(AfterRecordTag)
      out.writeUTF(sequenceNumber)
      writeOptionalLong(out, sub)
    case Finished => out.writeByte(FinishedTag)
  }

  private def readPosition(in: DataInputStream): ShardPosition = in.readByte() match {
    case TrimHorizonTag => TrimHorizon
    case AtTimestampTag => AtTimestamp(in.readLong())
    case AfterRecordTag => AfterRecord(in.readUTF(), readOptionalLong(in))
    case FinishedTag    => Finished
    case other          =>
      throw new IllegalArgumentException(s"a damaged kinesis-spark prefetch delivery: position tag $other")
  }

  private def writeOptionalLong(out: DataOutputStream, value: Option[Long]): Unit = {
    out.writeBoolean(value.isDefined)
    value.foreach(out.writeLong)
  }

  private def readOptionalLong(in: DataInputStream): Option[Long] = if (in.readBoolean()) Some(in.readLong()) else None
}
