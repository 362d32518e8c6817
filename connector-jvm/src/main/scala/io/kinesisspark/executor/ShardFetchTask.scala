package io.kinesisspark.executor

import io.kinesisspark.{DataLossPolicy, ShardPosition}
import io.kinesisspark.aws.{AwsConnection, HashKeyRange}
import io.kinesisspark.blocks.{BlockRef, FetchedRange, WireFormat}
import io.kinesisspark.reader.{FetchLimits, ShardCounters}

/**
 * One prefetch task: fetch each shard of `orders` from its position, on one executor, within `limits`, and stop
 * once the task has read `maxBytes` (its share of the room left in the buffer; it may overshoot by one response).
 * Blocks are named (`streamId`, id made from the order's `orderId`, the task attempt and a counter).
 *
 * Java serialization sends its orders as [[WireFormat]] bytes: a round's dispatch at 10,000 shards carries 10,000
 * of them, and serializing the case classes made the driver's RPC threads its busiest after the query's own. (With
 * `spark.serializer` set to Kryo, Spark writes a round's tickets with Kryo, which does not ask for this form: the
 * tickets still arrive whole, only larger.)
 *
 * {{{
 *   ShardFetchTask(connection, FetchLimits(10000), streamId = 3, Seq(ShardFetchOrder("clicks", shardId, from, 1L)))
 * }}}
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
    arrivalCut: Option[Long] = None) {

  /** Java serialization writes this instead (see the class's comment). */
  private def writeReplace(): AnyRef = ShardFetchTask.OnTheWire(connection, limits, streamId,
    ShardFetchTask.encode(orders), maxBytes, dataLoss, efoSubscriptionMaxEvents, arrivalCut)
}

object ShardFetchTask {
  /** A task as Java serialization sends it: the orders as bytes, the rest as it is. */
  private final case class OnTheWire(connection: AwsConnection, limits: FetchLimits, streamId: Int,
      orders: Array[Byte], maxBytes: Long, dataLoss: DataLossPolicy, efoSubscriptionMaxEvents: Option[Int],
      arrivalCut: Option[Long]) {
    private def readResolve(): AnyRef = ShardFetchTask(connection, limits, streamId, decode(orders), maxBytes,
      dataLoss, efoSubscriptionMaxEvents, arrivalCut)
  }

  /**
   * Per order: stream, shard id, from, order id, creation flag [millis], hash key range flag [start, end as decimal
   * strings], consumer flag [ARN], closed, retention flag [millis].
   */
  private[kinesisspark] def encode(orders: Seq[ShardFetchOrder]): Array[Byte] =
    WireFormat.encode(64 + 128 * orders.size) { wire =>
      val out = wire.out
      out.writeInt(orders.size)
      orders.foreach { o =>
        wire.text(o.stream)
        wire.text(o.shardId)
        wire.position(o.from)
        out.writeLong(o.orderId)
        wire.optionalLong(o.streamCreatedMillis)
        out.writeBoolean(o.hashKeyRange.isDefined)
        o.hashKeyRange.foreach { r =>
          out.writeUTF(r.startingHashKey.toString)
          out.writeUTF(r.endingHashKey.toString)
        }
        out.writeBoolean(o.consumerArn.isDefined)
        o.consumerArn.foreach(wire.text)
        out.writeBoolean(o.shardClosed)
        wire.optionalLong(o.retentionMillis)
      }
    }

  private[kinesisspark] def decode(bytes: Array[Byte]): Vector[ShardFetchOrder] =
    WireFormat.decode(bytes, "kinesis-spark prefetch ticket") { wire =>
      val in = wire.in
      Vector.fill(wire.count()) {
        ShardFetchOrder(wire.text(), wire.text(), wire.position(), in.readLong(), wire.optionalLong(),
          if (in.readBoolean()) Some(HashKeyRange(BigInt(in.readUTF()), BigInt(in.readUTF()))) else None,
          if (in.readBoolean()) Some(wire.text()) else None, in.readBoolean(), wire.optionalLong())
      }
    }
}

/**
 * Fetch `shardId` of `stream` from `from`.
 *
 * @param streamCreatedMillis the stream's creation time as the driver last listed it, if known: lets the reader
 *                            tell a stream deleted and created again from records trimmed by retention
 * @param hashKeyRange        the shard's, for checking KPL user records
 * @param consumerArn         with enhanced fan-out, the ARN of the stream's registered consumer to subscribe with;
 *                            `None` to poll with GetRecords
 * @param shardClosed         ListShards reports the shard closed (it has an ending sequence number)
 * @param retentionMillis     the stream's retention period as the driver last described it: a reader whose last
 *                            record is about that old checks each call that nothing expired past it (see
 *                            [[PollingShardReader]])
 */
final case class ShardFetchOrder(stream: String, shardId: String, from: ShardPosition, orderId: Long,
    streamCreatedMillis: Option[Long] = None, hashKeyRange: Option[HashKeyRange] = None,
    consumerArn: Option[String] = None, shardClosed: Boolean = false, retentionMillis: Option[Long] = None)

/**
 * What one task read from one shard: contiguous ranges (one per GetRecords call that returned records, or one
 * empty range marking SHARD_END), and how the shard's reader fared.
 *
 * @param caughtUp           the last call reached the tip of the shard (or its end)
 * @param millisBehindLatest the shard's lag after the last successful call, if any call succeeded
 * @param counters           what the shard's reader counted during the task
 * @param consumerMissing    with enhanced fan-out, Kinesis said the consumer does not exist (the driver checks it)
 * @param failure            the error that ended the task (see [[FetchFailure]]); the driver fails the query with it
 */
final case class ShardFetchResult(
    stream: String,
    shardId: String,
    ranges: Seq[FetchedRange],
    caughtUp: Boolean,
    millisBehindLatest: Option[Long],
    counters: ShardCounters,
    location: String,
    consumerMissing: Boolean = false,
    failure: Option[Throwable] = None)

object ShardFetchResult {
  /** The blocks `results` stored (each once: a block's last range names it). */
  def blocks(results: Iterable[ShardFetchResult]): Seq[BlockRef] =
    results.iterator.flatMap(_.ranges).flatMap(_.block).filter(_.last).toSeq
}
