package io.kinesisspark.fetch

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

/**
 * The bytes of one prefetched block: the records of one shard, in order. A small hand-rolled format (not Java
 * or Kryo serialization) because blocks are written and read on every batch and must stay compact and
 * independent of the serializer Spark is configured with.
 *
 * Layout: magic (int), version (byte), count (int), then per record: partition key (UTF), data (length + bytes),
 * sequence number (UTF), sub-sequence flag (byte) [+ long], arrival millis (long).
 */
object RecordBlockCodec {
  private val Magic = 0x4b534231 // "KSB1"
  private val FormatVersion: Byte = 1

  def encode(records: Seq[KinesisRecord]): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(math.max(64, records.iterator.map(_.sizeInBytes).sum.toInt))
    val out = new DataOutputStream(bytes)
    out.writeInt(Magic)
    out.writeByte(FormatVersion)
    out.writeInt(records.size)
    records.foreach { r =>
      out.writeUTF(r.partitionKey)
      out.writeInt(r.data.length)
      out.write(r.data)
      out.writeUTF(r.sequenceNumber)
      r.subSequenceNumber match {
        case Some(sub) => out.writeByte(1); out.writeLong(sub)
        case None      => out.writeByte(0)
      }
      out.writeLong(r.approximateArrivalMillis)
    }
    out.flush()
    bytes.toByteArray
  }

  def decode(block: Array[Byte]): Iterator[KinesisRecord] = {
    val in = new DataInputStream(new ByteArrayInputStream(block))
    val magic = in.readInt()
    val version = in.readByte()
    require(magic == Magic && version == FormatVersion, s"not a kinesis-spark record block (magic $magic, version $version)")
    val count = in.readInt()
    Iterator.tabulate(count) { _ =>
      val key = in.readUTF()
      val data = new Array[Byte](in.readInt())
      in.readFully(data)
      val seq = in.readUTF()
      val sub = if (in.readByte() == 1) Some(in.readLong()) else None
      KinesisRecord(key, data, seq, sub, in.readLong())
    }
  }
}
