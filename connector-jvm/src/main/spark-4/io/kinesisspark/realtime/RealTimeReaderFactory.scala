package io.kinesisspark.realtime

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/**
 * Readers of both kinds of partition a [[KinesisRealTimeStream]] plans: real-time tasks, and micro-batch slices
 * (`microBatch` reads those, for a batch replayed with a known end).
 */
final case class RealTimeReaderFactory(microBatch: PartitionReaderFactory) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = partition match {
    case p: RealTimeInputPartition => new RealTimePartitionReader(p)
    case other                     => microBatch.createReader(other)
  }
}
