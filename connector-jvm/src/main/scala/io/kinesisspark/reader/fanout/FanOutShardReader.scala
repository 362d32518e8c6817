package io.kinesisspark.reader.fanout

import java.time.Clock

import org.slf4j.LoggerFactory
import software.amazon.awssdk.services.kinesis.model.{InvalidArgumentException, KinesisException}

import io.kinesisspark.{DataLossPolicy, ShardPosition}
import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.{HashKeyRange, KinesisApi}
import io.kinesisspark.reader.{Deaggregator, FetchLimits, ReadySignal, ResumeCheck, ShardCounters, ShardReadBatch,
  ShardReader}
import io.kinesisspark.reader.polling.PollingShardReader

/**
 * Reads one shard by enhanced fan-out: each [[next]] takes one event of the shard's [[ShardSubscription]] (waiting
 * up to `pollWaitMs` for it, or not at all once given a signal to raise instead, see [[wakeOn]]) and returns its
 * records after [[position]], de-aggregated exactly as polling does, with the event's `millisBehindLatest` as the
 * shard's lag. Positions are sequence numbers as with polling, so a checkpoint moves freely between the two modes.
 *
 * The end of a closed shard: an endpoint may announce it (an event with child shards and no continuation), or not
 * (kinesis-mock never does). So once ListShards reports the shard closed ([[shardClosed]]) and the subscription has
 * caught up (lag 0, nothing queued), the reader confirms with the polling reader from its position, at most once
 * a second: GetRecords returning no record and no next iterator is SHARD_END, the one signal polling trusts too.
 *
 * A subscription resuming after a record starts AT that record, which the first event must hold; if it does not,
 * retention trimmed it and the `dataLoss` policy decides, as with polling (see [[io.kinesisspark.reader.ResumeCheck]]).
 * A subscription refused for its sequence number starts again at TRIM_HORIZON and is judged the same way. The
 * position never moves back: records up to it are skipped whatever the subscription starts at.
 *
 * {{{
 *   val reader = ShardReaders.open(task, order, api, clock)  // an order with a consumer ARN
 *   reader.next()  // records of the next event, or an empty batch when none came within pollWaitMs
 * }}}
 *
 * @param subscribe starts the shard's subscription from a position
 * @param limits    for the polling calls that confirm a shard's end
 */
