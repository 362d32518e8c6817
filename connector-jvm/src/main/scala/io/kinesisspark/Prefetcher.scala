package io.kinesisspark

import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.SparkContext

import io.kinesisspark.aws.KinesisClients
import io.kinesisspark.fetch.{FetchLimits, FetchedRange, ShardFetchTask, ShardFetcher}

/**
 * Runs fetch rounds: one Spark job whose tasks each fetch up to `shardsPerTask` shards on an executor and leave
 * the records there as blocks; only [[FetchedRange]] metadata comes back to the driver.
 *
 * In this first cut a round runs synchronously when the stream is asked for its latest offset; the background
 * pipeline builds on the same round.
 */
final class Prefetcher(sc: SparkContext, streamId: Int, shardsPerTask: Int = Prefetcher.DefaultShardsPerTask) {
  private val nextBlock = new AtomicLong(0)

  /** Fetches each (stream, shard, from) once and returns what was read, in no particular order. */
  def fetch(connection: io.kinesisspark.aws.AwsConnection, limits: FetchLimits,
            shards: Seq[(String, String, ShardPosition)]): Seq[FetchedRange] = {
    if (shards.isEmpty) return Nil
    val tasks = shards.map { case (stream, shard, from) =>
      ShardFetchTask(connection, stream, shard, from, limits, streamId, nextBlock.getAndIncrement())
    }
    val groups = tasks.grouped(shardsPerTask).toSeq
    sc.setJobDescription(s"kinesis-spark prefetch: ${tasks.size} shard(s)")
    try {
      sc.parallelize(groups, groups.size)
        .mapPartitions(_.flatMap(_.map(t => ShardFetcher.fetch(t, KinesisClients.api(t.connection)))))
        .collect()
        .toSeq
    } finally sc.setJobDescription(null)
  }
}

object Prefetcher {
  /** The Databricks default of `shardsPerTask`. */
  val DefaultShardsPerTask = 5
}
