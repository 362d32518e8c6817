package io.kinesisspark

import org.apache.spark.sql.connector.read.InputPartition

import io.kinesisspark.aws.AwsConnection
import io.kinesisspark.fetch.FetchLimits

/**
 * One task's share of a micro-batch: one or more shard slices (several when small blocks were coalesced),
 * read one after the other. The task prefers the executor that holds most of its bytes.
 */
final case class KinesisInputPartition(
    connection: AwsConnection,
    slices: Seq[ShardSlice],
    limits: FetchLimits,
    failOnDataLoss: Boolean,
    recordSchema: KinesisRecordSchema) extends InputPartition {

  override def preferredLocations(): Array[String] = PartitionCoalescer.holderOfMost(slices.flatMap(_.ranges)).toArray
}
