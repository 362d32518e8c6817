package io.kinesisspark.aws

import io.kinesisspark.ShardPosition

/**
 * The connector's only road to Kinesis. Everything above it (shard tracking, fetching, re-reading) talks to
 * this interface, so that logic can be unit-tested against a fake.
 */
trait KinesisApi {
  /** Fails with [[io.kinesisspark.KinesisSparkException]] naming the stream when it does not exist. */
  def describeStream(stream: String): StreamSummary

  /**
   * All shards of the stream that are still within retention (open and closed), paging `pageSize` at a time; with
   * `afterShardId`, only the shards whose ids follow it (ListShards' ShardFilter AFTER_SHARD_ID).
   */
  def listShards(stream: String, pageSize: Int, afterShardId: Option[String] = None): Seq[ShardInfo]

  /**
   * An iterator that starts reading at `position`; `Finished` is not a valid argument. Fails with
   * [[PositionUnavailableException]] when the position's record is no longer in the shard.
   */
  def shardIterator(stream: String, shardId: String, position: ShardPosition): String

  def getRecords(stream: String, iterator: String, limit: Int): GetRecordsResult

  /** The stream's registered enhanced fan-out consumers, in all states. */
  def listConsumers(stream: String): Seq[StreamConsumer]

  /** The stream's consumer called `name`, or `None` when there is none. */
  def describeConsumer(stream: String, name: String): Option[StreamConsumer]

  /**
   * Registers a consumer (it starts CREATING). Fails with [[ConsumerInUseException]] when one of that name
   * already exists.
   */
  def registerConsumer(stream: String, name: String): StreamConsumer

  /** Starts deregistering a consumer; returns false when there was no consumer of that name. */
  def deregisterConsumer(stream: String, name: String): Boolean

  /**
   * One PutRecords call: the entries in order, answered entry by entry in the same order (a call can succeed
   * for some entries and fail for others). Throws when the call as a whole fails.
   */
  def putRecords(stream: String, entries: IndexedSeq[PutEntry]): IndexedSeq[PutEntryResult]
}

/**
 * One record to put.
 *
 * @param explicitHashKey a decimal hash key that places the record instead of its partition key's MD5
 */
final case class PutEntry(partitionKey: String, explicitHashKey: Option[String], data: Array[Byte])

/**
 * What Kinesis answered for one entry of a PutRecords call: the shard and sequence number it was stored at, or
 * an error code (`ProvisionedThroughputExceededException`, `InternalFailure`, ...) and message.
 */
final case class PutEntryResult(shardId: Option[String], sequenceNumber: Option[String], errorCode: Option[String],
    errorMessage: Option[String]) {
  def succeeded: Boolean = errorCode.isEmpty
}

object PutEntryResult {
  def stored(shardId: String, sequenceNumber: String): PutEntryResult =
    PutEntryResult(Some(shardId), Some(sequenceNumber), None, None)

  def failed(code: String, message: String): PutEntryResult = PutEntryResult(None, None, Some(code), Some(message))
}

/**
 * @param createdMillis when the stream was created: a stream deleted and created again under the same name has
 *                      the same name and ARN but a new creation time (and new records, under reused shard ids)
 */
final case class StreamSummary(
    name: String,
    arn: String,
    status: String,
    openShardCount: Int,
    createdMillis: Long,
    retentionHours: Int)

/**
 * An enhanced fan-out consumer of a stream.
 *
 * {{{
 *   StreamConsumer("kinesis_spark_orders", "arn:aws:kinesis:...:stream/s/consumer/kinesis_spark_orders:1700000000",
 *     "ACTIVE", 1700000000000L).active  // true
 * }}}
 *
 * @param status `CREATING`, `ACTIVE` or `DELETING`
 */
final case class StreamConsumer(name: String, arn: String, status: String, createdMillis: Long) {
  def active: Boolean = status == "ACTIVE"
  def deleting: Boolean = status == "DELETING"
}

