package io.kinesisspark.aws

import java.time.Instant

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{Consumer, ConsumerDescription, DeregisterStreamConsumerRequest, DescribeStreamConsumerRequest, DescribeStreamSummaryRequest, ExpiredNextTokenException, GetRecordsRequest, GetShardIteratorRequest, InvalidArgumentException, KinesisException, ListShardsRequest, ListStreamConsumersRequest, PutRecordsRequest, PutRecordsRequestEntry, Record, RegisterStreamConsumerRequest, ResourceInUseException, ResourceNotFoundException, ShardFilter, ShardFilterType, ShardIteratorType}

import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.sts.model.StsException

import io.kinesisspark.{KinesisErrors, ShardPosition}

/**
 * [[KinesisApi]] on the AWS SDK v2 synchronous client: `control` for describing and listing (SDK retries on),
 * `data` for iterators, records and puts (SDK retries off; the shard reader and the sink's sender handle throttling
 * and transient errors).
 * Streams given by ARN (`connection.streamArns`) are addressed by ARN, the others by name.
 */
final class SdkKinesisApi(control: KinesisClient, data: KinesisClient, connection: AwsConnection) extends KinesisApi {

  override def describeStream(stream: String): StreamSummary = {
    val request = arn(stream) match {
      case Some(a) => DescribeStreamSummaryRequest.builder().streamARN(a)
      case None    => DescribeStreamSummaryRequest.builder().streamName(stream)
    }
    val d = call("DescribeStreamSummary", stream)(control.describeStreamSummary(request.build())).streamDescriptionSummary()
    StreamSummary(d.streamName(), d.streamARN(), d.streamStatusAsString(), d.openShardCount(),
      Option(d.streamCreationTimestamp()).map(_.toEpochMilli).getOrElse(0L),
      Option(d.retentionPeriodHours()).map(_.intValue).getOrElse(24))
  }

  override def listShards(stream: String, pageSize: Int, afterShardId: Option[String]): Seq[ShardInfo] =
    listShards(stream, pageSize, afterShardId, SdkKinesisApi.ListingRestarts)

  /**
   * A listing's NextToken expires 300 seconds after ListShards issued it (ExpiredNextTokenException, in the ListShards
   * API reference): a listing whose pages were retried that long (a throttled control plane) starts again from its
   * first page, a few times, before the error goes to the caller (for whom it is transient: see [[ErrorClassifier]]).
   */
  private def listShards(stream: String, pageSize: Int, afterShardId: Option[String], restartsLeft: Int): Seq[ShardInfo] =
    try listAllPages(stream, pageSize, afterShardId)
    catch {
      case _: ExpiredNextTokenException if restartsLeft > 0 => listShards(stream, pageSize, afterShardId, restartsLeft - 1)
    }

  private def listAllPages(stream: String, pageSize: Int, afterShardId: Option[String]): Seq[ShardInfo] = {
    val shards = Seq.newBuilder[ShardInfo]
    var next: Option[String] = None
    var first = true
    while (first || next.isDefined) {
      // ListShards takes either the stream name (and a filter) or a NextToken, never both.
      val request = next match {
        case Some(token) => ListShardsRequest.builder().nextToken(token).maxResults(pageSize).build()
        case None =>
          val b = ListShardsRequest.builder().maxResults(pageSize)
          afterShardId.foreach(id => b.shardFilter(ShardFilter.builder().`type`(ShardFilterType.AFTER_SHARD_ID).shardId(id).build()))
          arn(stream).fold(b.streamName(stream))(b.streamARN).build()
      }
      val response = call("ListShards", stream)(control.listShards(request))
      response.shards().asScala.foreach { s =>
        shards += ShardInfo(
          s.shardId(),
          Seq(Option(s.parentShardId()), Option(s.adjacentParentShardId())).flatten,
          closed = Option(s.sequenceNumberRange()).exists(_.endingSequenceNumber() != null),
          hashKeyRange = Option(s.hashKeyRange()).map(r => HashKeyRange(BigInt(r.startingHashKey()), BigInt(r.endingHashKey()))),
          sequenceNumberRange = Option(s.sequenceNumberRange()).flatMap(r => Option(r.startingSequenceNumber()).map(start =>
            SequenceNumberRange.of(BigInt(start), Option(r.endingSequenceNumber()).map(BigInt(_))))))
      }
      next = Option(response.nextToken()).filter(_.nonEmpty)
      first = false
    }
    shards.result()
  }

