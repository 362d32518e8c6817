package io.kinesisspark.aws

import io.kinesisspark.ShardPosition

/**
 * The connector's only road to Kinesis. Everything above it (shard tracking, fetching, re-reading) talks to
 * this interface, so that logic can be unit-tested against a fake.
 */
trait KinesisApi {
  /** Fails with [[io.kinesisspark.KinesisSparkException]] naming the stream when it does not exist. */
  def describeStream(stream: String): StreamSummary

  /** All shards of the stream that are still within retention (open and closed), paging `pageSize` at a time. */
  def listShards(stream: String, pageSize: Int): Seq[ShardInfo]

  /** An iterator that starts reading at `position`; `Finished` is not a valid argument. */
  def shardIterator(stream: String, shardId: String, position: ShardPosition): String

  def getRecords(stream: String, iterator: String, limit: Int): GetRecordsResult
}

final case class StreamSummary(name: String, arn: String, status: String, openShardCount: Int)

/**
 * @param parentShardIds        the shard's parent, and for a merge the adjacent parent
 * @param closed                whether the shard has an ending sequence number (no new records will arrive)
 */
final case class ShardInfo(shardId: String, parentShardIds: Seq[String], closed: Boolean)

/** A record as Kinesis returned it (before any KPL de-aggregation). */
final case class FetchedRecord(
    sequenceNumber: String,
    partitionKey: String,
    data: Array[Byte],
    approximateArrivalMillis: Long)

/**
 * @param nextIterator       `None` when the shard is closed and fully read (SHARD_END)
 * @param millisBehindLatest how far the response's last record is behind the tip of the shard
 */
final case class GetRecordsResult(records: Seq[FetchedRecord], nextIterator: Option[String], millisBehindLatest: Long)
