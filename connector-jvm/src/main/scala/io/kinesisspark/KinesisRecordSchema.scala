package io.kinesisspark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.fetch.KinesisRecord

/** The rows the source returns; the columns and types of the Databricks Kinesis connector, in its order. */
object KinesisRecordSchema {
  val schema: StructType = StructType(Seq(
    StructField("partitionKey", StringType),
    StructField("data", BinaryType),
    StructField("stream", StringType),
    StructField("shardId", StringType),
    StructField("sequenceNumber", StringType),
    StructField("approximateArrivalTimestamp", TimestampType)))

  /** One row; `stream` and `shardId` are passed pre-encoded since they are the same for a whole partition. */
  def toRow(stream: UTF8String, shardId: UTF8String, record: KinesisRecord): InternalRow =
    new GenericInternalRow(Array[Any](
      UTF8String.fromString(record.partitionKey),
      record.data,
      stream,
      shardId,
      UTF8String.fromString(record.sequenceNumber),
      record.approximateArrivalMillis * 1000L))
}
