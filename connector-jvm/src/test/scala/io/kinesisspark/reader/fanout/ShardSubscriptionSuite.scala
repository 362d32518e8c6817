package io.kinesisspark.reader.fanout

import scala.collection.mutable
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.awscore.exception.AwsErrorDetails
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.model.{InvalidArgumentException, KinesisException, ResourceInUseException}

import io.kinesisspark.{KinesisSparkException, ShardPosition, SteppedClock}
import io.kinesisspark.ShardPosition.{AfterRecord, AtTimestamp, TrimHorizon}
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.reader.FetchLimits

class ShardSubscriptionSuite extends AnyFunSuite {
  import FakeShardSubscriber._

  private val Arn = "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/c:1"

  // Subscriptions of one consumer and shard replace each other JVM-wide: each setup reads a shard of its own.
  private val shards = new java.util.concurrent.atomic.AtomicInteger()

  private final class Setup(records: Int, perEvent: Int = 3, capacity: Int = 4, maxEvents: Option[Int] = None,
      idlePauseMs: Long = 60000L) {
    val shard = s"shard-${shards.incrementAndGet()}"
    val clock = new SteppedClock
    clock.now = 1000000L
    val scheduler = new ManualScheduler(clock)
    val subscriber = new FakeShardSubscriber(mutable.ArrayBuffer.tabulate(records)(record), perEvent, clock)
    def subscription(from: ShardPosition): ShardSubscription = {
      val s = new ShardSubscription(subscriber, Arn, "s", shard, from, capacity, maxEvents, scheduler, clock, new Random(3),
        idlePauseMs)
      s.start()
      s
    }
    def reader(from: ShardPosition = TrimHorizon): FanOutShardReader =
      new FanOutShardReader(new FakeKinesisApi(), subscription, "s", shard, from, Arn, FetchLimits(100), clock,
        pollWaitMs = 0L)
  }

  private def sdkError(message: String): SdkClientException = SdkClientException.create(message)
  private def inUse(): Throwable = ResourceInUseException.builder().message("Another active subscription").build()

  /** Reads until `count` records came (running scheduled resubscriptions when nothing is queued). */
  private def readAll(setup: Setup, reader: FanOutShardReader, count: Int): Seq[String] = {
    val out = mutable.ArrayBuffer.empty[String]
    var idle = 0
    while (out.size < count && idle < 1000) {
      val batch = reader.next()
      out ++= batch.records.map(_.sequenceNumber)
      if (batch.records.isEmpty && !setup.scheduler.runNext()) idle += 1 else idle = 0
    }
    out.toSeq
  }

  test("many subscription ends, errors and refusals: every record exactly once, in order, resumed from continuations") {
    val s = new Setup(records = 200)
    val random = new Random(11)
    (1 to 60).foreach { _ =>
      s.subscriber.script += (random.nextInt(4) match {
        case 0 => Accept(events = 1 + random.nextInt(4))
        case 1 => Accept(events = 1 + random.nextInt(4), endWith = Some(sdkError("Connection reset")))
        case 2 => Refuse(inUse())
        case _ => Refuse(sdkError("The connection was closed during the request"))
      })
    }
    val read = readAll(s, s.reader(), 200)
    assert(read == (0 until 200).map(record(_).sequenceNumber))
    val attempts = s.subscriber.attempts
    assert(attempts.size > 40, "the script was played through")
    // Each new subscription starts after the last record an earlier one delivered.
    attempts.zipWithIndex.drop(1).foreach { case (a, i) =>
      val lastDelivered = attempts.take(i).flatMap(p => if (p.events > 0) Some(p) else None).lastOption
      lastDelivered.foreach(_ => assert(a.from != TrimHorizon, s"attempt $i restarted from the beginning"))
    }
    // Never within 5 s of an accepted one: Kinesis would refuse it.
    attempts.zip(attempts.drop(1)).foreach { case (prev, next) =>
      if (prev.events > 0 || prev.outcome.isInstanceOf[Accept]) assert(next.atMillis - prev.atMillis >= 5000L, attempts)
    }
  }

  test("after a refusal (ResourceInUse) the next attempt waits 5 to 6 seconds") {
    val s = new Setup(records = 10)
    s.subscriber.script ++= Seq(Refuse(inUse()), Refuse(inUse()))
    val sub = s.subscription(TrimHorizon)
    s.scheduler.runNext()
    s.scheduler.runNext()
    s.scheduler.runNext()
    val times = s.subscriber.attempts.map(_.atMillis)
    assert(times.size == 3)
    times.zip(times.tail).foreach { case (a, b) => assert(b - a >= 5000L && b - a <= 6000L, times) }
    assert(sub.refusedOrThrottled == 2)
  }

