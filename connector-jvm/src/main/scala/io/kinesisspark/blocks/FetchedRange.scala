package io.kinesisspark.blocks

import io.kinesisspark.ShardPosition

/**
 * Where one range's records live: a block (its BlockManager id and the executor that holds it) and the segment of
 * it, `length` bytes from `offset`. A block holds the ranges of one shard's round in order, so it can go once the
 * range holding its `last` segment is dropped (ranges are dropped in order).
 *
 * {{{
 *   BlockRef(streamId = 3, uniqueId = 42L, location = "executor_host_1", offset = 0, length = 1000, last = true)
 * }}}
 */
final case class BlockRef(streamId: Int, uniqueId: Long, location: String, offset: Int, length: Int, last: Boolean)

/**
 * The records of one shard in (`from`, `to`], held in `block` (absent when the range holds no records and only
 * marks the shard's end, or when the block could not be stored, in which case readers go to Kinesis). `to` is the
 * last record read, or `Finished` when reading reached SHARD_END. This metadata is all the driver keeps; the
 * records stay on the executor. `firstArrivalMillis` and `lastArrivalMillis` are the first and last records'
 * ApproximateArrivalTimestamp (Kinesis's clock; `Long.MinValue` when the range holds no records): Trigger.AvailableNow
 * exposes no range that starts after its target time, and the lag metrics count the span of what is buffered.
 */
final case class FetchedRange(
    stream: String,
    shardId: String,
    from: ShardPosition,
    to: ShardPosition,
    block: Option[BlockRef],
    records: Int,
    bytes: Long,
    firstArrivalMillis: Long = Long.MinValue,
    lastArrivalMillis: Long = Long.MinValue)
