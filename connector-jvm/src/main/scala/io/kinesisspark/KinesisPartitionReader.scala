package io.kinesisspark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.aws.KinesisClients
import io.kinesisspark.fetch.ShardRangeIterator

/** Creates a [[KinesisPartitionReader]] per [[KinesisInputPartition]] on executors. */
object KinesisPartitionReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new KinesisPartitionReader(partition.asInstanceOf[KinesisInputPartition])
}

/** Turns the records of one shard range into rows of [[KinesisRecordSchema]]. */
final class KinesisPartitionReader(partition: KinesisInputPartition) extends PartitionReader[InternalRow] {
  private val stream = UTF8String.fromString(partition.stream)
  private val shardId = UTF8String.fromString(partition.shardId)
  private val records = new ShardRangeIterator(
    KinesisClients.api(partition.connection), partition.stream, partition.shardId, partition.from, partition.to,
    partition.ranges, partition.limits, DataLossPolicy(partition.failOnDataLoss))
  private var current: InternalRow = _

  override def next(): Boolean = {
    val more = records.hasNext
    if (more) current = KinesisRecordSchema.toRow(stream, shardId, records.next())
    more
  }

  override def get(): InternalRow = current

  override def close(): Unit = ()
}
