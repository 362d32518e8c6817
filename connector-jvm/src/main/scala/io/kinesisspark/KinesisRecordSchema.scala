package io.kinesisspark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.fetch.{KinesisRecord, RecordBlockCodec}

/**
 * The columns of the rows the source returns, and how a record becomes one: a [[RecordLayout]] (the columns of the
 * connector whose format name is used) and, only when asked for with `includeSubSequenceNumber`, a last column
 * `subSequenceNumber`. By default the rows are exactly the other connector's, so a job that writes `select("*")`
 * into a table made by that connector runs unchanged.
 *
 * {{{
 *   spark.readStream.format("kinesis").option("streamName", "clicks").load().printSchema()
 *   // partitionKey, data, stream, shardId, sequenceNumber, approximateArrivalTimestamp
 *   spark.readStream.format("kinesis").option("streamName", "clicks")
 *     .option("includeSubSequenceNumber", "true").load().printSchema()
 *   // partitionKey, data, stream, shardId, sequenceNumber, approximateArrivalTimestamp, subSequenceNumber
 * }}}
 *
 * @param subSequenceNumber whether rows end with `subSequenceNumber`: null for a plain record, the user record's
 *                          index in its KPL aggregate otherwise
 */
final case class KinesisRecordSchema(layout: RecordLayout, subSequenceNumber: Boolean = false) {
  val schema: StructType = StructType(
    if (subSequenceNumber) layout.columns :+ KinesisRecordSchema.SubSequenceNumber else layout.columns)

  /** One row; `stream` and `shardId` are passed pre-encoded since they are the same for a whole partition. */
  def toRow(stream: UTF8String, shardId: UTF8String, record: KinesisRecord): InternalRow =
    row(stream, shardId, UTF8String.fromString(record.partitionKey), record.data,
      UTF8String.fromString(record.sequenceNumber), record.approximateArrivalMillis,
      record.subSequenceNumber.map(Long.box).orNull)

  /**
   * The row of the record `block` is at: the same row [[toRow]] makes of it, with the partition key and sequence
   * number left in the block's bytes (the block is never written again) instead of decoded into Strings and encoded
   * back.
   */
  def toRow(stream: UTF8String, shardId: UTF8String, block: RecordBlockCodec.Cursor): InternalRow =
    row(stream, shardId, UTF8String.fromBytes(block.bytes, block.keyAt, block.keyLength), block.data,
      UTF8String.fromBytes(block.bytes, block.sequenceAt, block.sequenceLength), block.arrivalMillis,
      if (block.hasSubSequenceNumber) Long.box(block.subSequenceNumber) else null)

  /** `subSequence` is null for a plain record; it is only used when the rows have the column. */
  private def row(stream: UTF8String, shardId: UTF8String, partitionKey: UTF8String, data: Array[Byte],
      sequenceNumber: UTF8String, arrivalMillis: Long, subSequence: java.lang.Long): InternalRow = {
    val values = new Array[Any](schema.length)
    layout.fill(values, stream, shardId, partitionKey, data, sequenceNumber, arrivalMillis)
    if (subSequenceNumber) values(values.length - 1) = subSequence
    new GenericInternalRow(values)
  }
}

object KinesisRecordSchema {
  /** `format("kinesis")`'s rows by default: the Databricks connector's six columns. */
  val Databricks: KinesisRecordSchema = KinesisRecordSchema(RecordLayout.Databricks)

  private val SubSequenceNumber = StructField("subSequenceNumber", LongType)

  /** Every schema the source can return, of every layout: rows in one of them may be rows read from Kinesis. */
  val All: Seq[KinesisRecordSchema] =
    for (layout <- RecordLayout.All; sub <- Seq(false, true)) yield KinesisRecordSchema(layout, sub)
}

/** The columns a format's users expect, in their order, and where a record's values go in them. */
sealed abstract class RecordLayout extends Serializable {
  def columns: Seq[StructField]

  /** Sets the layout's columns (the first `columns.length` values) to a record's. */
  def fill(values: Array[Any], stream: UTF8String, shardId: UTF8String, partitionKey: UTF8String, data: Array[Byte],
      sequenceNumber: UTF8String, arrivalMillis: Long): Unit
}

object RecordLayout {
  private def arrivalMicros(arrivalMillis: Long): Long = arrivalMillis * 1000L

  /** The Databricks connector's six columns, in its order. */
  case object Databricks extends RecordLayout {
    val columns: Seq[StructField] = Seq(
      StructField("partitionKey", StringType),
      StructField("data", BinaryType),
      StructField("stream", StringType),
      StructField("shardId", StringType),
      StructField("sequenceNumber", StringType),
      StructField("approximateArrivalTimestamp", TimestampType))

    def fill(values: Array[Any], stream: UTF8String, shardId: UTF8String, partitionKey: UTF8String, data: Array[Byte],
        sequenceNumber: UTF8String, arrivalMillis: Long): Unit = {
      values(0) = partitionKey
      values(1) = data
      values(2) = stream
      values(3) = shardId
      values(4) = sequenceNumber
      values(5) = arrivalMicros(arrivalMillis)
    }
  }

  /**
   * The awslabs connector's five columns in its order (its `streamName` is Databricks' `stream`), then `shardId`,
   * which it does not have.
   */
  case object Awslabs extends RecordLayout {
    val columns: Seq[StructField] = Seq(
      StructField("data", BinaryType),
      StructField("streamName", StringType),
      StructField("partitionKey", StringType),
      StructField("sequenceNumber", StringType),
      StructField("approximateArrivalTimestamp", TimestampType),
      StructField("shardId", StringType))

    def fill(values: Array[Any], stream: UTF8String, shardId: UTF8String, partitionKey: UTF8String, data: Array[Byte],
        sequenceNumber: UTF8String, arrivalMillis: Long): Unit = {
      values(0) = data
      values(1) = stream
      values(2) = partitionKey
      values(3) = sequenceNumber
      values(4) = arrivalMicros(arrivalMillis)
      values(5) = shardId
    }
  }

  val All: Seq[RecordLayout] = Seq(Databricks, Awslabs)
}