/** RegisterStreamConsumer was refused because a consumer of that name exists (or is being deleted). */
final class ConsumerInUseException(val stream: String, val name: String, detail: String)
  extends RuntimeException(s"consumer '$name' of stream '$stream' already exists ($detail)")

/**
 * Kinesis no longer has the record a position refers to (trimmed by retention, or from a deleted stream), so
 * reading cannot resume exactly there.
 */
final class PositionUnavailableException(val stream: String, val shardId: String, val position: ShardPosition,
    val detail: String) extends RuntimeException(s"stream '$stream', $shardId: no record at $position ($detail)")

/**
 * Kinesis has no such shard in a stream that exists: a closed shard is removed once its records are older than the
 * retention period, so a reader that had not finished it lost the rest.
 */
final class ShardNotFoundException(val stream: String, val shardId: String, val detail: String)
  extends RuntimeException(s"stream '$stream' has no shard $shardId ($detail)")

/**
 * Kinesis refused an AT_TIMESTAMP position because the time is ahead of its own clock: a start time in the future,
 * or a driver whose clock runs ahead of Kinesis's (AWS answers InvalidArgumentException "The timestampInMillis
 * parameter cannot be greater than the currentTimestampInMillis"; an older time is never refused, it starts at the
 * oldest record). Nothing at or after the time exists yet, so the reader has nothing to read until it does.
 */
final class PositionInFutureException(val stream: String, val shardId: String, val timestampMillis: Long,
    val detail: String) extends RuntimeException(
  s"stream '$stream', $shardId: Kinesis has no records at or after ${java.time.Instant.ofEpochMilli(timestampMillis)} " +
    s"yet ($detail)")

/**
 * @param parentShardIds        the shard's parent, and for a merge the adjacent parent
 * @param closed                whether the shard has an ending sequence number (no new records will arrive)
 * @param hashKeyRange          the hash keys the shard takes records for (`None` when not known)
 * @param sequenceNumberRange   the sequence numbers of the shard's records (`None` when not known)
 */
final case class ShardInfo(shardId: String, parentShardIds: Seq[String], closed: Boolean,
    hashKeyRange: Option[HashKeyRange] = None, sequenceNumberRange: Option[SequenceNumberRange] = None)

/**
 * The sequence numbers a shard gives its records: from `starting`, up to `ending` once the shard is closed.
 *
 * {{{
 *   SequenceNumberRange(BigInt(100), None).contains(BigInt(150))  // true: an open shard has no upper end
 * }}}
 */
final case class SequenceNumberRange(starting: BigInt, ending: Option[BigInt]) {
  def contains(sequenceNumber: BigInt): Boolean = sequenceNumber >= starting && ending.forall(sequenceNumber <= _)

  override def toString: String = s"[$starting, ${ending.fold("open")(_.toString)}]"
}

object SequenceNumberRange {
  /**
   * The range ListShards gives, with an ending below the starting left out: such an ending is no sequence number of
   * the shard (kinesis-local gives every closed shard 9223372036854775807), and a range that held nothing would
   * refuse every position named in the shard. A closed shard's real ending (AWS's) is at least its starting.
   */
  def of(starting: BigInt, ending: Option[BigInt]): SequenceNumberRange =
    SequenceNumberRange(starting, ending.filter(_ >= starting))
}

/**
 * The hash keys, both ends included, for which Kinesis puts records in a shard.
 *
 * {{{
 *   HashKeyRange(BigInt(0), BigInt(2).pow(127) - 1).contains(BigInt(42))  // true
 * }}}
 */
final case class HashKeyRange(startingHashKey: BigInt, endingHashKey: BigInt) {
  def contains(hashKey: BigInt): Boolean = hashKey >= startingHashKey && hashKey <= endingHashKey

  override def toString: String = s"[$startingHashKey, $endingHashKey]"
}

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
