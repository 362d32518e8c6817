package io.kinesisspark.fetch

import scala.collection.mutable

import io.kinesisspark.{KinesisErrors, ShardPosition}
import io.kinesisspark.aws._

/**
 * An in-memory Kinesis for unit tests of the logic behind [[KinesisApi]]: shards hold records in order; an
 * iterator is "shard:index". `closed` shards end (no next iterator) once read through; `expireNext`,
 * `throttleNext` and `failNext` make the next GetRecords calls fail (expired iterator, throttled, connection
 * reset); `trimmedBefore` hides the first records as retention would.
 */
final class FakeKinesisApi(stream: String = "s") extends KinesisApi {
  val shards = mutable.LinkedHashMap.empty[String, mutable.ArrayBuffer[FetchedRecord]]
  val closed = mutable.Set.empty[String]
  val trimmedBefore = mutable.Map.empty[String, Int].withDefaultValue(0)
  var expireNext = false
  var throttleNext = 0
  var failNext = 0
  var getRecordsCalls = 0
  var iteratorCalls = 0

  def add(shard: String, count: Int, arrivalMillis: Long = 1000L): Unit = {
    val records = shards.getOrElseUpdate(shard, mutable.ArrayBuffer.empty)
    (0 until count).foreach { _ =>
      val seq = (BigInt(100) + records.size * 10).toString
      records += FetchedRecord(seq, s"key-${records.size}", s"data-${records.size}".getBytes, arrivalMillis + records.size)
    }
  }

  override def describeStream(name: String): StreamSummary =
    if (name == stream) StreamSummary(stream, s"arn:aws:kinesis:us-east-1:000000000000:stream/$stream", "ACTIVE", shards.size)
    else throw KinesisErrors.streamNotFound(name, "us-east-1", "fake")

  override def listShards(name: String, pageSize: Int): Seq[ShardInfo] =
    shards.keys.toSeq.map(id => ShardInfo(id, Nil, closed(id)))

  override def shardIterator(name: String, shardId: String, position: ShardPosition): String = {
    iteratorCalls += 1
    val records = shards(shardId)
    val index = position match {
      case ShardPosition.TrimHorizon => trimmedBefore(shardId)
      case ShardPosition.AtTimestamp(ms) => records.indexWhere(_.approximateArrivalMillis >= ms) match {
        case -1 => records.size
        case i  => i
      }
      case ShardPosition.AfterRecord(seq, sub) =>
        val at = records.indexWhere(r => BigInt(r.sequenceNumber) >= BigInt(seq)) match {
          case -1 => records.size
          case i  => i
        }
        if (sub.isEmpty && at < records.size && records(at).sequenceNumber == seq) at + 1 else at
      case ShardPosition.Finished => throw new IllegalArgumentException("finished")
    }
    s"$shardId:${math.max(index, trimmedBefore(shardId))}"
  }

  override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult = {
    getRecordsCalls += 1
    if (throttleNext > 0) {
      throttleNext -= 1
      throw software.amazon.awssdk.services.kinesis.model.ProvisionedThroughputExceededException.builder()
        .message("Rate exceeded").build()
    }
    if (failNext > 0) {
      failNext -= 1
      throw software.amazon.awssdk.core.exception.SdkClientException.create("Connection reset")
    }
    if (expireNext) {
      expireNext = false
      throw software.amazon.awssdk.services.kinesis.model.ExpiredIteratorException.builder().message("expired").build()
    }
    val (shard, start) = iterator.splitAt(iterator.lastIndexOf(':'))
    val records = shards(shard)
    val from = start.drop(1).toInt
    val page = records.slice(from, from + limit).toSeq
    val next = from + page.size
    val atEnd = next >= records.size
    GetRecordsResult(page, if (atEnd && closed(shard)) None else Some(s"$shard:$next"),
      if (atEnd) 0L else 1000L * (records.size - next))
  }
}
