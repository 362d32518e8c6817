package io.kinesisspark.fetch

import io.kinesisspark.ShardPosition

/** Where one prefetched block lives: its BlockManager id and the executor that holds it. */
final case class BlockRef(streamId: Int, uniqueId: Long, location: String)

/**
 * What one fetch round read from one shard: the records in (`from`, `to`], held in `block` (absent when the
 * round read no records but found the shard's end). `to` is the last record read, or `Finished` when the round
 * reached SHARD_END. This metadata is all the driver keeps; the records stay on the executor.
 */
final case class FetchedRange(
    stream: String,
    shardId: String,
    from: ShardPosition,
    to: ShardPosition,
    block: Option[BlockRef],
    records: Int,
    bytes: Long,
    millisBehindLatest: Long)
