package io.kinesisspark.fetch

import java.time.Clock

import org.apache.spark.TaskContext
import org.apache.spark.kinesisspark.BlockStoreBridge

import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.KinesisApi

/**
 * Runs on an executor: reads the shards of one task, interleaved (always the shard whose reader may call
 * soonest), until each is caught up with its tip, has ended, or has read `maxRoundBytes`, or the round has run
 * `maxRoundMillis`, or the task has read its share of the buffer's free room. Each GetRecords response that returned records becomes one block in the local BlockManager.
 */
object ShardFetcher {

  def fetch(task: ShardFetchTask, api: KinesisApi, clock: Clock = Clock.systemUTC()): Seq[ShardFetchResult] = {
    val attempt = Option(TaskContext.get()).map(_.attemptNumber()).getOrElse(0)
    val started = clock.millis()
    val states = task.orders.map { order =>
      val reader = ShardReaderCache.acquire(task.streamId, order.stream, order.shardId, order.from) {
        new ShardReader(api, order.stream, order.shardId, order.from, task.limits, clock)
      }
      new ShardState(order, reader, reader.calls, reader.throttles, reader.callMillis)
    }
    try {
      val deadline = started + task.limits.maxRoundMillis
      var active = states
      // A shard whose next call may only come after the deadline (spacing, byte budget, throttling back-off)
      // waits for the next round instead of holding this one up.
      while (active.nonEmpty && active.exists(_.reader.readyAt < deadline) && states.map(_.bytesRead).sum < task.maxBytes) {
        val state = active.minBy(_.reader.readyAt)
        val batch = state.reader.next()
        state.record(batch, task, attempt)
        active = active.filterNot(_.done(task.limits))
      }
    } finally states.foreach(s => ShardReaderCache.release(task.streamId, s.reader))
    val location = BlockStoreBridge.location
    states.map(_.result(location))
  }

  private final class ShardState(order: ShardFetchOrder, val reader: ShardReader,
                                 calls0: Long, throttles0: Long, callMillis0: Long) {
    private val ranges = Vector.newBuilder[FetchedRange]
    private var position = order.from
    private var bytes = 0L
    private var caughtUp = false
    private var lag: Option[Long] = None
    private var blocks = 0

    def record(batch: ShardReadBatch, task: ShardFetchTask, attempt: Int): Unit = {
      if (batch ne ShardReadBatch.Throttled) {
        caughtUp = batch.caughtUp
        lag = Some(batch.millisBehindLatest)
      }
      val to = if (batch.ended) Finished else reader.position
      if (batch.records.nonEmpty) {
        // Attempt and counter in the id: a retried task never reuses a block id holding other records.
        val uniqueId = (order.orderId << 24) | (attempt.toLong << 20) | blocks
        blocks += 1
        val recordBytes = batch.records.iterator.map(_.sizeInBytes).sum
        val block = BlockStoreBridge.put(task.streamId, uniqueId, RecordBlockCodec.encode(batch.records))
          .map(BlockRef(task.streamId, uniqueId, _))
        ranges += FetchedRange(order.stream, order.shardId, position, to, block, batch.records.size, recordBytes)
        bytes += recordBytes
      } else if (batch.ended) {
        ranges += FetchedRange(order.stream, order.shardId, position, Finished, None, 0, 0L)
      }
      position = to
    }

    def bytesRead: Long = bytes

    def done(limits: FetchLimits): Boolean = reader.ended || caughtUp || bytes >= limits.maxRoundBytes

    def result(location: String): ShardFetchResult = ShardFetchResult(
      order.stream, order.shardId, ranges.result(), caughtUp || reader.ended, lag,
      reader.calls - calls0, reader.throttles - throttles0, reader.callMillis - callMillis0, location)
  }
}
