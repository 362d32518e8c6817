package io.kinesisspark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.fetch.KinesisRecord

/**
 * The columns of the rows the source returns, and how a record becomes one. Two layouts: `format("kinesis")` has the
 * Databricks connector's; `format("aws-kinesis")` has the awslabs connector's, so code written for either runs as is.
 *
 * {{{
 *   spark.readStream.format("aws-kinesis").option("kinesis.streamName", "clicks").load().printSchema()
 *   // data, streamName, partitionKey, sequenceNumber, approximateArrivalTimestamp, shardId, subSequenceNumber
 * }}}
 */
sealed abstract class KinesisRecordSchema extends Serializable {
  def schema: StructType

  /** One row; `stream` and `shardId` are passed pre-encoded since they are the same for a whole partition. */
  def toRow(stream: UTF8String, shardId: UTF8String, record: KinesisRecord): InternalRow
}

object KinesisRecordSchema {
  private def field(name: String, dataType: DataType) = StructField(name, dataType)
  private val subSequenceNumber = field("subSequenceNumber", LongType)

  private def arrivalMicros(record: KinesisRecord): Long = record.approximateArrivalMillis * 1000L
  private def subSequence(record: KinesisRecord): java.lang.Long = record.subSequenceNumber.map(Long.box).orNull

  /**
   * The Databricks connector's columns in its order, then `subSequenceNumber` (null for a plain record, the user
   * record's index in its KPL aggregate otherwise).
   */
  case object Databricks extends KinesisRecordSchema {
    val schema: StructType = StructType(Seq(
      field("partitionKey", StringType),
      field("data", BinaryType),
      field("stream", StringType),
      field("shardId", StringType),
      field("sequenceNumber", StringType),
      field("approximateArrivalTimestamp", TimestampType),
      subSequenceNumber))

    def toRow(stream: UTF8String, shardId: UTF8String, record: KinesisRecord): InternalRow =
      new GenericInternalRow(Array[Any](UTF8String.fromString(record.partitionKey), record.data, stream, shardId,
        UTF8String.fromString(record.sequenceNumber), arrivalMicros(record), subSequence(record)))
  }

  /**
   * The awslabs connector's five columns in its order (its `streamName` is Databricks' `stream`), then what it does
   * not have: `shardId` and `subSequenceNumber`.
   */
  case object Awslabs extends KinesisRecordSchema {
    val schema: StructType = StructType(Seq(
      field("data", BinaryType),
      field("streamName", StringType),
      field("partitionKey", StringType),
      field("sequenceNumber", StringType),
      field("approximateArrivalTimestamp", TimestampType),
      field("shardId", StringType),
      subSequenceNumber))

    def toRow(stream: UTF8String, shardId: UTF8String, record: KinesisRecord): InternalRow =
      new GenericInternalRow(Array[Any](record.data, stream, UTF8String.fromString(record.partitionKey),
        UTF8String.fromString(record.sequenceNumber), arrivalMicros(record), shardId, subSequence(record)))
  }
}
