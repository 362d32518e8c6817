package io.kinesisspark

import scala.annotation.switch

import org.apache.spark.sql.catalyst.expressions.BaseGenericInternalRow
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.blocks.RecordBlockCodec

/**
 * The row of the record a block's [[RecordBlockCodec.Cursor]] is at, in a [[KinesisRecordSchema]]'s columns: one
 * object per shard slice a partition reader reads, pointed at each record in turn ([[at]]), whose columns are read
 * from the block's bytes only when Spark asks for them. A column the query does not select costs nothing, and a row
 * costs no array of values, no boxed timestamp and no row object of its own.
 *
 * Spark's `PartitionReader.get` may return the same row every time: the `ProjectExec` that Spark's planner puts
 * above every row-based DataSource V2 scan copies each row into an `UnsafeRow` before the reader moves on. Each
 * `getBinary` copies the record's data afresh. Whatever must outlive the cursor's next move takes a `copy()` (a
 * `GenericInternalRow` of the values, made by the trait).
 *
 * {{{
 *   val row = new BlockRow(KinesisRecordSchema.Databricks, UTF8String.fromString("clicks"), shardId)
 *   val records = RecordBlockCodec.cursor(block)
 *   while (records.next()) use(row.at(records))
 * }}}
 */
private[kinesisspark] final class BlockRow(schema: KinesisRecordSchema, stream: UTF8String, shardId: UTF8String)
    extends BaseGenericInternalRow {
  private val fields = schema.fields
  private var record: RecordBlockCodec.Cursor = _

  /** This row, now of the record `cursor` is at. */
  def at(cursor: RecordBlockCodec.Cursor): BlockRow = {
    record = cursor
    this
  }

  override def numFields: Int = fields.length

  override def isNullAt(ordinal: Int): Boolean =
    fields(ordinal) == RecordField.SubSequenceNumber && !record.hasSubSequenceNumber

  override def getUTF8String(ordinal: Int): UTF8String = (fields(ordinal): @switch) match {
    case RecordField.PartitionKey => UTF8String.fromBytes(record.bytes, record.keyAt, record.keyLength)
    case RecordField.SequenceNumber => UTF8String.fromBytes(record.bytes, record.sequenceAt, record.sequenceLength)
    case RecordField.Stream => stream
    case RecordField.ShardId => shardId
    case _ => genericGet(ordinal).asInstanceOf[UTF8String]
  }

  override def getBinary(ordinal: Int): Array[Byte] =
    if (fields(ordinal) == RecordField.Data) record.data else genericGet(ordinal).asInstanceOf[Array[Byte]]

  override def getLong(ordinal: Int): Long = (fields(ordinal): @switch) match {
    case RecordField.ArrivalTimestamp => RecordField.micros(record.arrivalMillis)
    case RecordField.SubSequenceNumber => record.subSequenceNumber
    case _ => genericGet(ordinal).asInstanceOf[Long]
  }

  /** The column's value as Spark holds it: boxed, and null for a plain record's `subSequenceNumber`. */
  override protected def genericGet(ordinal: Int): Any = (fields(ordinal): @switch) match {
    case RecordField.PartitionKey | RecordField.SequenceNumber | RecordField.Stream | RecordField.ShardId =>
      getUTF8String(ordinal)
    case RecordField.Data => record.data
    case RecordField.ArrivalTimestamp => getLong(ordinal)
    case RecordField.SubSequenceNumber => if (record.hasSubSequenceNumber) record.subSequenceNumber else null
  }

  override def setNullAt(i: Int): Unit = throw new UnsupportedOperationException("a row read from a block is read-only")
  override def update(i: Int, value: Any): Unit =
    throw new UnsupportedOperationException("a row read from a block is read-only")
}
