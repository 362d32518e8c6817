package io.kinesisspark

import org.apache.spark.sql.connector.read.InputPartition

import io.kinesisspark.aws.AwsConnection
import io.kinesisspark.fetch.{FetchLimits, FetchedRange}

/**
 * One shard's share of a micro-batch: the records in (`from`, `to`], with the prefetched ranges that hold them
 * (empty when they must be read from Kinesis). Tasks prefer the executors that hold the blocks.
 */
final case class KinesisInputPartition(
    connection: AwsConnection,
    stream: String,
    shardId: String,
    from: ShardPosition,
    to: ShardPosition,
    ranges: Seq[FetchedRange],
    limits: FetchLimits,
    failOnDataLoss: Boolean) extends InputPartition {

  override def preferredLocations(): Array[String] =
    ranges.flatMap(_.block).map(_.location).distinct.toArray
}
