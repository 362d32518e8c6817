package io.kinesisspark

import org.apache.spark.sql.types._

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

  /** A writer of this schema's rows, for one reader (see [[RecordRowWriter]]). */
  def rowWriter(): RecordRowWriter = new RecordRowWriter(this)
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
 * The columns a format's users expect, in their order, and where a record's values go in them: each `...At` is a
 * column's index.
 */
sealed abstract class RecordLayout extends Serializable {
  def columns: Seq[StructField]
  def partitionKeyAt: Int
  def dataAt: Int
  def streamAt: Int
  def shardIdAt: Int
  def sequenceNumberAt: Int
  /** `approximateArrivalTimestamp`: a timestamp, in microseconds like every Spark timestamp. */
  def arrivalAt: Int
}

object RecordLayout {
  /** The Databricks connector's six columns, in its order. */
  case object Databricks extends RecordLayout {
    val columns: Seq[StructField] = Seq(
      StructField("partitionKey", StringType),
      StructField("data", BinaryType),
      StructField("stream", StringType),
      StructField("shardId", StringType),
      StructField("sequenceNumber", StringType),
      StructField("approximateArrivalTimestamp", TimestampType))
    val (partitionKeyAt, dataAt, streamAt, shardIdAt, sequenceNumberAt, arrivalAt) = (0, 1, 2, 3, 4, 5)
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
    val (dataAt, streamAt, partitionKeyAt, sequenceNumberAt, arrivalAt, shardIdAt) = (0, 1, 2, 3, 4, 5)
  }

  val All: Seq[RecordLayout] = Seq(Databricks, Awslabs)
}
