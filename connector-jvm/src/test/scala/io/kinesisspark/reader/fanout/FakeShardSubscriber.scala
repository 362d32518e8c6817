package io.kinesisspark.reader.fanout

import scala.collection.mutable

import io.kinesisspark.{ShardPosition, SteppedClock}
import io.kinesisspark.aws.FetchedRecord

/**
 * A SubscribeToShard endpoint for unit tests, over one shard's `records` (a mutable buffer: tests may append). Each
 * subscription attempt follows the next [[FakeShardSubscriber.Outcome]] of `script` (accepted while the script is
 * empty): refused at once (as kinesis-mock does, after starting the event stream), or accepted, delivering up to
 * `events` events as the subscriber asks for them and then ending (normally or with an error). An event holds up to
 * `perEvent` records after the subscription's position, its continuation is its last record, and its lag is 1 s per
 * record still to come; the last event of a `closedShard` has no continuation. Events are delivered synchronously
 * inside `request` (and [[pump]]). Every attempt is logged with the clock's time.
 */
final class FakeShardSubscriber(val records: mutable.ArrayBuffer[FetchedRecord], perEvent: Int, clock: SteppedClock)
    extends ShardSubscriber {
  import FakeShardSubscriber._

  val script = mutable.Queue.empty[Outcome]
  val attempts = mutable.ArrayBuffer.empty[Attempt]
  var closedShard = false
  /** Records hidden as retention would; a subscription at a hidden record starts at the oldest one left. */
  var trimmedBefore = 0

  override def subscribe(consumerArn: String, shardId: String, from: ShardPosition, listener: SubscriptionListener): Unit = {
    val outcome = if (script.isEmpty) Accept() else script.dequeue()
    val attempt = Attempt(clock.millis(), from, outcome)
    attempts += attempt
    outcome match {
      case Refuse(error) =>
        listener.onStart(new SubscriptionHandle { def request(n: Long): Unit = (); def cancel(): Unit = () })
        listener.onEnd(Some(error))
      case Accept(maxEvents, endWith) =>
        var next = firstIndexAfter(from)
        var delivered = 0
        var demand = 0L
        var done = false
        // Delivers what is asked for and available: at the tip nothing (the real endpoint sends an empty event now
        // and then; tests do not need them), so a reader finds its queue empty there.
        def pump(): Unit =
          while (demand > 0 && !done && next < records.size) {
            val page = records.slice(next, next + perEvent).toSeq
            next += page.size
            delivered += 1
            demand -= 1
            attempt.events += page.size
            val atEnd = next >= records.size
            listener.onEvent(SubscriptionEvent(page, if (atEnd && closedShard) None else Some(page.last.sequenceNumber),
              (records.size - next) * 1000L))
            if (!done && delivered >= maxEvents) { done = true; listener.onEnd(endWith) }
          }
        pumps += (() => pump())
        listener.onStart(new SubscriptionHandle {
          override def request(n: Long): Unit = { demand += n; pump() }
          override def cancel(): Unit = { done = true; attempt.cancelled = true }
        })
    }
  }

  private val pumps = mutable.ArrayBuffer.empty[() => Unit]

  /** Delivers records appended to `records` since, to subscriptions still asking for events. */
  def pump(): Unit = pumps.foreach(_())

  private def firstIndexAfter(from: ShardPosition): Int = math.max(trimmedBefore, from match {
    case ShardPosition.TrimHorizon => 0
    case ShardPosition.AfterRecord(seq, None) => records.indexWhere(r => BigInt(r.sequenceNumber) > BigInt(seq)) match {
      case -1 => records.size
      case i  => i
    }
    case ShardPosition.AfterRecord(seq, Some(_)) => records.indexWhere(r => BigInt(r.sequenceNumber) >= BigInt(seq)) match {
      case -1 => records.size
      case i  => i
    }
    case ShardPosition.AtTimestamp(ms) => records.indexWhere(_.approximateArrivalMillis >= ms) match {
      case -1 => records.size
      case i  => i
    }
    case other => throw new IllegalArgumentException(s"not used in these tests: $other")
  })
}

object FakeShardSubscriber {
  sealed trait Outcome
  /** Accepted; ends after `events` events, normally (`None`) or with an error. */
  final case class Accept(events: Int = Int.MaxValue, endWith: Option[Throwable] = None) extends Outcome
  final case class Refuse(error: Throwable) extends Outcome

  final case class Attempt(atMillis: Long, from: ShardPosition, outcome: Outcome) {
    var events = 0
    var cancelled = false
  }

  def record(n: Int): FetchedRecord = FetchedRecord((1000 + n * 10).toString, s"key-$n", s"data-$n".getBytes, 1000L + n)
}

/** Runs scheduled tasks when the test says, on the test's clock. */
final class ManualScheduler(val clock: SteppedClock) extends Scheduler {
  private val tasks = mutable.ArrayBuffer.empty[(Long, () => Unit)]
  val delays = mutable.ArrayBuffer.empty[Long]

  override def schedule(delayMs: Long)(task: () => Unit): Unit = synchronized {
    delays += delayMs
    tasks += ((clock.millis() + math.max(0L, delayMs), task))
  }

  def pending: Int = synchronized(tasks.size)

  /** Moves the clock to the earliest task's time (if later) and runs the tasks due then; false when there are none. */
  def runNext(): Boolean = {
    val due = synchronized {
      if (tasks.isEmpty) Nil
      else {
        val at = tasks.map(_._1).min
        if (at > clock.now) clock.now = at
        val (now, later) = tasks.partition(_._1 <= clock.now)
        tasks.clear(); tasks ++= later
        now.map(_._2).toList
      }
    }
    due.foreach(_())
    due.nonEmpty
  }
}