  test("a start time ahead of Kinesis's clock is asked for again every second, and never fails the task") {
    val s = new Setup(records = 6)
    def future(): Throwable = InvalidArgumentException.builder().statusCode(400)
      .message("The timestampInMillis parameter cannot be greater than the currentTimestampInMillis").build()
    (1 to 20).foreach(_ => s.subscriber.script += Refuse(future()))
    val sub = s.subscription(AtTimestamp(0L))
    (1 to 21).foreach { _ => s.scheduler.runNext(); sub.poll(0L) } // poll throws once the subscription failed
    val times = s.subscriber.attempts.map(_.atMillis)
    assert(times.size == 21, times)
    times.zip(times.tail).take(20).foreach { case (a, b) => assert(b - a >= 1000L && b - a < 5000L, times) }
    assert(s.subscriber.attempts.last.outcome == Accept() && sub.queuedEvents > 0)
  }

  test("the queue is bounded: events are asked for only while it has room") {
    val s = new Setup(records = 100, perEvent = 1, capacity = 2)
    val sub = s.subscription(TrimHorizon)
    s.scheduler.runNext()
    assert(sub.queuedEvents == 2 && s.subscriber.attempts.head.events == 2)
    assert(sub.poll(0L).map(_.records.map(_.sequenceNumber)).contains(Seq(record(0).sequenceNumber)))
    assert(sub.queuedEvents == 2 && s.subscriber.attempts.head.events == 3, "one taken, one more asked for")
  }

  test("empty events advance the resume point only when they are behind the tip") {
    val clock = new SteppedClock
    val scheduler = new ManualScheduler(clock)
    val listeners = mutable.ArrayBuffer.empty[(ShardPosition, SubscriptionListener)]
    val subscriber = new ShardSubscriber {
      override def subscribe(arn: String, shard: String, from: ShardPosition, l: SubscriptionListener): Unit = {
        listeners += ((from, l))
        l.onStart(new SubscriptionHandle { def request(n: Long): Unit = (); def cancel(): Unit = () })
      }
    }
    val sub = new ShardSubscription(subscriber, Arn, "s", "shard-empty-events", TrimHorizon, 4, None, scheduler, clock)
    sub.start(); scheduler.runNext()
    listeners.last._2.onEvent(SubscriptionEvent(Nil, Some("5000"), millisBehindLatest = 3000L))
    listeners.last._2.onEnd(None)
    scheduler.runNext()
    assert(listeners.last._1 == AfterRecord("5000"))
    listeners.last._2.onEvent(SubscriptionEvent(Nil, Some("6000"), millisBehindLatest = 0L))
    listeners.last._2.onEnd(None)
    scheduler.runNext()
    assert(listeners.last._1 == AfterRecord("5000"), "an empty event at the tip does not move the resume point")
    assert(sub.queuedEvents == 2)
  }

  test("transient failures back off with jittered, growing pauses; a persistent one reaches the task after the queue") {
    val s = new Setup(records = 3, perEvent = 3)
    s.subscriber.script += Accept(events = 1, endWith = Some(sdkError("reset")))
    (1 to 9).foreach(_ => s.subscriber.script += Refuse(sdkError("Connection refused")))
    val sub = s.subscription(TrimHorizon)
    (1 to 12).foreach(_ => s.scheduler.runNext())
    val backoffs = s.scheduler.delays.drop(2) // the first attempt, then the one 5 s after the accepted subscription
    assert(backoffs.size == 7, s.scheduler.delays)
    backoffs.zipWithIndex.foreach { case (d, i) =>
      val cap = math.min(20000L, 250L << (i + 2))
      assert(d >= cap / 2 && d <= cap, s.scheduler.delays)
    }
    assert(sub.poll(0L).exists(_.records.size == 3), "the queued event comes first")
    val e = intercept[KinesisSparkException](sub.poll(0L))
    assert(e.getMessage.contains("failed 9 times in a row") && e.getMessage.contains("Connection refused"))
    assert(e.getCause.isInstanceOf[SdkClientException])
  }

  test("no free connection in the HTTP/2 client's pool (a bare Throwable from the SDK) is retried, not thrown") {
    val s = new Setup(records = 6, perEvent = 3)
    val poolFull = new Throwable("Acquire operation took longer than the configured maximum time.",
      new java.util.concurrent.TimeoutException("Acquire operation took longer than 10000 milliseconds."))
    s.subscriber.script += Refuse(poolFull)
    s.subscriber.script += Accept(events = 1, endWith = Some(poolFull))
    val sub = s.subscription(TrimHorizon)
    (1 to 4).foreach(_ => s.scheduler.runNext())
    assert(s.subscriber.attempts.size == 3, s.subscriber.attempts)
    val events = Iterator.continually(sub.poll(0L)).take(2).flatten.toSeq
    assert(events.flatMap(_.records).size == 6, "both events, from the second and third attempts")
  }

