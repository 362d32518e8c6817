package io.kinesisspark.executor

import java.time.Clock

import io.kinesisspark.aws.KinesisApi
import io.kinesisspark.reader.ShardReader
import io.kinesisspark.reader.fanout.{AsyncClients, FanOutShardReader, SdkShardSubscriber, ShardSubscription}
import io.kinesisspark.reader.polling.PollingShardReader

/**
 * Which reader a fetch order asks for: enhanced fan-out when it names a consumer, polling otherwise. The one place
 * an executor makes readers, so that prefetch tasks and any other reader of a shard make them alike.
 *
 * {{{
 *   val reader = ShardReaders.open(task, order, api, Clock.systemUTC())
 * }}}
 */
object ShardReaders {
  /**
   * `order`'s reader from this executor's [[ShardReaderCache]] (or a new one), told what the order knows: whether
   * ListShards reports the shard closed (an enhanced fan-out reader then confirms its end by polling), and when the
   * task began reading (`startedAt`). Prefetch tasks and real-time tasks take their readers this way.
   */
  def acquire(task: ShardFetchTask, order: ShardFetchOrder, api: => KinesisApi, clock: Clock,
      startedAt: Long): ShardReader = {
    val reader = ShardReaderCache.acquire(task.streamId, order.stream, order.shardId, order.from, order.consumerArn)(
      open(task, order, api, clock))
    reader.shardClosed(order.shardClosed)
    reader.roundStarted(startedAt)
    reader
  }

  /** A reader of `order`'s shard from its position, with the task's limits and data-loss policy. */
  def open(task: ShardFetchTask, order: ShardFetchOrder, api: KinesisApi, clock: Clock): ShardReader =
    order.consumerArn match {
      case Some(arn) =>
        // Subscriptions go through this JVM's asynchronous client for the task's connection.
        val subscriber = new SdkShardSubscriber(AsyncClients.kinesis(task.connection))
        new FanOutShardReader(api, { from =>
          val subscription = new ShardSubscription(subscriber, arn, order.stream, order.shardId, from,
            maxEventsPerSubscription = task.efoSubscriptionMaxEvents)
          subscription.start()
          subscription
        }, order.stream, order.shardId, order.from, arn, task.limits, dataLoss = task.dataLoss,
          streamCreatedMillis = order.streamCreatedMillis, hashKeyRange = order.hashKeyRange)
      case None =>
        new PollingShardReader(api, order.stream, order.shardId, order.from, task.limits, clock,
          dataLoss = task.dataLoss, streamCreatedMillis = order.streamCreatedMillis, hashKeyRange = order.hashKeyRange,
          retentionMillis = order.retentionMillis)
    }
}
