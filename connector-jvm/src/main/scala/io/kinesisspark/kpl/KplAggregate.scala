package io.kinesisspark.kpl

import java.security.MessageDigest

import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.{CodedInputStream, InvalidProtocolBufferException, WireFormat}

/**
 * The KPL aggregation format: the magic bytes F3 89 9A C2, a protobuf `AggregatedRecord`, and the 16-byte MD5
 * digest of that protobuf message. The message holds a table of partition keys (field 1), a table of explicit
 * hash keys (field 2) and the user records (field 3), each naming its keys by index into the tables:
 *
 * {{{
 *   message AggregatedRecord { repeated string partition_key_table = 1; repeated string explicit_hash_key_table = 2;
 *                              repeated Record records = 3; }
 *   message Record { required uint64 partition_key_index = 1; optional uint64 explicit_hash_key_index = 2;
 *                    required bytes data = 3; repeated Tag tags = 4; }
 * }}}
 *
 * All user records of an aggregate share the Kinesis record's sequence number; a user record's index in
 * `records` is its sub-sequence number. Tags are read past and never written.
 *
 * {{{
 *   val bytes = KplAggregateBuilder.encode(Seq(UserRecord("a", None, "1".getBytes), UserRecord("b", None, "2".getBytes)))
 *   KplAggregate.decode(bytes)                 // Aggregated(Vector(UserRecord("a", ...), UserRecord("b", ...)))
 *   KplAggregate.decode("plain".getBytes)      // NotAggregated
 * }}}
 */
object KplAggregate {
  /** The bytes every aggregate starts with. */
  val Magic: Array[Byte] = Array(0xF3, 0x89, 0x9A, 0xC2).map(_.toByte)
  /** Length of the MD5 digest that ends every aggregate. */
  val DigestLength = 16

  private[kpl] val PartitionKeyTableField = 1
  private[kpl] val ExplicitHashKeyTableField = 2
  private[kpl] val RecordsField = 3
  private[kpl] val PartitionKeyIndexField = 1
  private[kpl] val ExplicitHashKeyIndexField = 2
  private[kpl] val DataField = 3

  private def tag(field: Int, wireType: Int): Int = (field << 3) | wireType // protobuf's tag layout
  private val PartitionKeyTag = tag(PartitionKeyTableField, WireFormat.WIRETYPE_LENGTH_DELIMITED)
  private val ExplicitHashKeyTag = tag(ExplicitHashKeyTableField, WireFormat.WIRETYPE_LENGTH_DELIMITED)
  private val RecordTag = tag(RecordsField, WireFormat.WIRETYPE_LENGTH_DELIMITED)
  private val PartitionKeyIndexTag = tag(PartitionKeyIndexField, WireFormat.WIRETYPE_VARINT)
  private val ExplicitHashKeyIndexTag = tag(ExplicitHashKeyIndexField, WireFormat.WIRETYPE_VARINT)
  private val DataTag = tag(DataField, WireFormat.WIRETYPE_LENGTH_DELIMITED)

  /** Whether `bytes` start with the magic bytes (and so are meant to be an aggregate). */
  def isAggregate(bytes: Array[Byte]): Boolean = {
    // Asked of every record read: a loop, not `indices.forall`, which boxes each index.
    var i = 0
    while (i < Magic.length && i < bytes.length && bytes(i) == Magic(i)) i += 1
    i == Magic.length
  }

  /** The user records of an aggregate; a plain record when there is no magic; or why an aggregate is not valid. */
  def decode(bytes: Array[Byte]): KplDecoded =
    if (!isAggregate(bytes)) KplDecoded.NotAggregated
    else if (bytes.length < Magic.length + DigestLength)
      KplDecoded.Corrupt(s"${bytes.length} bytes, too short to hold the magic bytes and an MD5 digest")
    else {
      val messageLength = bytes.length - Magic.length - DigestLength
      if (!MessageDigest.isEqual(md5(bytes, Magic.length, messageLength), bytes.takeRight(DigestLength)))
        KplDecoded.Corrupt("the MD5 digest does not match the protobuf message")
      else
        try parse(CodedInputStream.newInstance(bytes, Magic.length, messageLength))
        catch { case e: InvalidProtocolBufferException => KplDecoded.Corrupt(s"malformed protobuf: ${e.getMessage}") }
    }

