package io.kinesisspark.reader.fanout

import io.kinesisspark.ShardPosition
import io.kinesisspark.aws.FetchedRecord

/**
 * Opens SubscribeToShard subscriptions: the seam between [[ShardSubscription]]'s logic (queueing, resubscribing,
 * back-off), which unit tests drive through a fake, and the asynchronous SDK client ([[SdkShardSubscriber]]).
 *
 * A subscription reports to its listener, in this order: [[SubscriptionListener.onStart]] once the service has
 * accepted it (with the handle to ask for events), [[SubscriptionListener.onEvent]] once for each event asked for,
 * and [[SubscriptionListener.onEnd]] exactly once (a refused subscription gets only `onEnd`).
 *
 * {{{
 *   subscriber.subscribe(consumerArn, "shardId-000000000000", ShardPosition.TrimHorizon, listener)
 *   // listener.onStart(handle) -> handle.request(4) -> listener.onEvent(event) x 4 -> ... -> listener.onEnd(None)
 * }}}
 */
trait ShardSubscriber {
  def subscribe(consumerArn: String, shardId: String, from: ShardPosition, listener: SubscriptionListener): Unit
}

/** Receives one subscription's callbacks, on the client's threads. */
trait SubscriptionListener {
  def onStart(handle: SubscriptionHandle): Unit
  def onEvent(event: SubscriptionEvent): Unit
  /** The subscription is over: `None` when it ended normally (the service ends them after 5 minutes). */
  def onEnd(error: Option[Throwable]): Unit
}

/** Flow control of a running subscription. */
trait SubscriptionHandle {
  /** Asks for `n` more events. */
  def request(n: Long): Unit
  /** Ends the subscription from our side; its listener hears nothing more. */
  def cancel(): Unit
}

/**
 * One SubscribeToShard event.
 *
 * @param continuationSequenceNumber where a new subscription continues after this event; `None` once the shard has
 *                                   ended (together with `childShards`, from endpoints that send them)
 * @param millisBehindLatest         how far the event is behind the tip of the shard
 * @param receivedAtMillis           when it reached the subscription's queue (clock millis)
 */
final case class SubscriptionEvent(
    records: Seq[FetchedRecord],
    continuationSequenceNumber: Option[String],
    millisBehindLatest: Long,
    childShards: Seq[String] = Nil,
    receivedAtMillis: Long = 0L) {
  /** The endpoint says the shard is closed and this is its last event. */
  def endsShard: Boolean = childShards.nonEmpty || continuationSequenceNumber.isEmpty
}
