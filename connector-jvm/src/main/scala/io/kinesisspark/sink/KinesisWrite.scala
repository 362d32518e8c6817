package io.kinesisspark.sink

import java.util.concurrent.atomic.AtomicLongArray

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, SupportsTruncate, Write, WriteBuilder, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend

import io.kinesisspark.{LoaderBridge, QueryMetrics}

/**
 * A write to Kinesis, batch (`df.write`) or streaming (`df.writeStream`). Kinesis only appends, so a streaming
 * query's `update` and `complete` output modes write the rows Spark hands over each epoch, like Spark's Kafka
 * sink; a batch `overwrite` is refused by Spark (the table has no truncate capability).
 *
 * Commit needs no coordination: by the time a task's commit message reaches the driver, its rows are stored.
 *
 * {{{
 *   new KinesisWriteBuilder(options, columns, totals).build().toStreaming
 * }}}
 */
final class KinesisWriteBuilder(options: KinesisSinkOptions, columns: SinkColumns, totals: SinkTotals)
    extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {
  override def build(): Write = new KinesisWrite(options, columns, totals)
  override def truncate(): WriteBuilder = this
}

final class KinesisWrite(options: KinesisSinkOptions, columns: SinkColumns, totals: SinkTotals)
    extends Write with BatchWrite with StreamingWrite {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[KinesisWrite])

  override def description(): String =
    s"Kinesis[${(options.stream.toSeq ++ columns.streamName.map(_ => "<streamName column>")).mkString(", ")}]"
  override def toBatch: BatchWrite = this
  override def toStreaming: StreamingWrite = this
  override def supportedCustomMetrics(): Array[CustomMetric] = SinkMetrics.supported

  private def factory = new KinesisDataWriterFactory(options, columns)
  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = factory
  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory = {
    metricsRegistered
    factory
  }

  // A streaming query's sink metrics also go to Spark's metrics system (see QueryMetrics), from its first batch on
  // (run on the query's thread, which knows the query's id).
  private lazy val metricsRegistered: Unit = {
    val spark = org.apache.spark.sql.SparkSession.active
    QueryMetrics.currentQueryId(spark).foreach { id =>
      QueryMetrics.register("sink", spark, id, SinkMetrics.Names, () => totals.asJava.asScala.toMap)
    }
  }

  // Every committed task's rows are already stored; refusing a duplicate attempt's commit would unwrite nothing.
  override def useCommitCoordinator(): Boolean = false

  override def commit(messages: Array[WriterCommitMessage]): Unit = committed("batch write", messages)
  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = committed(s"epoch $epochId", messages)

  override def abort(messages: Array[WriterCommitMessage]): Unit = aborted("batch write")
  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = aborted(s"epoch $epochId")

  private def committed(what: String, messages: Array[WriterCommitMessage]): Unit = {
    val sums = messages.flatMap(m => LoaderBridge.adopt[KinesisWriterCommitMessage](m)).map(_.metrics)
      .foldLeft(Map.empty[String, Long])((acc, m) => m.foldLeft(acc) { case (a, (k, v)) => a.updated(k, a.getOrElse(k, 0L) + v) })
    totals.add(sums)
    log.info(s"Kinesis $what committed: ${SinkMetrics.Names.map(n => s"$n=${sums.getOrElse(n, 0L)}").mkString(", ")}")
  }

  private def aborted(what: String): Unit =
    log.warn(s"Kinesis $what aborted: rows its tasks had already put stay in the stream (at-least-once delivery)")
}

/**
 * The sink metrics of every committed task since the table was made (for a streaming query, since it started),
 * reported in each progress report's `sink.metrics`.
 */
final class SinkTotals {
  private val values = new AtomicLongArray(SinkMetrics.Names.size)

  def add(sums: Map[String, Long]): Unit =
    SinkMetrics.Names.zipWithIndex.foreach { case (n, i) => values.addAndGet(i, sums.getOrElse(n, 0L)) }

  def asJava: java.util.Map[String, String] =
    SinkMetrics.Names.zipWithIndex.map { case (n, i) => n -> values.get(i).toString }.toMap.asJava
}
