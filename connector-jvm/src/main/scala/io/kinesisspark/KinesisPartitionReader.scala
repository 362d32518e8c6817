package io.kinesisspark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.aws.KinesisClients
import io.kinesisspark.blocks.{KinesisRecord, RecordBlockCodec}
import io.kinesisspark.executor.ShardRangeIterator

/**
 * Creates a [[KinesisPartitionReader]] per [[KinesisInputPartition]] on executors. The counters travel here, not in
 * the partitions: Spark deserializes a task's partition before the task's context exists, so an accumulator inside it
 * would count into nothing; the factory comes with the task's RDD, inside the task.
 */
final case class KinesisPartitionReaderFactory(blockReads: Option[BlockReadCounters]) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new KinesisPartitionReader(partition.asInstanceOf[KinesisInputPartition], blockReads)
}

/** Turns the records of a partition's shard slices, one slice after the other, into rows of the query's [[KinesisRecordSchema]]. */
final class KinesisPartitionReader(partition: KinesisInputPartition, blockReads: Option[BlockReadCounters] = None)
    extends PartitionReader[InternalRow] {
  private val dataLoss = DataLossPolicy(partition.failOnDataLoss)
  private val rows: Iterator[InternalRow] = partition.slices.iterator.flatMap { slice =>
    val stream = UTF8String.fromString(slice.stream)
    val shardId = UTF8String.fromString(slice.shardId)
    val schema = partition.recordSchema
    // One view for the slice's block rows: the ProjectExec above the scan copies each before asking for the next.
    val row = new BlockRow(schema, stream, shardId)
    new ShardRangeIterator(KinesisClients.api(partition.connection), slice.stream, slice.shardId, slice.from, slice.to,
      slice.ranges, partition.limits, dataLoss, new ShardRangeIterator.Output[InternalRow] {
        def fromRecord(record: KinesisRecord): InternalRow = schema.toRow(stream, shardId, record)
        def fromBlock(block: RecordBlockCodec.Cursor): InternalRow = row.at(block)
        override def blockRead(local: Boolean): Unit = blockReads.foreach(_.read(local))
        override def blockGone(): Unit = blockReads.foreach(_.gone())
      })
  }
  private var current: InternalRow = _

  override def next(): Boolean = {
    val more = rows.hasNext
    if (more) current = rows.next()
    more
  }

  override def get(): InternalRow = current

  override def close(): Unit = ()
}
