package io.kinesisspark.aws

import scala.collection.mutable

import io.kinesisspark.{KinesisErrors, ShardPosition}
import io.kinesisspark.aws._

/**
 * An in-memory Kinesis for unit tests of the logic behind [[KinesisApi]]: shards hold records in order; an
 * iterator is "shard:index". `closed` shards end (no next iterator) once read through; `expireNext`,
 * `throttleNext` and `failNext` make the next GetRecords calls fail (expired iterator, throttled, connection
 * reset); `trimmedBefore` hides the first records as retention would (an iterator for a hidden record's sequence
 * number starts at the oldest record left, as Kinesis's does; with `refuseTrimmed`, it is refused, as some emulators
 * refuse a sequence number they do not have); `createdMillis` and `deleted` stand for a stream created again, or
 * deleted (every call then fails with StreamNotFoundException); `failListingsNext` makes the next ListShards calls
 * fail (connection reset). `add` fills a shard with numbered plain records, `put` appends one with any data.
 * Consumers: a registered one stays CREATING for `describesUntilActive` DescribeStreamConsumer calls;
 * `registerLimitExceeded` throttles the next registrations.
 */
class FakeKinesisApi(stream: String = "s") extends KinesisApi {
  val shards = mutable.LinkedHashMap.empty[String, mutable.ArrayBuffer[FetchedRecord]]
  val closed = mutable.Set.empty[String]
  /** Each shard's parents, as ListShards reports them (none unless set). */
  val parents = mutable.Map.empty[String, Seq[String]].withDefaultValue(Nil)
  val trimmedBefore = mutable.Map.empty[String, Int].withDefaultValue(0)
  var refuseTrimmed = false
  /** How many of the next GetRecords calls fail with ExpiredIteratorException. */
  var expireNext = 0
  var throttleNext = 0
  var failNext = 0
  // The next calls return no records but the lag to the shard's tip, as Kinesis may for a stretch without records.
  var emptyWithLagNext = 0
  var failListingsNext = 0
  var createdMillis = 1000L
  var deleted = false
  /** Kinesis's clock: an AT_TIMESTAMP position after it is refused, as AWS refuses it. */
  var kinesisNow: () => Long = () => Long.MaxValue
  var getRecordsCalls = 0
  var iteratorCalls = 0
  val consumers = mutable.LinkedHashMap.empty[String, StreamConsumer]
  private val describesLeft = mutable.Map.empty[String, Int]
  var describesUntilActive = 0
  var registerLimitExceeded = 0
  var registerCalls = 0
  var deregisterCalls = 0
  private var consumerSerial = 0

  def add(shard: String, count: Int, arrivalMillis: Long = 1000L): Unit =
    (0 until count).foreach { _ =>
      val n = shards.get(shard).fold(0)(_.size)
      put(shard, s"key-$n", s"data-$n".getBytes, arrivalMillis)
    }

  /** Appends one record with the given key and data (a KPL aggregate, say); returns its sequence number. */
  def put(shard: String, partitionKey: String, data: Array[Byte], arrivalMillis: Long = 1000L): String = {
    val records = shards.getOrElseUpdate(shard, mutable.ArrayBuffer.empty)
    val seq = (BigInt(100) + records.size * 10).toString
    records += FetchedRecord(seq, partitionKey, data, arrivalMillis + records.size)
    seq
  }

  override def describeStream(name: String): StreamSummary =
    if (name == stream && !deleted) {
      StreamSummary(stream, s"arn:aws:kinesis:us-east-1:000000000000:stream/$stream", "ACTIVE", shards.size,
        createdMillis = createdMillis, retentionHours = 24)
    }
    else throw KinesisErrors.streamNotFound(name, "us-east-1", "fake")

  override def listShards(name: String, pageSize: Int, afterShardId: Option[String]): Seq[ShardInfo] = {
    if (deleted) throw KinesisErrors.streamNotFound(name, "us-east-1", "fake")
    if (failListingsNext > 0) {
      failListingsNext -= 1
      throw software.amazon.awssdk.core.exception.SdkClientException.create("Connection reset")
    }
    shards.keys.toSeq.filter(id => afterShardId.forall(id > _)).map(id => ShardInfo(id, parents(id), closed(id)))
  }

