package io.kinesisspark.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}

import io.kinesisspark.kpl.UserRecord

/**
 * Writes one task's rows: each row is checked and converted ([[RowConverter]]), packed into KPL aggregates if
 * `aggregation` is on ([[KplAggregator]]), or else placed in its shard by `shardMap` when the sender paces each
 * shard (a stream without a map, its shards not listable, goes unpaced), and put by a [[PutRecordsSender]]. [[commit]] returns only once
 * Kinesis has stored every row, so a committed task (and so a committed batch or epoch) means "written"; a task
 * that fails after some calls succeeded leaves those rows in the stream, and Spark's retry writes them again:
 * delivery is at-least-once.
 *
 * {{{
 *   val writer = factory.createWriter(partitionId, taskId)
 *   rows.foreach(writer.write)
 *   writer.commit()   // every row acknowledged by Kinesis
 * }}}
 */
final class KinesisDataWriter(convert: RowConverter, sender: PutRecordsSender,
    aggregator: Option[KplAggregator], shardMap: Option[String => Option[ShardMap]], metrics: SinkMetrics)
    extends DataWriter[InternalRow] with FlushAfterAllRows {

  override def write(row: InternalRow): Unit = {
    val (stream, record) = convert(row)
    aggregator match {
      case Some(a) => a.add(stream, record)
      case None    =>
        // RowConverter has refused malformed explicit hash keys: every record has a hash key here.
        val shard = shardMap.flatMap(_(stream)).map(_.shardFor(record.effectiveHashKey.get))
        sender.add(KinesisDataWriter.plain(stream, record, shard))
    }
  }

  /**
   * Starts calls with the rows added so far without waiting for a full call ([[PutRecordsSender.sendReady]]); KPL
   * aggregates still wait until they are full or [[commit]].
   */
  def sendReady(): Unit = sender.sendReady()

  override def commit(): WriterCommitMessage = {
    flush()
    KinesisWriterCommitMessage(metrics.snapshot)
  }

  override protected def flush(): Unit = {
    aggregator.foreach(_.flush())
    sender.flush()
  }

  override def abort(): Unit = sender.abort()

  override def close(): Unit = ()

  override def currentMetricsValues(): Array[CustomTaskMetric] = metrics.taskMetrics
}

object KinesisDataWriter {
  /** A row put as a Kinesis record of its own, in `shard` if the shard map was asked. */
  def plain(stream: String, record: UserRecord, shard: Option[String] = None): SinkEntry =
    SinkEntry(stream, io.kinesisspark.aws.PutEntry(record.partitionKey, record.explicitHashKey, record.data),
      orderKey = record.partitionKey, userRecords = 1,
      userBytes = record.data.length.toLong + SinkEntry.utf8Length(record.partitionKey), predictedShard = shard)
}

/** What a committed writer task did, for the driver's totals (see [[SinkMetrics]]). */
final case class KinesisWriterCommitMessage(metrics: Map[String, Long]) extends WriterCommitMessage
