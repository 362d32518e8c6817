package io.kinesisspark.fetch

import io.kinesisspark.ShardPosition
import io.kinesisspark.aws.AwsConnection

/**
 * One prefetch task: fetch each shard of `orders` from its position, on one executor, within `limits`, and stop
 * once the task has read `maxBytes` (its share of the room left in the buffer; it may overshoot by one response).
 * Blocks are named (`streamId`, id made from the order's `orderId`, the task attempt and a counter).
 */
final case class ShardFetchTask(
    connection: AwsConnection,
    limits: FetchLimits,
    streamId: Int,
    orders: Seq[ShardFetchOrder],
    maxBytes: Long = Long.MaxValue)

/** Fetch `shardId` of `stream` from `from`. */
final case class ShardFetchOrder(stream: String, shardId: String, from: ShardPosition, orderId: Long)

/**
 * What one task read from one shard: contiguous ranges (one per GetRecords call that returned records, or one
 * empty range marking SHARD_END), and how the shard's reader fared.
 *
 * @param caughtUp           the last call reached the tip of the shard (or its end)
 * @param millisBehindLatest the shard's lag after the last successful call, if any call succeeded
 */
final case class ShardFetchResult(
    stream: String,
    shardId: String,
    ranges: Seq[FetchedRange],
    caughtUp: Boolean,
    millisBehindLatest: Option[Long],
    calls: Long,
    throttles: Long,
    callMillis: Long,
    location: String)