  test("an error that cannot pass (a denied permission) reaches the task at once, naming the IAM action") {
    val s = new Setup(records = 3)
    val denied = KinesisException.builder().statusCode(400).message("denied")
      .awsErrorDetails(AwsErrorDetails.builder().errorCode("AccessDeniedException").errorMessage("User: u is not " +
        "authorized to perform: kinesis:SubscribeToShard").build()).build()
    s.subscriber.script += Refuse(denied)
    val sub = s.subscription(TrimHorizon)
    s.scheduler.runNext()
    assert(s.scheduler.pending == 0)
    val e = intercept[KinesisSparkException](sub.poll(0L))
    assert(e.getMessage.contains("SubscribeToShard on stream") && e.getMessage.contains(s.shard), e.getMessage)
    assert(e.getMessage.contains("lack the IAM permission kinesis:SubscribeToShard; AWS said: AccessDeniedException: " +
      "User: u is not authorized"), e.getMessage)
    assert(e.getCause eq denied)
  }

  test("a subscription taken over again and again fails, saying two queries share a consumer") {
    val s = new Setup(records = 3)
    (1 to 40).foreach(_ => s.subscriber.script += Refuse(inUse()))
    val sub = s.subscription(TrimHorizon)
    val e = intercept[KinesisSparkException]((1 to 100).foreach { _ => s.scheduler.runNext(); sub.poll(0L) })
    assert(e.getMessage.contains("consumerName") && e.getMessage.contains(s.shard), e.getMessage)
  }

  test("an idle subscription is not renewed when it ends, holds no events, and resumes when polled again") {
    val s = new Setup(records = 30, perEvent = 1, capacity = 1, idlePauseMs = 1000L)
    s.subscriber.script += Accept(events = 1)
    val sub = s.subscription(TrimHorizon)
    s.clock.now += 2000L
    s.scheduler.runNext() // subscribes; one event fills the queue; the subscription ends with nobody polling
    assert(s.scheduler.pending == 0 && s.subscriber.attempts.size == 1)
    assert(sub.queuedEvents == 0, "a paused subscription drops what it held")
    assert(sub.poll(0L).isEmpty)
    while (s.scheduler.runNext()) ()
    assert(s.subscriber.attempts.size == 2 && s.subscriber.attempts(1).from == TrimHorizon, "nothing was taken")
    assert(sub.poll(0L).map(_.records.map(_.sequenceNumber)).contains(Seq(record(0).sequenceNumber)))
  }

  test("a subscription paused while its reader waits (a full prefetch buffer) resumes after what was taken: nothing lost or repeated") {
    val s = new Setup(records = 60, perEvent = 2, capacity = 4, idlePauseMs = 1000L)
    s.subscriber.script ++= Seq(Accept(events = 2), Accept(events = 2)) // then subscriptions that do not end
    val sub = s.subscription(TrimHorizon)
    s.scheduler.runNext() // two events queued; the subscription ends while its reader is active: renewed in 5 s
    val out = mutable.ArrayBuffer.empty[String]
    sub.poll(0L).foreach(out ++= _.records.map(_.sequenceNumber))
    s.scheduler.runNext() // 5 s on, nobody polled since: the renewed subscription fills the queue, ends, and pauses
    assert(s.subscriber.attempts.size == 2 && s.subscriber.attempts(1).events == 4 && s.scheduler.pending == 0)
    assert(sub.queuedEvents == 0, "a paused subscription holds no events")
    var idle = 0
    while (out.size < 60 && idle < 100) {
      sub.poll(0L) match {
        case Some(event) => out ++= event.records.map(_.sequenceNumber); idle = 0
        case None => if (!s.scheduler.runNext()) idle += 1
      }
    }
    assert(s.subscriber.attempts(2).from == AfterRecord(record(1).sequenceNumber), "resumed after the last record taken")
    assert(out == (0 until 60).map(record(_).sequenceNumber))
    sub.close()
  }

  test("a newer subscription of the same consumer and shard in this JVM closes the older and waits out 5 s") {
    val s = new Setup(records = 10)
    val first = s.subscription(TrimHorizon)
    s.scheduler.runNext()
    assert(first.queuedEvents > 0)
    val acceptedAt = s.subscriber.attempts.head.atMillis
    val second = s.subscription(AfterRecord(record(2).sequenceNumber))
    assert(first.queuedEvents == 0 && s.subscriber.attempts.head.cancelled)
    s.scheduler.runNext()
    assert(s.subscriber.attempts(1).atMillis >= acceptedAt + 5000L)
    assert(second.poll(0L).map(_.records.head.sequenceNumber).contains(record(3).sequenceNumber))
    assert(first.poll(0L).isEmpty)
    second.close()
  }

  test("the test hook ends each subscription after N events, and reading goes on seamlessly") {
    val s = new Setup(records = 40, perEvent = 2, maxEvents = Some(3))
    assert(readAll(s, s.reader(), 40) == (0 until 40).map(record(_).sequenceNumber))
    assert(s.subscriber.attempts.size >= 7 && s.subscriber.attempts.init.forall(_.cancelled))
  }
}
