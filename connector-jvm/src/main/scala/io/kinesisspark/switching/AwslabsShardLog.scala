package io.kinesisspark.switching

/**
 * Where an awslabs connector query wrote its position in each shard at the end of each batch: files under its
 * metadata path ([[AwslabsShardFiles]]) or items of a DynamoDB table
 * ([[io.kinesisspark.aws.DynamoDbAwslabsShardLog]]); tests give their own.
 *
 * {{{
 *   val log: AwslabsShardLog = new AwslabsShardFiles("s3a://bucket/checkpoints/orders/sources/0", hadoopConf)
 *   log.positions(41).map(_.shardId)   // Seq("shardId-000000000000", ...): where batch 41 left each shard it read
 * }}}
 */
trait AwslabsShardLog {
  /** Where the log is, for messages. */
  def name: String

  /** The positions written at the end of batch `batchId`, one per shard the batch read; empty when none were. */
  def positions(batchId: Long): Seq[AwslabsPosition]
}
