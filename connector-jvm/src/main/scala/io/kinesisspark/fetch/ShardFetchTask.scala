package io.kinesisspark.fetch

import io.kinesisspark.ShardPosition
import io.kinesisspark.aws.AwsConnection

/** The driver's order to fetch one shard from `from`, storing what it reads as block (`streamId`, `uniqueId`). */
final case class ShardFetchTask(
    connection: AwsConnection,
    stream: String,
    shardId: String,
    from: ShardPosition,
    limits: FetchLimits,
    streamId: Int,
    uniqueId: Long)
