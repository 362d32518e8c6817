package io.kinesisspark.realtime

import org.apache.spark.sql.connector.read.streaming.PartitionOffset

import io.kinesisspark.ShardPosition
import io.kinesisspark.reader.ShardCounters

/**
 * Where one shard's reading stood when a real-time task ended, and how it fared in the task.
 *
 * @param position           after the last record the task handed to Spark (its start when it handed none)
 * @param records            records handed to Spark in the task
 * @param bytes              their data bytes
 * @param millisBehindLatest the shard's lag after the task's last successful call, if any call succeeded
 * @param caughtUp           the last call reached the shard's tip (or its end)
 * @param counters           what the shard's reader counted in the task (calls, throttling, data loss)
 */
final case class ShardProgress(
    stream: String,
    shardId: String,
    position: ShardPosition,
    records: Long,
    bytes: Long,
    millisBehindLatest: Option[Long],
    caughtUp: Boolean,
    counters: ShardCounters)

/**
 * A real-time task's offset, as Spark collects it when the task ends: its shards' progress, and the executor it ran
 * on (the next batch asks for the same one, where the shards' readers and subscriptions wait in
 * [[io.kinesisspark.executor.ShardReaderCache]]).
 *
 * {{{
 *   KinesisPartitionOffset(Seq(ShardProgress("clicks", "shardId-000000000000", ShardPosition.Finished, 3, 120,
 *     Some(0L), caughtUp = true, ShardCounters.Zero)), Some("executor_host_1"))
 * }}}
 */
final case class KinesisPartitionOffset(shards: Seq[ShardProgress], location: Option[String]) extends PartitionOffset
