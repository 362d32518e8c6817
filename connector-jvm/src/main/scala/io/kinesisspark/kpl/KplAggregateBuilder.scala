package io.kinesisspark.kpl

import scala.collection.mutable

import com.google.protobuf.{CodedOutputStream, WireFormat}

import io.kinesisspark.kpl.KplAggregate._

/**
 * Builds one KPL aggregate record by record, knowing at every step how many bytes [[build]] will return, so a
 * writer can stop adding before the aggregate outgrows what one Kinesis record may hold (1 MiB, counting the
 * outer partition key, which is not part of these bytes). Each partition key and explicit hash key is stored once
 * in the aggregate's tables however many records use it. Kinesis limits on keys are not checked here.
 *
 * {{{
 *   val builder = new KplAggregateBuilder
 *   for (r <- userRecords) {
 *     if (!builder.isEmpty && builder.sizeWith(r) + outerKeyBytes > 1024 * 1024) { put(builder.build()); builder.clear() }
 *     builder.add(r)
 *   }
 * }}}
 */
final class KplAggregateBuilder {
  private val partitionKeys = mutable.LinkedHashMap.empty[String, Int]
  private val explicitHashKeys = mutable.LinkedHashMap.empty[String, Int]
  private val records = mutable.ArrayBuffer.empty[(Int, Option[Int], Array[Byte])]
  private var messageBytes = 0L

  /** Records added since the builder was made or cleared. */
  def count: Int = records.size

  def isEmpty: Boolean = records.isEmpty

  /** The length of what [[build]] returns now: magic bytes, protobuf message, MD5 digest. */
  def sizeInBytes: Long = Magic.length + messageBytes + DigestLength

  /** The length [[build]] would return after adding `record`. */
  def sizeWith(record: UserRecord): Long = sizeInBytes + addedBytes(record)

  def add(record: UserRecord): Unit = add(record, addedBytes(record))

  /** [[add]], given what [[addedBytes]] said of `record` (a writer that checked the size first hashes keys once). */
  def add(record: UserRecord, added: Long): Unit = {
    messageBytes += added
    val key = partitionKeys.getOrElseUpdate(record.partitionKey, partitionKeys.size)
    val hashKey = record.explicitHashKey.map(k => explicitHashKeys.getOrElseUpdate(k, explicitHashKeys.size))
    records += ((key, hashKey, record.data))
  }

  def clear(): Unit = {
    partitionKeys.clear()
    explicitHashKeys.clear()
    records.clear()
    messageBytes = 0L
  }

  /** The aggregate of the records added so far, in the order added. */
  def build(): Array[Byte] = {
    require(records.nonEmpty, "a KPL aggregate needs at least one user record (readers take an empty one for corrupt)")
    val bytes = new Array[Byte](sizeInBytes.toInt)
    System.arraycopy(Magic, 0, bytes, 0, Magic.length)
    val out = CodedOutputStream.newInstance(bytes, Magic.length, messageBytes.toInt)
    partitionKeys.keys.foreach(out.writeString(PartitionKeyTableField, _))
    explicitHashKeys.keys.foreach(out.writeString(ExplicitHashKeyTableField, _))
    records.foreach { case (key, hashKey, data) =>
      out.writeTag(RecordsField, WireFormat.WIRETYPE_LENGTH_DELIMITED)
      out.writeUInt32NoTag(recordBytes(key, hashKey.getOrElse(NoHashKey), data))
      out.writeUInt64(PartitionKeyIndexField, key.toLong)
      hashKey.foreach(i => out.writeUInt64(ExplicitHashKeyIndexField, i.toLong))
      out.writeByteArray(DataField, data)
    }
    out.checkNoSpaceLeft() // the sizes computed as records were added are exactly what was written
    val digest = md5(bytes, Magic.length, messageBytes.toInt)
    System.arraycopy(digest, 0, bytes, bytes.length - DigestLength, DigestLength)
    bytes
  }

  /** What adding `record` adds to the protobuf message: its keys if new to the tables, and the record itself. */
  /** How many bytes adding `record` would add to what [[build]] returns. */
  def addedBytes(record: UserRecord): Long = {
    // Once per row on the sink's hot path: one lookup per key table, no Option allocated without a hash key.
    val known = partitionKeys.getOrElse(record.partitionKey, -1)
    val key = if (known >= 0) known else partitionKeys.size
    val newKey = if (known >= 0) 0 else CodedOutputStream.computeStringSize(PartitionKeyTableField, record.partitionKey)
    var hashKey = NoHashKey
    var newHashKey = 0
    if (record.explicitHashKey.isDefined) {
      val k = record.explicitHashKey.get
      val knownHashKey = explicitHashKeys.getOrElse(k, -1)
      hashKey = if (knownHashKey >= 0) knownHashKey else explicitHashKeys.size
      if (knownHashKey < 0) newHashKey = CodedOutputStream.computeStringSize(ExplicitHashKeyTableField, k)
    }
    val body = recordBytes(key, hashKey, record.data)
    newKey.toLong + newHashKey + CodedOutputStream.computeTagSize(RecordsField) + CodedOutputStream.computeUInt32SizeNoTag(body) + body
  }

  /** A record's message: its key indexes (`hashKey` [[NoHashKey]] for none: no Option per row) and its data. */
  private def recordBytes(key: Int, hashKey: Int, data: Array[Byte]): Int =
    CodedOutputStream.computeUInt64Size(PartitionKeyIndexField, key.toLong) +
      (if (hashKey == NoHashKey) 0 else CodedOutputStream.computeUInt64Size(ExplicitHashKeyIndexField, hashKey.toLong)) +
      CodedOutputStream.computeByteArraySize(DataField, data)

  private val NoHashKey = -1
}

object KplAggregateBuilder {
  /** One aggregate holding `records` in order, whatever its size. */
  def encode(records: Seq[UserRecord]): Array[Byte] = {
    val builder = new KplAggregateBuilder
    records.foreach(builder.add)
    builder.build()
  }
}