final class FanOutShardReader(
    api: KinesisApi,
    subscribe: ShardPosition => ShardSubscription,
    val stream: String,
    val shardId: String,
    start: ShardPosition,
    arn: String,
    limits: FetchLimits,
    clock: Clock = Clock.systemUTC(),
    dataLoss: DataLossPolicy = DataLossPolicy(failOnDataLoss = true),
    streamCreatedMillis: Option[Long] = None,
    hashKeyRange: Option[HashKeyRange] = None,
    pollWaitMs: Long = FanOutShardReader.DefaultPollWaitMs) extends ShardReader {

  import FanOutShardReader._

  require(start != Finished, s"shard $shardId is finished")

  private val resumeCheck = new ResumeCheck(stream, shardId, dataLoss)
  private var subscription = subscribe(resumeCheck.iteratorPosition(start, recordsFollowed = false))
  private var restartedFromOldest = false
  private var _position: ShardPosition = start
  private var _ended = false
  private var lag: Option[Long] = None
  private var closedShard = false
  private var lastPollAt = Long.MinValue
  private var roundStart = Long.MinValue
  private var lastEventAt = Long.MinValue
  private var nextEndCheckAt = Long.MinValue
  private var endCheck: Option[PollingShardReader] = None
  private val deaggregator = new Deaggregator(stream, shardId, hashKeyRange, clock)
  private var wakeup: Option[ReadySignal] = None

  var calls = 0L
  var callMillis = 0L
  var dataLossEvents = 0L
  private var endCheckThrottles = 0L
  private var earlierSubscriptions = 0L
  override def counters: ShardCounters = ShardCounters(calls = calls,
    throttles = subscription.refusedOrThrottled + endCheckThrottles, callMillis = callMillis,
    dataLossEvents = dataLossEvents, subscriptions = earlierSubscriptions + subscription.subscriptionsAccepted) +
    deaggregator.counters

  override def consumerArn: Option[String] = Some(arn)
  override def position: ShardPosition = _position
  override def ended: Boolean = _ended
  override def consumerMissing: Boolean = subscription.consumerMissing
  override def shardClosed(closed: Boolean): Unit = closedShard = closed
  override def roundStarted(atMillis: Long): Unit = roundStart = atMillis

  /**
   * Queued events first, then a failed subscription (the next call throws its failure), then the shard polled least
   * recently. With a signal to raise (see [[wakeOn]]), an idle shard waits for it and is only looked at again after
   * [[IdleRecheckMs]], or when its end may next be confirmed: the recheck keeps its subscription from pausing (one
   * that ends after a minute with no poll is not renewed).
   */
  override def readyAt: Long =
    if (subscription.queuedEvents > 0 || subscription.failed) Long.MinValue
    else if (wakeup.isDefined && lastPollAt != Long.MinValue) math.max(lastPollAt + IdleRecheckMs, nextEndCheckAt)
    else lastPollAt

  override def wakeOn(signal: Option[ReadySignal]): Unit = {
    wakeup = signal
    subscription.wakeOn(signal)
  }

  override def next(): ShardReadBatch = {
    require(!_ended, s"shard $shardId of stream '$stream' was already read to its end")
    val started = clock.millis()
    lastPollAt = started
    val event =
      try subscription.poll(if (wakeup.isDefined) 0L else pollWaitMs)
      catch { case e: KinesisException if positionRefused(e) => return restartFromOldest(e) }
    callMillis += clock.millis() - started
    event match {
      case Some(e) =>
        calls += 1
        if (resumeCheck.lossReported(e.records, atTip = e.millisBehindLatest == 0L, _position)) dataLossEvents += 1
        val written = deaggregator.writerFor(e.records)
        val bytes = deaggregator.userRecords(e.records, _position, written)
        written.lastPosition.foreach(_position = _)
        lag = Some(e.millisBehindLatest)
        lastEventAt = e.receivedAtMillis
        if (e.endsShard) end()
        // At the tip, unless newer records wait in the queue (then this round takes them too). An event queued
        // before the round began says nothing about records put since.
        val caughtUp = _ended || (e.millisBehindLatest == 0L && !subscription.recordsQueued && fresh)
        ShardReadBatch(written, e.millisBehindLatest, _ended, bytes, caughtUp)
      case None if lag.contains(0L) && closedShard && confirmEnd() =>
        end()
        ShardReadBatch.empty(0L, ended = true, 0L, caughtUp = true)
      case None if lag.contains(0L) && fresh =>
        ShardReadBatch.empty(0L, ended = false, 0L, caughtUp = true)
      case None =>
        ShardReadBatch.Throttled // no event yet: nothing to say about the lag
    }
  }

  override def close(): Unit = subscription.close()

  /** The latest event reached us during this round. */
  private def fresh: Boolean = lastEventAt >= roundStart

  private def end(): Unit = {
    _ended = true
    subscription.close()
  }

  /**
   * One polling call from our position, at most once per [[EndCheckIntervalMs]]: SHARD_END with no record after
   * the position. Records there mean the subscription is behind: it delivers them first.
   */
  private def confirmEnd(): Boolean = {
    val now = clock.millis()
    if (now < nextEndCheckAt) return false
    nextEndCheckAt = now + EndCheckIntervalMs
    val reader = endCheck.filter(_.position == _position).getOrElse(new PollingShardReader(api, stream, shardId,
      _position, limits, clock, dataLoss = dataLoss, streamCreatedMillis = streamCreatedMillis,
      hashKeyRange = hashKeyRange))
    val (callsBefore, throttlesBefore, lossesBefore) = (reader.calls, reader.throttles, reader.dataLossEvents)
    val batch = reader.next()
    calls += reader.calls - callsBefore
    endCheckThrottles += reader.throttles - throttlesBefore
    dataLossEvents += reader.dataLossEvents - lossesBefore
    endCheck = if (batch.count == 0 && !batch.ended) Some(reader) else None
    batch.ended && batch.count == 0
  }

  /** Kinesis refused the subscription's starting position; InvalidArgument is how it refuses a sequence number. */
  private def positionRefused(e: KinesisException): Boolean =
    e.isInstanceOf[InvalidArgumentException] && _position.isInstanceOf[ShardPosition.AfterRecord] && !restartedFromOldest

  /** Subscribes again from the oldest record left; the first event tells whether records were lost. */
  private def restartFromOldest(e: KinesisException): ShardReadBatch = {
    log.info(s"Kinesis refused a subscription at ${_position} of stream '$stream', $shardId (${e.getMessage}); " +
      "subscribing from the oldest record left")
    restartedFromOldest = true
    subscription.close()
    earlierSubscriptions += subscription.subscriptionsAccepted
    resumeCheck.iteratorPosition(_position, recordsFollowed = lag.exists(_ > 0L))
    subscription = subscribe(resumeCheck.refused())
    subscription.wakeOn(wakeup)
    ShardReadBatch.Throttled
  }
}

object FanOutShardReader {
  private val log = LoggerFactory.getLogger(classOf[FanOutShardReader])
  /** How long one [[FanOutShardReader.next]] waits for an event before the fetcher turns to another shard. */
  val DefaultPollWaitMs = 100L
  val EndCheckIntervalMs = 1000L
  /**
   * How often a reader that raises a signal when events come is polled with none queued (see
   * [[FanOutShardReader.readyAt]]): as often as a closed shard's end may be confirmed.
   */
  val IdleRecheckMs: Long = EndCheckIntervalMs
}
