package io.kinesisspark.fetch

import io.kinesisspark.{DataLossPolicy, ShardPosition}
import io.kinesisspark.aws.{AwsConnection, HashKeyRange}

/**
 * One prefetch task: fetch each shard of `orders` from its position, on one executor, within `limits`, and stop
 * once the task has read `maxBytes` (its share of the room left in the buffer; it may overshoot by one response).
 * Blocks are named (`streamId`, id made from the order's `orderId`, the task attempt and a counter).
 *
 * @param arrivalCut Trigger.AvailableNow's target time: a response whose records arrived on both sides of it is
 *                   stored as two ranges, so that the target falls between ranges; a shard that has read past it
 *                   stops for the round
 *
 * @param efoSubscriptionMaxEvents test only: end each enhanced fan-out subscription after this many events
 */
final case class ShardFetchTask(
    connection: AwsConnection,
    limits: FetchLimits,
    streamId: Int,
    orders: Seq[ShardFetchOrder],
    maxBytes: Long = Long.MaxValue,
    dataLoss: DataLossPolicy = DataLossPolicy(failOnDataLoss = true),
    efoSubscriptionMaxEvents: Option[Int] = None,
    arrivalCut: Option[Long] = None)

/**
 * Fetch `shardId` of `stream` from `from`.
 *
 * @param streamCreatedMillis the stream's creation time as the driver last listed it, if known: lets the reader
 *                            tell a stream deleted and created again from records trimmed by retention
 * @param hashKeyRange        the shard's, for checking KPL user records
 * @param consumerArn         with enhanced fan-out, the ARN of the stream's registered consumer to subscribe with;
 *                            `None` to poll with GetRecords
 * @param shardClosed         ListShards reports the shard closed (it has an ending sequence number)
 */
final case class ShardFetchOrder(stream: String, shardId: String, from: ShardPosition, orderId: Long,
    streamCreatedMillis: Option[Long] = None, hashKeyRange: Option[HashKeyRange] = None,
    consumerArn: Option[String] = None, shardClosed: Boolean = false)

/**
 * What one task read from one shard: contiguous ranges (one per GetRecords call that returned records, or one
 * empty range marking SHARD_END), and how the shard's reader fared.
 *
 * @param caughtUp           the last call reached the tip of the shard (or its end)
 * @param millisBehindLatest the shard's lag after the last successful call, if any call succeeded
 * @param dataLossEvents     times records were found gone and skipped (only with `failOnDataLoss=false`)
 * @param outOfRangeSubRecords KPL user records returned although their hash key is outside the shard's range
 * @param corruptAggregates  records returned raw because they started like KPL aggregates but were not valid
 * @param consumerMissing    with enhanced fan-out, Kinesis said the consumer does not exist (the driver checks it)
 * @param subscriptions      with enhanced fan-out, subscriptions the service accepted during the task
 * @param failure            the error that ended the task (see [[FetchFailure]]); the driver fails the query with it
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
    location: String,
    dataLossEvents: Long = 0L,
    outOfRangeSubRecords: Long = 0L,
    corruptAggregates: Long = 0L,
    consumerMissing: Boolean = false,
    subscriptions: Long = 0L,
    failure: Option[Throwable] = None)