  override def shardIterator(stream: String, shardId: String, position: ShardPosition): String = {
    val b = GetShardIteratorRequest.builder().shardId(shardId)
    arn(stream).fold(b.streamName(stream))(b.streamARN)
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
    try call("GetShardIterator", stream, shardId = Some(shardId))(data.getShardIterator(b.build())).shardIterator()
    catch {
      // Kinesis answers InvalidArgument for a sequence number that retention trimmed; some emulators answer
      // ResourceNotFound ("Unable to find record with provided SequenceNumber") for one they do not have.
      case e: KinesisException if position.isInstanceOf[ShardPosition.AfterRecord] && mentionsSequenceNumber(e) =>
        throw new PositionUnavailableException(stream, shardId, position, e.awsErrorDetails().errorMessage())
      // The one argument of an AT_TIMESTAMP request Kinesis can find invalid is a time ahead of its clock.
      case e: InvalidArgumentException if position.isInstanceOf[ShardPosition.AtTimestamp] =>
        throw new PositionInFutureException(stream, shardId,
          position.asInstanceOf[ShardPosition.AtTimestamp].epochMillis, ErrorClassifier.errorMessage(e))
    }
  }

  override def getRecords(stream: String, iterator: String, limit: Int): GetRecordsResult = {
    val b = GetRecordsRequest.builder().shardIterator(iterator).limit(limit)
    arn(stream).foreach(b.streamARN)
    val r = call("GetRecords", stream)(data.getRecords(b.build()))
    GetRecordsResult(
      r.records().asScala.iterator.map(SdkKinesisApi.fetchedRecord).toSeq,
      Option(r.nextShardIterator()),
      Option(r.millisBehindLatest()).map(_.longValue).getOrElse(0L))
  }

  override def listConsumers(stream: String): Seq[StreamConsumer] = {
    val streamArn = streamArnOf(stream)
    val consumers = Seq.newBuilder[StreamConsumer]
    var next: Option[String] = None
    var first = true
    while (first || next.isDefined) {
      val b = ListStreamConsumersRequest.builder().streamARN(streamArn)
      next.foreach(b.nextToken)
      val response = call("ListStreamConsumers", stream)(control.listStreamConsumers(b.build()))
      response.consumers().asScala.foreach(c => consumers += consumer(c))
      next = Option(response.nextToken()).filter(_.nonEmpty)
      first = false
    }
    consumers.result()
  }

  override def describeConsumer(stream: String, name: String): Option[StreamConsumer] = {
    val request = DescribeStreamConsumerRequest.builder().streamARN(streamArnOf(stream)).consumerName(name).build()
    // A missing consumer is an answer here, not a missing stream (the stream was just described).
    try Some(call("DescribeStreamConsumer", stream, consumerCall = true)(control.describeStreamConsumer(request))
      .consumerDescription()).map(consumer)
    catch { case _: ResourceNotFoundException => None }
  }

  override def registerConsumer(stream: String, name: String): StreamConsumer = {
    val request = RegisterStreamConsumerRequest.builder().streamARN(streamArnOf(stream)).consumerName(name).build()
    try consumer(call("RegisterStreamConsumer", stream)(control.registerStreamConsumer(request)).consumer())
    catch {
      case e: ResourceInUseException =>
        throw new ConsumerInUseException(stream, name, Option(e.awsErrorDetails()).map(_.errorMessage()).getOrElse(e.getMessage))
    }
  }

  override def deregisterConsumer(stream: String, name: String): Boolean = {
    val request = DeregisterStreamConsumerRequest.builder().streamARN(streamArnOf(stream)).consumerName(name).build()
    try { call("DeregisterStreamConsumer", stream, consumerCall = true)(control.deregisterStreamConsumer(request)); true }
    catch { case _: ResourceNotFoundException => false }
  }

  private def streamArnOf(stream: String): String = arn(stream).getOrElse(describeStream(stream).arn)

  private def consumer(c: Consumer): StreamConsumer = StreamConsumer(c.consumerName(), c.consumerARN(),
    c.consumerStatusAsString(), Option(c.consumerCreationTimestamp()).map(_.toEpochMilli).getOrElse(0L))

  private def consumer(c: ConsumerDescription): StreamConsumer = StreamConsumer(c.consumerName(), c.consumerARN(),
    c.consumerStatusAsString(), Option(c.consumerCreationTimestamp()).map(_.toEpochMilli).getOrElse(0L))

