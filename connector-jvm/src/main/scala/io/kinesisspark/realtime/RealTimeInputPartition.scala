package io.kinesisspark.realtime

import org.apache.spark.sql.connector.read.InputPartition

import io.kinesisspark.KinesisRecordSchema
import io.kinesisspark.executor.ShardFetchTask

/**
 * One real-time task: it reads `task`'s shards from their positions until Spark's batch ends, handing each record to
 * Spark as it comes. The task's orders travel compactly, as a prefetch task's do ([[ShardFetchTask]]); a partition
 * with no orders (every shard finished, or waiting for its parents) waits out the batch, so an idle stream does not
 * make Spark plan batches back to back.
 *
 * {{{
 *   RealTimeInputPartition(ShardFetchTask(connection, limits, streamId, orders), schema, Some("executor_host_1"))
 * }}}
 *
 * @param location the executor that read these shards in the batch before, if known
 * @param link     how the task reaches the driver about resharding within the batch; none: children wait for the
 *                 next batch
 */
final case class RealTimeInputPartition(task: ShardFetchTask, recordSchema: KinesisRecordSchema,
    location: Option[String], link: Option[BatchLink] = None) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}
