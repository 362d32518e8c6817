package io.kinesisspark.fetch

import java.time.Clock

import org.apache.spark.kinesisspark.BlockStoreBridge

import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.KinesisApi

/**
 * Runs on an executor: reads one shard from the task's position until it is caught up with the tip, reaches
 * its end, or hits the round's time or byte limit, and stores the records as one block in the local
 * BlockManager.
 */
object ShardFetcher {

  def fetch(task: ShardFetchTask, api: KinesisApi, clock: Clock = Clock.systemUTC()): FetchedRange = {
    val reader = new ShardReader(api, task.stream, task.shardId, task.from, task.limits, clock)
    val records = Vector.newBuilder[KinesisRecord]
    val started = clock.millis()
    var bytes = 0L
    var count = 0
    var lag = 0L
    var done = false
    while (!done) {
      val batch = reader.next()
      records ++= batch.records
      count += batch.records.size
      bytes += batch.records.iterator.map(_.sizeInBytes).sum
      lag = batch.millisBehindLatest
      done = batch.caughtUp || bytes >= task.limits.maxRoundBytes ||
        clock.millis() - started >= task.limits.maxRoundMillis
    }
    val block =
      if (count == 0) None
      else BlockStoreBridge.put(task.streamId, task.uniqueId, RecordBlockCodec.encode(records.result()))
        .map(BlockRef(task.streamId, task.uniqueId, _))
    val to = if (reader.ended) Finished else reader.position
    FetchedRange(task.stream, task.shardId, task.from, to, block, count, bytes, lag)
  }
}