  override def putRecords(stream: String, entries: IndexedSeq[PutEntry]): IndexedSeq[PutEntryResult] = {
    val records = entries.map { e =>
      val b = PutRecordsRequestEntry.builder().partitionKey(e.partitionKey).data(SdkBytes.fromByteArrayUnsafe(e.data))
      e.explicitHashKey.foreach(b.explicitHashKey)
      b.build()
    }
    val b = PutRecordsRequest.builder().records(records.asJava)
    arn(stream).fold(b.streamName(stream))(b.streamARN)
    val r = call("PutRecords", stream)(data.putRecords(b.build()))
    r.records().asScala.iterator.map { e =>
      PutEntryResult(Option(e.shardId()), Option(e.sequenceNumber()), Option(e.errorCode()), Option(e.errorMessage()))
    }.toIndexedSeq
  }

  /** Kinesis's answers to requests signed with missing, wrong or expired credentials (a denied permission is
   * [[ErrorClassifier.isAccessDenied]]). */
  private val CredentialErrorCodes = Set("UnrecognizedClientException", "InvalidSignatureException",
    "ExpiredTokenException", "IncompleteSignatureException", "MissingAuthenticationToken")

  private def causes(e: Throwable): Seq[Throwable] = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(20).toSeq

  private def arn(stream: String): Option[String] = connection.streamArns.get(stream)

  /** Whether DescribeStreamSummary finds the stream (a missing shard and a missing stream answer alike). */
  private def streamExists(stream: String): Boolean =
    try { describeStream(stream); true }
    catch { case _: io.kinesisspark.StreamNotFoundException => false }

  private def mentionsSequenceNumber(e: KinesisException): Boolean = e match {
    case _: InvalidArgumentException | _: ResourceNotFoundException =>
      Option(e.awsErrorDetails()).flatMap(d => Option(d.errorMessage())).exists(_.toLowerCase.contains("sequencenumber"))
    case _ => false
  }

  /**
   * Maps a missing stream to our own error (for `consumerCall`s ResourceNotFound means a missing consumer and is the
   * caller's to handle; for a call about `shardId` it may be the shard, which a stream that still exists tells
   * apart); other SDK errors propagate with the call and stream named.
   */
  private def call[T](name: String, stream: String, consumerCall: Boolean = false, shardId: Option[String] = None)(
      f: => T): T =
    try f
    catch {
      case e: KinesisException if ErrorClassifier.isAccessDenied(e) =>
        throw KinesisErrors.permissionDenied(name, s"Kinesis stream '$stream'", ErrorClassifier.deniedAction(name, e),
          Some(connection.credentials.description), s"${ErrorClassifier.errorCode(e)}: ${ErrorClassifier.errorMessage(e)}", e)
      case e: KinesisException if CredentialErrorCodes(Option(e.awsErrorDetails()).map(_.errorCode()).orNull) =>
        throw KinesisErrors.credentialsFailed(connection.credentials.description, name,
          s"${e.awsErrorDetails().errorCode()}: ${e.awsErrorDetails().errorMessage()}", e)
      case e: SdkClientException if causes(e).exists(_.isInstanceOf[javax.net.ssl.SSLException]) =>
        throw KinesisErrors.tlsFailed(connection.endpointDescription, name,
          causes(e).collect { case s: javax.net.ssl.SSLException => s.getMessage }.last, e)
      case e: SdkClientException if Option(e.getMessage).exists(_.contains("credentials")) =>
        throw KinesisErrors.credentialsFailed(connection.credentials.description, name, e.getMessage, e)
      case e: StsException =>
        throw KinesisErrors.credentialsFailed(connection.credentials.description, name,
          s"STS ${Option(e.awsErrorDetails()).map(d => s"${d.errorCode()}: ${d.errorMessage()}").getOrElse(e.getMessage)}", e)
      case e: ResourceNotFoundException if shardId.isDefined && !mentionsSequenceNumber(e) && streamExists(stream) =>
        throw new ShardNotFoundException(stream, shardId.get, ErrorClassifier.errorMessage(e))
      case e: ResourceNotFoundException if !mentionsSequenceNumber(e) && !consumerCall =>
        throw KinesisErrors.streamNotFound(stream, connection.region, connection.endpointDescription)
    }
}

object SdkKinesisApi {
  /** Times a listing whose pagination token expired starts again from its first page. */
  val ListingRestarts = 3

  /** A record of a GetRecords response or a SubscribeToShard event. */
  def fetchedRecord(rec: Record): FetchedRecord = FetchedRecord(
    rec.sequenceNumber(),
    rec.partitionKey(),
    rec.data().asByteArrayUnsafe(),
    Option(rec.approximateArrivalTimestamp()).map(_.toEpochMilli).getOrElse(0L))
}
