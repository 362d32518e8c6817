package io.kinesisspark.sink

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/**
 * What one writer task did, counted on its thread and reported to Spark as custom task metrics (summed over
 * tasks in the SQL UI's write node), to the driver in each task's commit message, and from there in a streaming
 * query's progress (`sink.metrics`).
 *
 * {{{
 *   metrics.recordsWritten += 1
 *   metrics.snapshot  // Map("recordsWritten" -> 1, "bytesWritten" -> 0, ...)
 * }}}
 */
final class SinkMetrics {
  /** Rows acknowledged by Kinesis. */
  @volatile var recordsWritten = 0L
  /** Their data and partition key bytes. */
  @volatile var bytesWritten = 0L
  /** Kinesis records acknowledged: rows put alone, and aggregates. */
  @volatile var kinesisRecordsWritten = 0L
  /** KPL aggregates acknowledged. */
  @volatile var aggregatesWritten = 0L
  /** PutRecords calls made, whatever their outcome. */
  @volatile var putRecordsCalls = 0L
  /** Kinesis records put again after Kinesis refused them or their call failed. */
  @volatile var retriedEntries = 0L
  /** Kinesis records refused with ProvisionedThroughputExceeded (or their call throttled). */
  @volatile var throttledEntries = 0L

  def snapshot: Map[String, Long] = Map(
    SinkMetrics.RecordsWritten -> recordsWritten,
    SinkMetrics.BytesWritten -> bytesWritten,
    SinkMetrics.KinesisRecordsWritten -> kinesisRecordsWritten,
    SinkMetrics.AggregatesWritten -> aggregatesWritten,
    SinkMetrics.PutRecordsCalls -> putRecordsCalls,
    SinkMetrics.RetriedEntries -> retriedEntries,
    SinkMetrics.ThrottledEntries -> throttledEntries)

  def taskMetrics: Array[CustomTaskMetric] = snapshot.toArray.map { case (metric, count) =>
    new CustomTaskMetric {
      override def name(): String = metric
      override def value(): Long = count
    }
  }
}

object SinkMetrics {
  val RecordsWritten = "recordsWritten"
  val BytesWritten = "bytesWritten"
  val KinesisRecordsWritten = "kinesisRecordsWritten"
  val AggregatesWritten = "aggregatesWritten"
  val PutRecordsCalls = "putRecordsCalls"
  val RetriedEntries = "retriedEntries"
  val ThrottledEntries = "throttledEntries"

  val Names: Seq[String] = Seq(RecordsWritten, BytesWritten, KinesisRecordsWritten, AggregatesWritten,
    PutRecordsCalls, RetriedEntries, ThrottledEntries)

  /** The metrics as Spark shows them; Spark makes each from its class name, so each is a class of its own. */
  def supported: Array[CustomMetric] = Array(new RecordsWrittenMetric, new BytesWrittenMetric,
    new KinesisRecordsWrittenMetric, new AggregatesWrittenMetric, new PutRecordsCallsMetric,
    new RetriedEntriesMetric, new ThrottledEntriesMetric)
}

private[sink] abstract class SinkSumMetric(metric: String, text: String) extends CustomSumMetric {
  override def name(): String = metric
  override def description(): String = text
}

final class RecordsWrittenMetric extends SinkSumMetric(SinkMetrics.RecordsWritten, "rows written to Kinesis")
final class BytesWrittenMetric extends SinkSumMetric(SinkMetrics.BytesWritten, "row bytes written to Kinesis")
final class KinesisRecordsWrittenMetric extends SinkSumMetric(SinkMetrics.KinesisRecordsWritten, "Kinesis records written")
final class AggregatesWrittenMetric extends SinkSumMetric(SinkMetrics.AggregatesWritten, "KPL aggregates written")
final class PutRecordsCallsMetric extends SinkSumMetric(SinkMetrics.PutRecordsCalls, "PutRecords calls")
final class RetriedEntriesMetric extends SinkSumMetric(SinkMetrics.RetriedEntries, "Kinesis records retried")
final class ThrottledEntriesMetric extends SinkSumMetric(SinkMetrics.ThrottledEntries, "Kinesis records throttled")
