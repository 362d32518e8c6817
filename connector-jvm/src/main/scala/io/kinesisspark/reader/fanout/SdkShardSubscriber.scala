package io.kinesisspark.reader.fanout

import java.time.Instant
import java.util.concurrent.atomic.AtomicBoolean

import scala.jdk.CollectionConverters._

import org.reactivestreams.{Subscriber, Subscription}
import software.amazon.awssdk.core.async.SdkPublisher
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{ShardIteratorType, StartingPosition, SubscribeToShardEvent, SubscribeToShardEventStream, SubscribeToShardRequest, SubscribeToShardResponse, SubscribeToShardResponseHandler}

import io.kinesisspark.ShardPosition
import io.kinesisspark.aws.SdkKinesisApi

/**
 * [[ShardSubscriber]] on the SDK's asynchronous client: SubscribeToShard over HTTP/2, with the event stream consumed
 * through a Reactive Streams subscriber so that events arrive only as fast as [[SubscriptionHandle.request]] asks
 * (the bounded queue in [[ShardSubscription]] relies on it).
 */
final class SdkShardSubscriber(client: KinesisAsyncClient) extends ShardSubscriber {

  override def subscribe(consumerArn: String, shardId: String, from: ShardPosition, listener: SubscriptionListener): Unit = {
    val request = SubscribeToShardRequest.builder().consumerARN(consumerArn).shardId(shardId)
      .startingPosition(SdkShardSubscriber.startingPosition(from)).build()
    val ended = new AtomicBoolean(false)
    def end(error: Option[Throwable]): Unit = if (ended.compareAndSet(false, true)) listener.onEnd(error)

    val handler = new SubscribeToShardResponseHandler {
      override def responseReceived(response: SubscribeToShardResponse): Unit = ()
      override def onEventStream(publisher: SdkPublisher[SubscribeToShardEventStream]): Unit =
        publisher.subscribe(new Subscriber[SubscribeToShardEventStream] {
          private var subscription: Subscription = _
          override def onSubscribe(s: Subscription): Unit = {
            subscription = s
            listener.onStart(new SubscriptionHandle {
              override def request(n: Long): Unit = s.request(n)
              override def cancel(): Unit = { ended.set(true); s.cancel() }
            })
          }
          override def onNext(event: SubscribeToShardEventStream): Unit = event match {
            case e: SubscribeToShardEvent if !ended.get => listener.onEvent(SdkShardSubscriber.event(e))
            case _: SubscribeToShardEvent => ()
            // Not a data event (an initial response, or a kind this SDK does not know): it used up a request.
            case _ => subscription.request(1)
          }
          override def onError(t: Throwable): Unit = end(Some(t))
          override def onComplete(): Unit = end(None)
        })
      override def exceptionOccurred(t: Throwable): Unit = end(Some(t))
      override def complete(): Unit = end(None)
    }
    client.subscribeToShard(request, handler).whenComplete((_, error) => end(Option(error)))
  }
}

object SdkShardSubscriber {
  def startingPosition(from: ShardPosition): StartingPosition = from match {
    case ShardPosition.TrimHorizon => StartingPosition.builder().`type`(ShardIteratorType.TRIM_HORIZON).build()
    case ShardPosition.AtTimestamp(ms) =>
      StartingPosition.builder().`type`(ShardIteratorType.AT_TIMESTAMP).timestamp(Instant.ofEpochMilli(ms)).build()
    case ShardPosition.AfterRecord(seq, None) =>
      StartingPosition.builder().`type`(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(seq).build()
    case ShardPosition.AfterRecord(seq, Some(_)) =>
      // Later user records of this aggregate are still to come: start at it; the reader skips what it had.
      StartingPosition.builder().`type`(ShardIteratorType.AT_SEQUENCE_NUMBER).sequenceNumber(seq).build()
    case ShardPosition.Finished => throw new IllegalArgumentException("a finished shard has nothing to subscribe to")
  }

  def event(e: SubscribeToShardEvent): SubscriptionEvent = SubscriptionEvent(
    if (e.hasRecords) e.records().asScala.iterator.map(SdkKinesisApi.fetchedRecord).toSeq else Nil,
    Option(e.continuationSequenceNumber()),
    Option(e.millisBehindLatest()).map(_.longValue).getOrElse(0L),
    if (e.hasChildShards) e.childShards().asScala.map(_.shardId()).toSeq else Nil)
}
