package io.kinesisspark.reader.fanout

import java.time.Clock
import java.util.concurrent.{CompletionException, ConcurrentHashMap, ExecutionException, LinkedBlockingQueue, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.Random
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory
import software.amazon.awssdk.services.kinesis.model.{InvalidArgumentException, LimitExceededException, ResourceInUseException,
  ResourceNotFoundException}

import io.kinesisspark.{KinesisErrors, ShardPosition}
import io.kinesisspark.aws.ErrorClassifier
import io.kinesisspark.reader.{ReadySignal, TransientBackoff}

/**
 * Executor side of enhanced fan-out: one shard's subscription, kept open across prefetch rounds (or real-time
 * batches), with a bounded queue between it and the task that takes its events ([[poll]]). Events are asked for only
 * while the queue has room, so a shard whose batches wait holds at most `queueCapacity` events, never more.
 *
 * When a subscription ends (the service ends each after 5 minutes; tests end them sooner with
 * `maxEventsPerSubscription`) a new one starts from the continuation sequence number of the last event received:
 * the last event with records, or an empty one with `millisBehindLatest` > 0 (the service moved on over a stretch
 * without records). Kinesis refuses a subscription to the same consumer and shard within 5 seconds of the previous
 * successful one (ResourceInUse) and lets a later one take over, so the next subscription starts no sooner than
 * 5 seconds after the last accepted one, and a refused one is retried after 5 to 6 seconds. Other passing failures
 * (connection closed, 5xx, throttling, a consumer not yet visible) are retried within the budget of a
 * [[io.kinesisspark.reader.TransientBackoff]]; what cannot pass (e.g. refused credentials) is rethrown to the task
 * by [[poll]], after the events already queued.
 *
 * A subscription nobody polled for `idlePauseMs` is not renewed when it ends (a query that stopped, a shard moved
 * to another executor, or prefetching paused on a full buffer) and drops its queue, so a paused shard holds no
 * events; polling it again resumes it from after the last event taken. In one JVM only the newest subscription of a
 * consumer and shard lives: starting one closes an older one (a restarted query in the same application).
 *
 * {{{
 *   val subscription = new ShardSubscription(new SdkShardSubscriber(client), consumerArn, "clicks",
 *     "shardId-000000000000", ShardPosition.TrimHorizon)
 *   subscription.start()
 *   subscription.poll(waitMs = 100)  // Some(event) or None
 *   subscription.close()
 * }}}
 */
final class ShardSubscription(
    subscriber: ShardSubscriber,
    val consumerArn: String,
    val stream: String,
    val shardId: String,
    start: ShardPosition,
    queueCapacity: Int = ShardSubscription.DefaultQueueEvents,
    maxEventsPerSubscription: Option[Int] = None,
    scheduler: Scheduler = Scheduler.shared,
    clock: Clock = Clock.systemUTC(),
    random: Random = new Random(),
    idlePauseMs: Long = ShardSubscription.DefaultIdlePauseMs) {

  import ShardSubscription._

  require(queueCapacity > 0, "the queue must hold at least one event")

  // Holds at most queueCapacity events: events are only asked for while it has room.
  private val queue = new LinkedBlockingQueue[Queued]()

  // Guarded by `this`.
  private var resumeFrom: ShardPosition = start // after the last event received
  private var takenUpTo: ShardPosition = start // after the last event poll handed out
  private var epoch = 0L // of the queue's content: a pause drops the queue, and events taken from before it with it
  private var generation = 0L // of the current attempt; callbacks of older ones are ignored
  private var handle: Option[SubscriptionHandle] = None
  private var eventsInSubscription = 0
  private var attemptedAt = Long.MinValue
  private var acceptedAt = Long.MinValue // when the latest subscription that delivered events was made
  private val backoff = new TransientBackoff(random)
  private var refusals = 0
  private var failure: Option[Throwable] = None
  private var shardEnded = false
  private var closed = false
  private var paused = false
  private var lastPolledAt = clock.millis()
  private var _consumerMissing = false
  @volatile private var wakeup: Option[ReadySignal] = None
  @volatile private var failedForGood = false

  /** Counters since this subscription was made. */
  @volatile var subscriptionsAccepted = 0L
  @volatile var refusedOrThrottled = 0L

  /** Starts subscribing (after the 5-second spacing, when it replaces a subscription of this JVM). */
  def start(): Unit = {
    val replaced = Option(live.put((consumerArn, shardId), this)).filter(_ ne this)
    replaced.foreach(_.close())
    val previouslyAccepted = replaced.map(_.lastAcceptedAt).getOrElse(Long.MinValue)
    synchronized { acceptedAt = previouslyAccepted }
    scheduleAttempt(spacingDelay(previouslyAccepted))
  }

  /**
   * The next event, waiting up to `waitMs` for one. When nothing is queued and the subscription failed beyond
   * retrying, the failure is thrown.
   */
  def poll(waitMs: Long): Option[SubscriptionEvent] = {
    val resume = synchronized {
      lastPolledAt = clock.millis()
      val wasPaused = paused && !closed
      paused = false
      wasPaused
    }
    if (resume) {
      log.info(s"Resuming the enhanced fan-out subscription of stream '$stream', $shardId")
      scheduleAttempt(spacingDelay(lastAcceptedAt))
    }
    Option(queue.poll(math.max(0L, waitMs), TimeUnit.MILLISECONDS)) match {
      case Some(queued) =>
        val (event, running) = synchronized {
          // Taken while a pause dropped the queue: the resumed subscription delivers it again.
          if (queued.epoch != epoch) (None, None)
          else {
            advance(queued.event).foreach(takenUpTo = _)
            (Some(queued.event), handle)
          }
        }
        // Room for one more: ask the running subscription for it (outside the lock: the client may deliver at once).
        running.foreach(_.request(1))
        event
      case None =>
        synchronized(failure).foreach(e => throw e)
        None
    }
  }

  /**
   * Raises `signal` for every event queued from now on and when the subscription fails beyond retrying, and at once
   * if either already happened; `None` stops it.
   */
  def wakeOn(signal: Option[ReadySignal]): Unit = {
    wakeup = signal
    if (!queue.isEmpty || failedForGood) signal.foreach(_.raise())
  }

  /** Events received and not yet taken. */
  def queuedEvents: Int = queue.size

  /** Whether the subscription failed beyond retrying: [[poll]] throws once the queue is empty. */
  def failed: Boolean = failedForGood

  /** Whether an event with records is waiting in the queue. */
  def recordsQueued: Boolean = queue.iterator().asScala.exists(_.event.records.nonEmpty)

  /** Whether the endpoint ended the shard (its last event is queued or taken). */
  def shardEndReceived: Boolean = synchronized(shardEnded)

  /** Whether Kinesis said the consumer does not exist on the latest attempt. */
  def consumerMissing: Boolean = synchronized(_consumerMissing)

  def lastAcceptedAt: Long = synchronized(acceptedAt)

  /** Ends the subscription for good and drops what is queued. */
  def close(): Unit = {
    val running = synchronized {
      closed = true
      generation += 1
      val h = handle
      handle = None
      h
    }
    running.foreach(h => try h.cancel() catch { case NonFatal(_) => () })
    queue.clear()
    live.remove((consumerArn, shardId), this)
  }

  private def scheduleAttempt(delayMs: Long): Unit = scheduler.schedule(delayMs)(() => attempt())

  /** At least 5 seconds after the last accepted subscription, so the new one is not refused. */
  private def spacingDelay(lastAccepted: Long): Long =
    if (lastAccepted == Long.MinValue) 0L
    else math.max(0L, lastAccepted + MinSubscribeSpacingMs - clock.millis()) + random.nextInt(SpacingJitterMs + 1)

  private def attempt(): Unit = {
    val started = synchronized {
      if (closed || shardEnded || failure.isDefined || paused || handle.isDefined) None
      else {
        generation += 1
        attemptedAt = clock.millis()
        eventsInSubscription = 0
        Some((generation, resumeFrom))
      }
    }
    started.foreach { case (gen, from) =>
      try subscriber.subscribe(consumerArn, shardId, from, new Listener(gen))
      catch { case NonFatal(e) => ended(gen, Some(e)) }
    }
  }

  private final class Listener(gen: Long) extends SubscriptionListener {
    @volatile private var own: SubscriptionHandle = _

    override def onStart(h: SubscriptionHandle): Unit = {
      own = h
      val demand = ShardSubscription.this.synchronized {
        if (gen != generation) -1
        else { handle = Some(h); queueCapacity - queue.size }
      }
      if (demand < 0) h.cancel() else if (demand > 0) h.request(demand.toLong)
    }

    override def onEvent(event: SubscriptionEvent): Unit = {
      val cancel = ShardSubscription.this.synchronized {
        if (gen != generation) false
        else {
          if (eventsInSubscription == 0) {
            acceptedAt = attemptedAt // the service accepted it: the 5-second spacing counts from its call
            subscriptionsAccepted += 1
          }
          eventsInSubscription += 1
          backoff.succeeded()
          refusals = 0
          _consumerMissing = false
          advance(event).foreach(resumeFrom = _)
          queue.put(Queued(epoch, event.copy(receivedAtMillis = clock.millis())))
          wakeup.foreach(_.raise())
          if (event.endsShard) {
            shardEnded = true
            generation += 1
            handle = None
            true
          } else if (maxEventsPerSubscription.exists(eventsInSubscription >= _)) {
            // Test hook: end it here, as the service does after 5 minutes.
            generation += 1
            handle = None
            scheduleAttempt(spacingDelay(acceptedAt))
            true
          } else false
        }
      }
      if (cancel && own != null) own.cancel()
    }

    override def onEnd(error: Option[Throwable]): Unit = ended(gen, error)
  }

  private def ended(gen: Long, error: Option[Throwable]): Unit = synchronized {
    if (gen == generation && !closed) {
      generation += 1
      handle = None
      val idle = clock.millis() - lastPolledAt > idlePauseMs
      error.map(unwrap) match {
        case None if idle => pause()
        case None => scheduleAttempt(spacingDelay(acceptedAt))
        case Some(e) => failed(e, idle)
      }
    }
  }

  /** Decides, under the lock, what follows a failed subscription. */
  private def failed(e: Throwable, idle: Boolean): Unit = e match {
    case _: ResourceInUseException | _: LimitExceededException =>
      // Another subscription to this consumer and shard is younger than 5 seconds (or SubscribeToShard's 1 call/s
      // per shard was exceeded): a later call wins.
      refusedOrThrottled += 1
      refusals += 1
      if (refusals > MaxRefusals) fail(KinesisErrors.subscriptionRefused(stream, shardId, consumerArn, refusals, e))
      else if (idle) pause()
      else scheduleAttempt(math.max(spacingDelay(acceptedAt), MinSubscribeSpacingMs + random.nextInt(RefusalJitterMs + 1)))
    case _: InvalidArgumentException if resumeFrom.isInstanceOf[ShardPosition.AtTimestamp] =>
      // A start time ahead of Kinesis's clock (see aws.PositionInFutureException): nothing to read yet.
      scheduleAttempt(math.max(spacingDelay(acceptedAt), FutureStartRetryMs))
    case _ if ErrorClassifier.isAccessDenied(e) =>
      fail(KinesisErrors.permissionDenied("SubscribeToShard", s"stream '$stream', $shardId, consumer $consumerArn",
        ErrorClassifier.deniedAction("SubscribeToShard", e), None,
        s"${ErrorClassifier.errorCode(e)}: ${ErrorClassifier.errorMessage(e)}", e))
    case _ if isTransient(e) =>
      if (e.isInstanceOf[ResourceNotFoundException]) _consumerMissing = true
      backoff.failed() match {
        case None => fail(KinesisErrors.unavailable(s"SubscribeToShard on stream '$stream', $shardId",
          backoff.budget + 1, e))
        case Some(_) if idle => pause()
        case Some(delayMs) =>
          log.warn(s"Enhanced fan-out subscription of stream '$stream', $shardId failed (${e.getClass.getSimpleName}: " +
            s"${e.getMessage}); subscribing again in about ${delayMs}ms (${backoff.failuresInARow} of " +
            s"${backoff.budget})")
          scheduleAttempt(math.max(spacingDelay(acceptedAt), delayMs))
      }
    case _ => fail(e)
  }

  private def fail(e: Throwable): Unit = {
    log.error(s"Enhanced fan-out subscription of stream '$stream', $shardId failed: ${e.getMessage}")
    failure = Some(e)
    failedForGood = true
    wakeup.foreach(_.raise())
  }

  /** Under the lock: the subscription ended, and nobody polled for `idlePauseMs`. */
  private def pause(): Unit = {
    val dropped = queue.size
    epoch += 1
    queue.clear()
    resumeFrom = takenUpTo
    log.info(s"Enhanced fan-out subscription of stream '$stream', $shardId ended while nobody read it for over " +
      s"${idlePauseMs / 1000} s; dropped the $dropped events it held, and resumes after the last one read when its " +
      "shard is fetched here again")
    paused = true
  }
}

object ShardSubscription {
  private val log = LoggerFactory.getLogger(classOf[ShardSubscription])

  /** Events buffered per shard: a few seconds of a busy shard (the service sends events of up to about 2 MB/s). */
  val DefaultQueueEvents = 4
  /** Kinesis refuses a subscription within 5 seconds of the previous successful one to the same consumer and shard. */
  val MinSubscribeSpacingMs = 5000L
  private val SpacingJitterMs = 250
  private val RefusalJitterMs = 1000
  /** A subscription nobody polled for this long is not renewed (its shard is read elsewhere, or not at all). */
  val DefaultIdlePauseMs = 60000L
  /** How often a start time ahead of Kinesis's clock is asked for again. */
  val FutureStartRetryMs = 1000L
  /** About 3 minutes of refusals: someone else keeps taking the subscription over. */
  private val MaxRefusals = 30

  private final case class Queued(epoch: Long, event: SubscriptionEvent)

  /**
   * Where a subscription resumes after `event`: after its continuation sequence number when it had records or was
   * behind the tip (the service moved on over a stretch without records); an empty event at the tip moves nothing.
   */
  private def advance(event: SubscriptionEvent): Option[ShardPosition] =
    if (event.records.nonEmpty || event.millisBehindLatest > 0) event.continuationSequenceNumber.map(ShardPosition.AfterRecord(_))
    else None

  /** The newest subscription of each (consumer ARN, shard) in this JVM. */
  private val live = new ConcurrentHashMap[(String, String), ShardSubscription]()

  private def unwrap(e: Throwable): Throwable = e match {
    case c @ (_: CompletionException | _: ExecutionException) if c.getCause != null => unwrap(c.getCause)
    case other => other
  }

  private def isTransient(e: Throwable): Boolean = e match {
    case _: ResourceNotFoundException => true // a consumer just registered is not visible everywhere at once
    case _: java.io.IOException       => true
    case other                        => ErrorClassifier.isTransient(other)
  }
}
