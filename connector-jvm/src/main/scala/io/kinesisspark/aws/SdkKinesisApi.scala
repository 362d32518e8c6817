package io.kinesisspark.aws

import java.time.Instant

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{DescribeStreamSummaryRequest, GetRecordsRequest, GetShardIteratorRequest, ListShardsRequest, ResourceNotFoundException, ShardIteratorType}

import io.kinesisspark.{KinesisErrors, ShardPosition}

/**
 * [[KinesisApi]] on the AWS SDK v2 synchronous client: `control` for describing and listing (SDK retries on),
 * `data` for iterators and records (SDK retries off; the shard reader handles throttling and transient errors).
 */
final class SdkKinesisApi(control: KinesisClient, data: KinesisClient, connection: AwsConnection) extends KinesisApi {

  override def describeStream(stream: String): StreamSummary = {
    val d = call("DescribeStreamSummary", stream) {
      control.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
    }.streamDescriptionSummary()
    StreamSummary(d.streamName(), d.streamARN(), d.streamStatusAsString(), d.openShardCount())
  }

  override def listShards(stream: String, pageSize: Int): Seq[ShardInfo] = {
    val shards = Seq.newBuilder[ShardInfo]
    var next: Option[String] = None
    var first = true
    while (first || next.isDefined) {
      // ListShards takes either the stream name or a NextToken, never both.
      val request = next match {
        case Some(token) => ListShardsRequest.builder().nextToken(token).maxResults(pageSize).build()
        case None        => ListShardsRequest.builder().streamName(stream).maxResults(pageSize).build()
      }
      val response = call("ListShards", stream)(control.listShards(request))
      response.shards().asScala.foreach { s =>
        shards += ShardInfo(
          s.shardId(),
          Seq(Option(s.parentShardId()), Option(s.adjacentParentShardId())).flatten,
          closed = Option(s.sequenceNumberRange()).exists(_.endingSequenceNumber() != null))
      }
      next = Option(response.nextToken()).filter(_.nonEmpty)
      first = false
    }
    shards.result()
  }

  override def shardIterator(stream: String, shardId: String, position: ShardPosition): String = {
    val b = GetShardIteratorRequest.builder().streamName(stream).shardId(shardId)
    position match {
      case ShardPosition.TrimHorizon       => b.shardIteratorType(ShardIteratorType.TRIM_HORIZON)
      case ShardPosition.AtTimestamp(ms)   => b.shardIteratorType(ShardIteratorType.AT_TIMESTAMP).timestamp(Instant.ofEpochMilli(ms))
      case ShardPosition.AfterRecord(seq, None) =>
        b.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).startingSequenceNumber(seq)
      case ShardPosition.AfterRecord(seq, Some(_)) =>
        // Later sub-records of this aggregate are still to be read: start at the record, the caller skips what it had.
        b.shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).startingSequenceNumber(seq)
      case ShardPosition.Finished =>
        throw new IllegalArgumentException(s"shard $shardId of stream '$stream' is finished; there is nothing to read")
    }
    call("GetShardIterator", stream)(data.getShardIterator(b.build())).shardIterator()
  }

  override def getRecords(stream: String, iterator: String, limit: Int): GetRecordsResult = {
    val r = call("GetRecords", stream)(data.getRecords(GetRecordsRequest.builder().shardIterator(iterator).limit(limit).build()))
    GetRecordsResult(
      r.records().asScala.iterator.map { rec =>
        FetchedRecord(
          rec.sequenceNumber(),
          rec.partitionKey(),
          rec.data().asByteArrayUnsafe(),
          Option(rec.approximateArrivalTimestamp()).map(_.toEpochMilli).getOrElse(0L))
      }.toSeq,
      Option(r.nextShardIterator()),
      Option(r.millisBehindLatest()).map(_.longValue).getOrElse(0L))
  }

  /** Maps a missing stream to our own error; other SDK errors propagate with the call and stream named. */
  private def call[T](name: String, stream: String)(f: => T): T =
    try f
    catch {
      case _: ResourceNotFoundException =>
        throw KinesisErrors.streamNotFound(stream, connection.region, connection.endpointDescription)
    }
}