  private[kpl] def md5(bytes: Array[Byte], offset: Int, length: Int): Array[Byte] = {
    val digest = MessageDigest.getInstance("MD5")
    digest.update(bytes, offset, length)
    digest.digest()
  }

  /** A `Record` as written: indexes not yet checked against the tables, which may come after the records. */
  private final case class RawRecord(partitionKeyIndex: Option[Long], explicitHashKeyIndex: Option[Long], data: Option[Array[Byte]])

  private def parse(in: CodedInputStream): KplDecoded = {
    val partitionKeys = ArrayBuffer.empty[String]
    val explicitHashKeys = ArrayBuffer.empty[String]
    val raw = ArrayBuffer.empty[RawRecord]
    var tag = in.readTag()
    while (tag != 0) {
      tag match {
        // Strings are read as protobuf's generated code reads proto2 strings: bad UTF-8 becomes U+FFFD.
        case PartitionKeyTag    => partitionKeys += in.readString()
        case ExplicitHashKeyTag => explicitHashKeys += in.readString()
        case RecordTag =>
          val limit = in.pushLimit(in.readRawVarint32())
          raw += parseRecord(in)
          in.popLimit(limit)
        case other => skip(in, other)
      }
      tag = in.readTag()
    }
    def inTable(index: Option[Long], table: ArrayBuffer[String]): Boolean = index.forall(i => i >= 0 && i < table.size)
    val problem = if (raw.isEmpty) Some("it holds no records") else raw.iterator.zipWithIndex.collectFirst {
      case (r, i) if r.partitionKeyIndex.isEmpty => s"record $i has no partition key index"
      case (r, i) if r.data.isEmpty              => s"record $i has no data"
      case (r, i) if !inTable(r.partitionKeyIndex, partitionKeys) =>
        s"record $i names partition key ${java.lang.Long.toUnsignedString(r.partitionKeyIndex.get)} of a table of ${partitionKeys.size}"
      case (r, i) if !inTable(r.explicitHashKeyIndex, explicitHashKeys) =>
        s"record $i names explicit hash key ${java.lang.Long.toUnsignedString(r.explicitHashKeyIndex.get)} of a table of ${explicitHashKeys.size}"
    }
    problem match {
      case Some(reason) => KplDecoded.Corrupt(reason)
      case None => KplDecoded.Aggregated(raw.iterator.map { r =>
        UserRecord(partitionKeys(r.partitionKeyIndex.get.toInt), r.explicitHashKeyIndex.map(i => explicitHashKeys(i.toInt)), r.data.get)
      }.toVector)
    }
  }

  private def parseRecord(in: CodedInputStream): RawRecord = {
    var record = RawRecord(None, None, None)
    var tag = in.readTag()
    while (tag != 0) {
      tag match {
        case PartitionKeyIndexTag    => record = record.copy(partitionKeyIndex = Some(in.readUInt64()))
        case ExplicitHashKeyIndexTag => record = record.copy(explicitHashKeyIndex = Some(in.readUInt64()))
        case DataTag                 => record = record.copy(data = Some(in.readByteArray()))
        case other                   => skip(in, other) // tags (field 4) and fields a later format may add
      }
      tag = in.readTag()
    }
    record
  }

  /** Skips an unknown field; an end-group tag with no group open means the bytes are not a valid message. */
  private def skip(in: CodedInputStream, tag: Int): Unit =
    if (!in.skipField(tag)) throw new InvalidProtocolBufferException(s"unexpected end-group tag $tag")
}
