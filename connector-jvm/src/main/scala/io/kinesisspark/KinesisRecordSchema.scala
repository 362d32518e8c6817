package io.kinesisspark

import scala.annotation.switch

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.blocks.KinesisRecord

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

  /** What each column holds, by ordinal: one of [[RecordField]]'s. */
  private[kinesisspark] val fields: Array[Int] =
    (if (subSequenceNumber) layout.fields :+ RecordField.SubSequenceNumber else layout.fields).toArray

  /**
   * A row of its own (Spark may keep it); `stream` and `shardId` are passed pre-encoded since they are the same for a
   * whole partition. Rows of a prefetched block's records are read through a [[BlockRow]] instead.
   */
  def toRow(stream: UTF8String, shardId: UTF8String, record: KinesisRecord): InternalRow = {
    val values = new Array[Any](fields.length)
    var i = 0
    while (i < values.length) {
      values(i) = (fields(i): @switch) match {
        case RecordField.PartitionKey => UTF8String.fromString(record.partitionKey)
        case RecordField.Data => record.data
        case RecordField.Stream => stream
        case RecordField.ShardId => shardId
        case RecordField.SequenceNumber => UTF8String.fromString(record.sequenceNumber)
        case RecordField.ArrivalTimestamp => RecordField.micros(record.approximateArrivalMillis)
        case RecordField.SubSequenceNumber => record.subSequenceNumber.map(Long.box).orNull
      }
      i += 1
    }
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

/**
 * What a column of the source's rows holds. Plain `Int`s, so that a row's getters pick the value with a `switch`:
 * they run for every column of every row.
 */
private[kinesisspark] object RecordField {
  final val PartitionKey = 0
  final val Data = 1
  final val Stream = 2
  final val ShardId = 3
  final val SequenceNumber = 4
  /** `approximateArrivalTimestamp`: a timestamp, so microseconds since the epoch ([[micros]]). */
  final val ArrivalTimestamp = 5
  /** The user record's index in its KPL aggregate, or null for a plain record. */
  final val SubSequenceNumber = 6

  /** Spark's value of a timestamp column: microseconds since the epoch. */
  def micros(arrivalMillis: Long): Long = arrivalMillis * 1000L
}

/** The columns a format's users expect, in their order, and what each holds ([[RecordField]]). */
sealed abstract class RecordLayout(columnsAndFields: (StructField, Int)*) extends Serializable {
  val columns: Seq[StructField] = columnsAndFields.map(_._1)
  val fields: Seq[Int] = columnsAndFields.map(_._2)
}

object RecordLayout {
  /** The Databricks connector's six columns, in its order. */
  case object Databricks extends RecordLayout(
    StructField("partitionKey", StringType) -> RecordField.PartitionKey,
    StructField("data", BinaryType) -> RecordField.Data,
    StructField("stream", StringType) -> RecordField.Stream,
    StructField("shardId", StringType) -> RecordField.ShardId,
    StructField("sequenceNumber", StringType) -> RecordField.SequenceNumber,
    StructField("approximateArrivalTimestamp", TimestampType) -> RecordField.ArrivalTimestamp)

  /**
   * The awslabs connector's five columns in its order (its `streamName` is Databricks' `stream`), then `shardId`,
   * which it does not have.
   */
  case object Awslabs extends RecordLayout(
    StructField("data", BinaryType) -> RecordField.Data,
    StructField("streamName", StringType) -> RecordField.Stream,
    StructField("partitionKey", StringType) -> RecordField.PartitionKey,
    StructField("sequenceNumber", StringType) -> RecordField.SequenceNumber,
    StructField("approximateArrivalTimestamp", TimestampType) -> RecordField.ArrivalTimestamp,
    StructField("shardId", StringType) -> RecordField.ShardId)

  val All: Seq[RecordLayout] = Seq(Databricks, Awslabs)
}