  override def shardIterator(name: String, shardId: String, position: ShardPosition): String = {
    iteratorCalls += 1
    if (deleted) throw KinesisErrors.streamNotFound(name, "us-east-1", "fake")
    if (!shards.contains(shardId)) throw new ShardNotFoundException(name, shardId, s"Shard $shardId does not exist")
    val records = shards(shardId)
    val index = position match {
      case ShardPosition.TrimHorizon => trimmedBefore(shardId)
      case ShardPosition.AtTimestamp(ms) if ms > kinesisNow() =>
        throw new PositionInFutureException(name, shardId, ms, "timestampInMillis > currentTimestampInMillis")
      case ShardPosition.AtTimestamp(ms) => records.indexWhere(_.approximateArrivalMillis >= ms) match {
        case -1 => records.size
        case i  => i
      }
      case ShardPosition.AfterRecord(seq, sub) =>
        val at = records.indexWhere(r => BigInt(r.sequenceNumber) >= BigInt(seq)) match {
          case -1 => records.size
          case i  => i
        }
        if (at < trimmedBefore(shardId) && refuseTrimmed) {
          throw new PositionUnavailableException(name, shardId, position, "trimmed")
        }
        if (sub.isEmpty && at < records.size && records(at).sequenceNumber == seq) at + 1 else at
      case ShardPosition.Finished => throw new IllegalArgumentException("finished")
    }
    s"$shardId:${math.max(index, trimmedBefore(shardId))}"
  }

  override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult = {
    getRecordsCalls += 1
    if (deleted) throw KinesisErrors.streamNotFound(name, "us-east-1", "fake")
    if (throttleNext > 0) {
      throttleNext -= 1
      throw software.amazon.awssdk.services.kinesis.model.ProvisionedThroughputExceededException.builder()
        .message("Rate exceeded").build()
    }
    if (failNext > 0) {
      failNext -= 1
      throw software.amazon.awssdk.core.exception.SdkClientException.create("Connection reset")
    }
    if (expireNext > 0) {
      expireNext -= 1
      throw software.amazon.awssdk.services.kinesis.model.ExpiredIteratorException.builder().message("expired").build()
    }
    val (shard, start) = iterator.splitAt(iterator.lastIndexOf(':'))
    val records = shards(shard)
    val from = math.max(start.drop(1).toInt, trimmedBefore(shard)) // a live iterator reads on from the oldest left
    if (emptyWithLagNext > 0) {
      emptyWithLagNext -= 1
      return GetRecordsResult(Seq.empty, Some(s"$shard:$from"), 1000L * (records.size - from))
    }
    val page = records.slice(from, from + limit).toSeq
    val next = from + page.size
    val atEnd = next >= records.size
    GetRecordsResult(page, if (atEnd && closed(shard)) None else Some(s"$shard:$next"),
      if (atEnd) 0L else 1000L * (records.size - next))
  }

  override def listConsumers(name: String): Seq[StreamConsumer] = { describeStream(name); consumers.values.toSeq }

  override def describeConsumer(name: String, consumer: String): Option[StreamConsumer] = {
    describeStream(name)
    consumers.get(consumer).map { c =>
      val left = describesLeft.getOrElse(consumer, 0)
      if (left > 0) { describesLeft(consumer) = left - 1; c }
      else if (c.status == "CREATING") { val active = c.copy(status = "ACTIVE"); consumers(consumer) = active; active }
      else if (c.status == "DELETING") { consumers.remove(consumer); c }
      else c
    }
  }

  override def registerConsumer(name: String, consumer: String): StreamConsumer = {
    describeStream(name)
    registerCalls += 1
    if (registerLimitExceeded > 0) {
      registerLimitExceeded -= 1
      throw software.amazon.awssdk.services.kinesis.model.LimitExceededException.builder().message("Rate exceeded").build()
    }
    if (consumers.contains(consumer)) throw new ConsumerInUseException(name, consumer, "exists")
    consumerSerial += 1
    val c = StreamConsumer(consumer, s"arn:aws:kinesis:us-east-1:000000000000:stream/$name/consumer/$consumer:$consumerSerial",
      "CREATING", 1000L + consumerSerial)
    consumers(consumer) = c
    describesLeft(consumer) = describesUntilActive
    c
  }

  override def deregisterConsumer(name: String, consumer: String): Boolean = {
    describeStream(name)
    deregisterCalls += 1
    consumers.get(consumer).exists { c => consumers(consumer) = c.copy(status = "DELETING"); true }
  }

  /** Appends each entry to the shard its hash key falls in, the hash key space split evenly over the shards. */
  override def putRecords(name: String, entries: IndexedSeq[PutEntry]): IndexedSeq[PutEntryResult] = {
    if (deleted || name != stream) throw KinesisErrors.streamNotFound(name, "us-east-1", "fake")
    val ids = shards.keys.toIndexedSeq
    entries.map { e =>
      val hashKey = io.kinesisspark.kpl.UserRecord(e.partitionKey, e.explicitHashKey, e.data).effectiveHashKey.get
      val shard = ids((hashKey * ids.size / io.kinesisspark.kpl.UserRecord.HashKeySpace).toInt)
      PutEntryResult.stored(shard, put(shard, e.partitionKey, e.data))
    }
  }
}
