package io.kinesisspark.reader.polling

import java.time.Clock

import scala.util.Random

import org.slf4j.LoggerFactory
import software.amazon.awssdk.services.kinesis.model.{ExpiredIteratorException, ResourceInUseException}

import io.kinesisspark.{DataLossPolicy, KinesisErrors, ShardPosition, StreamNotFoundException}
import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.{ErrorClassifier, GetRecordsResult, HashKeyRange, KinesisApi, PositionInFutureException, PositionUnavailableException,
  ShardNotFoundException}
import io.kinesisspark.reader.{Deaggregator, FetchLimits, ResumeCheck, ShardCounters, ShardReadBatch, ShardReader,
  TransientBackoff}

/**
 * Reads one shard forward from a position, one GetRecords call per [[next]], within the shard's limits:
 *  - at most one call per `minFetchPeriodMs` (with `catchUpAtOnce`, none to wait while more records are said to
 *    follow; with `afterRecordsPeriodMs`, that shorter wait after a response that brought records or a lag), and
 *    never six within a second;
 *  - a byte budget of `maxFetchRateBytesPerSec`: after a response of n bytes the next call waits n / rate;
 *  - after a response of 10 MB or more, 5 seconds (Kinesis throttles calls in that window anyway);
 *  - when throttled (ProvisionedThroughputExceeded, LimitExceeded, KMSThrottling: see
 *    [[io.kinesisspark.aws.ErrorClassifier]]): halve the records asked for, sleep 5 s (with jitter), then recover by a
 *    tenth of `maxRecordsPerFetch` per successful call;
 *  - a start time ahead of Kinesis's clock (AT_TIMESTAMP in the future, or a driver clock ahead of Kinesis's) reads
 *    nothing and asks again every second, until Kinesis's clock reaches it;
 *  - transient errors (network, 5xx) are retried with jittered exponential backoff, a bounded number of times.
 *
 * Used both to prefetch and to re-read a range whose blocks are gone, so both see exactly the same records. It
 * keeps its own position, so an expired iterator is replaced from the last record read. KPL aggregates are
 * returned as their user records ([[Deaggregator]]), and records at or before the position (user records of an
 * aggregate already read) are skipped, so reading resumes inside an aggregate. When the record to resume
 * after is no longer in the shard (trimmed by retention; found by [[ResumeCheck]] from the records returned),
 * `dataLoss` decides: fail, or continue with the oldest record still there. The position never moves back.
 * Retention takes a shard's records from the oldest on, and an iterator Kinesis issued before does not say when it
 * took the records it points at: it reads on from the oldest record left. So once the last record read is nearly as
 * old as `retentionMillis` (the reader lags by about the retention period, when every record ahead of it is about to
 * expire), each call starts from a fresh iterator AT that record, which [[ResumeCheck]] judges: a loss is found and
 * reported, never read past. Each such call costs a GetShardIterator call too; the lag that needs it is rare.
 * If the stream's creation time differs from `streamCreatedMillis`, the position is gone because
 * the stream was deleted and created again: the reader then reads nothing more (the driver starts the new stream
 * afresh), so records of the new stream are never delivered as if they followed the old one.
 *
 * {{{
 *   val reader = new PollingShardReader(api, "clicks", "shardId-000000000000", ShardPosition.TrimHorizon, limits)
 *   val batch = reader.next()  // batch.records, batch.millisBehindLatest; reader.ended after SHARD_END
 * }}}
 */
final class PollingShardReader(
    api: KinesisApi,
    val stream: String,
    val shardId: String,
    start: ShardPosition,
    limits: FetchLimits,
    clock: Clock = Clock.systemUTC(),
    sleep: Long => Unit = Thread.sleep,
    random: Random = new Random(),
    dataLoss: DataLossPolicy = DataLossPolicy(failOnDataLoss = true),
    streamCreatedMillis: Option[Long] = None,
    hashKeyRange: Option[HashKeyRange] = None,
    retentionMillis: Option[Long] = None) extends ShardReader {

  import PollingShardReader._

  require(start != Finished, s"shard $shardId is finished")

  private var iterator: Option[String] = None
  private var _readyAt = Long.MinValue
  private var _position: ShardPosition = start
  private var _ended = false
  private var recordsPerCall = limits.maxRecordsPerFetch
  private val transientBackoff = new TransientBackoff(random)
  private var streamGone = false
  private var futureStartLogged = false
  private val recentCalls = scala.collection.mutable.Queue.empty[Long]
  // Kinesis's arrival time of the last record read (Long.MinValue before any), and whether a check at the retention
  // edge found that record gone with nothing after it (nothing then to check until a record is read).
  private var lastArrival = Long.MinValue
  private var goneAtEdge = false
  // Whether the last response said records follow the position (it was full, or behind the tip): a record found
  // gone with nothing after it then means those records expired unread (see ResumeCheck).
  private var recordsFollow = false
  private val deaggregator = new Deaggregator(stream, shardId, hashKeyRange, clock)
  private val resumeCheck = new ResumeCheck(stream, shardId, dataLoss, beforeLoss = () =>
    if (streamCreatedMillis.exists(_ != api.describeStream(stream).createdMillis)) {
      throw new StreamRecreatedException(s"the stream was deleted and created again while the shard was read " +
        s"(no record at ${_position})")
    })

  /** Counters since this reader was made; read by the fetcher for metrics. */
  var calls = 0L
  var throttles = 0L
  var callMillis = 0L
  var dataLossEvents = 0L
  override def counters: ShardCounters =
    ShardCounters(calls = calls, throttles = throttles, callMillis = callMillis, dataLossEvents = dataLossEvents) +
      deaggregator.counters

  override def position: ShardPosition = _position

  /** Whether the shard is closed and fully read (GetRecords returned no next iterator). */
  override def ended: Boolean = _ended

  /** Whether the stream was found deleted (reported to the data-loss policy, which let reading go on). */
  def streamDeleted: Boolean = streamGone

  /** The earliest time (clock millis) the next call may be made. */
  override def readyAt: Long = _readyAt

  /** Records asked for per call now (lower than `maxRecordsPerFetch` while recovering from throttling). */
  def currentRecordsPerCall: Int = recordsPerCall

  /**
   * One GetRecords call, after waiting until [[readyAt]]. A throttled or failed call returns an empty batch
   * that is not caught up; the next call waits out the back-off.
   */
  override def next(): ShardReadBatch = {
    require(!_ended, s"shard $shardId of stream '$stream' was already read to its end")
    val now = clock.millis()
    if (_readyAt > now) sleep(_readyAt - now)
    calls += 1
    var started = clock.millis()
    // The next call starts AT the last record read, and is judged; while a judgement waits for records (empty pages
    // before them), the iterator that walks towards them is kept.
    if (!resumeCheck.pending && atRetentionEdge(started)) iterator = None
    try {
      var asked = recordsPerCall
      def call(): GetRecordsResult = {
        val it = currentIterator()
        started = clock.millis() // spacing counts from the GetRecords call, not from a GetShardIterator before it
        // A fresh iterator starts AT the last record read (see ResumeCheck): ask for one more, to get as many new.
        asked = if (resumeCheck.pending) math.min(MaxRecordsPerCall, recordsPerCall + 1) else recordsPerCall
        api.getRecords(stream, it, asked)
      }
      val result =
        try call()
        catch {
          case _: ExpiredIteratorException =>
            iterator = None // iterators live 5 minutes; start a new one from where we are
            call()
        }
      recentCalls.enqueue(started)
      if (recentCalls.size > CallsPerSecond) recentCalls.dequeue()
      val finished = clock.millis()
      callMillis += finished - started
      transientBackoff.succeeded()
      recordsPerCall = math.min(limits.maxRecordsPerFetch, recordsPerCall + math.max(1, limits.maxRecordsPerFetch / 10))

      val judging = resumeCheck.pending
      if (resumeCheck.lossReported(result.records, atTip = result.millisBehindLatest == 0L, _position)) dataLossEvents += 1
      // Judged with nothing returned: the record is gone and nothing after it is left (see ResumeCheck).
      if (judging && !resumeCheck.pending && result.records.isEmpty) goneAtEdge = true
      val written = deaggregator.writerFor(result.records)
      // Rate limits are about what Kinesis sends: the aggregates' bytes, not the user records'.
      val bytes = deaggregator.userRecords(result.records, _position, written)
      val byteBudgetMs = if (limits.maxFetchRateBytesPerSec.isInfinite) 0L else (bytes * 1000 / limits.maxFetchRateBytesPerSec).toLong
      val penaltyMs = if (bytes >= LargeResponseBytes) LargeResponsePenaltyMs else 0L
      // Never a sixth call within one second of five others, whatever the period: Kinesis counts on its own
      // clock, so calls exactly minFetchPeriod = 200ms apart can arrive a little closer and be throttled.
      val windowMs = if (recentCalls.size < CallsPerSecond) Long.MinValue else recentCalls.head + 1000L + WindowMarginMs
      val moreFollow = result.records.nonEmpty && (result.millisBehindLatest > 0 || result.records.size >= asked)
      // Records may follow: some came, or a lag with none (Kinesis's answer in a stretch of the shard without records;
      // not followed at once, as some report a lag at the tip too).
      val mayFollow = result.records.nonEmpty || result.millisBehindLatest > 0
      val periodMs =
        if (limits.catchUpAtOnce && moreFollow) 0L
        else if (mayFollow) limits.afterRecordsPeriodMs.fold(limits.minFetchPeriodMs)(_.min(limits.minFetchPeriodMs))
        else limits.minFetchPeriodMs
      _readyAt = math.max(windowMs, started + math.max(periodMs, math.max(byteBudgetMs, penaltyMs)))

      written.lastPosition.foreach(_position = _)
      if (written.count > 0) {
        lastArrival = written.lastArrivalMillis
        goneAtEdge = false
      }
      iterator = result.nextIterator
      _ended = result.nextIterator.isEmpty
      // Caught up: the shard ended, or a response that did not fill the request came with no lag. A full
      // response says nothing: MillisBehindLatest can be 0 while more records from the same put follow.
      val caughtUp = _ended || (result.millisBehindLatest == 0L && result.records.size < asked)
      recordsFollow = !caughtUp
      ShardReadBatch(written, result.millisBehindLatest, _ended, bytes, caughtUp)
    } catch {
      case e: StreamNotFoundException =>
        streamReplaced(s"the stream was deleted while the shard was read (${e.getMessage})")
      case e: StreamRecreatedException =>
        streamReplaced(e.getMessage)
      case e: ResourceInUseException =>
        // The stream is being created, deleted or resharded: a state that passes.
        transientFailure(e)
      case e: ExpiredIteratorException =>
        // The iterator just made expired too (a clock far off, or a proxy that fails calls): make another after a
        // back-off, a bounded number of times, rather than stop the query on the first.
        iterator = None
        transientFailure(e)
      case e: ShardNotFoundException =>
        // Kinesis removed the shard (closed, and past retention) before it was read to its end: what was left of it
        // expired unread. It is done either way, so its children can be read.
        dataLoss.report(stream, shardId, s"the shard no longer exists in the stream, and records after ${_position} " +
          s"expired unread (${e.detail})")
        dataLossEvents += 1
        _ended = true
        ShardReadBatch.empty(0L, ended = true, bytes = 0L, caughtUp = true)
      case e: PositionInFutureException =>
        // Nothing at or after the start time exists yet: the shard is caught up, and is asked again in a moment.
        if (!futureStartLogged) {
          futureStartLogged = true
          log.info(s"${e.getMessage}; asking again every ${FutureStartRetryMs}ms until Kinesis's clock reaches it")
        }
        _readyAt = clock.millis() + FutureStartRetryMs
        ShardReadBatch.empty(0L, ended = false, bytes = 0L, caughtUp = true)
      case e: Exception if ErrorClassifier.isThrottling(e) =>
        // The shard's read limits (ProvisionedThroughputExceeded), GetShardIterator's or a KMS key's quota.
        throttles += 1
        recordsPerCall = math.max(1, recordsPerCall / 2)
        log.warn(s"Hit rate limit. Sleeping for 5 seconds. (stream '$stream', $shardId; now asking for " +
          s"$recordsPerCall records per call)")
        _readyAt = clock.millis() + ThrottleSleepMs + random.nextInt(ThrottleJitterMs)
        ShardReadBatch.Throttled
      case e: Exception if ErrorClassifier.isTransient(e) => transientFailure(e)
    }
  }

  /**
   * Whether the last record read is within [[RetentionMarginMillis]] (a tenth of the retention period, at most 5
   * minutes: more than any clock difference between this host and Kinesis) of expiring, by this host's clock.
   */
  private def atRetentionEdge(now: Long): Boolean = retentionMillis.exists { retention =>
    lastArrival != Long.MinValue && !goneAtEdge &&
      now - lastArrival > retention - math.min(retention / 10, RetentionMarginMillis)
  }

  /** Retries a passing failure after a jittered exponential back-off, a bounded number of times. */
  private def transientFailure(e: Exception): ShardReadBatch = {
    val delayMs = transientBackoff.failed().getOrElse(
      throw KinesisErrors.unavailable(s"GetRecords on stream '$stream', $shardId", transientBackoff.budget + 1, e))
    log.warn(s"GetRecords on stream '$stream', $shardId failed (${e.getClass.getSimpleName}: ${e.getMessage}); " +
      s"retry ${transientBackoff.failuresInARow} of ${transientBackoff.budget} in about ${delayMs}ms")
    _readyAt = clock.millis() + delayMs
    ShardReadBatch.Throttled
  }

  /**
   * The stream this reader read is gone (deleted, or deleted and created again). The driver's next listing
   * notices too and starts a new stream afresh; until then, report it once (which fails the query unless
   * failOnDataLoss is false) and read nothing.
   */
  private def streamReplaced(what: String): ShardReadBatch = {
    if (!streamGone) {
      streamGone = true
      dataLoss.report(stream, shardId, what)
      dataLossEvents += 1
    }
    iterator = None
    _readyAt = clock.millis() + ThrottleSleepMs
    ShardReadBatch.Throttled
  }

  private def currentIterator(): String = iterator.getOrElse {
    val it =
      try api.shardIterator(stream, shardId, resumeCheck.iteratorPosition(_position, recordsFollow))
      catch {
        case e: PositionUnavailableException if streamCreatedMillis.exists(_ != api.describeStream(stream).createdMillis) =>
          throw new StreamRecreatedException(s"the stream was deleted and created again while the shard was read " +
            s"(${e.getMessage})")
        case e: PositionUnavailableException =>
          // Refused (as some emulators do for a record they no longer have): the oldest record left tells.
          log.info(s"Kinesis refused an iterator at ${_position} of stream '$stream', $shardId (${e.detail}); " +
            "reading from the oldest record left")
          api.shardIterator(stream, shardId, resumeCheck.refused())
      }
    iterator = Some(it)
    it
  }
}

object PollingShardReader {
  private val log = LoggerFactory.getLogger(classOf[PollingShardReader])
  /** Kinesis throttles the 5 seconds after a response of 10 MB or more. */
  val LargeResponseBytes: Long = 10L * 1024 * 1024
  val LargeResponsePenaltyMs = 5000L
  val ThrottleSleepMs = 5000L
  val ThrottleJitterMs = 1000
  /** GetRecords returns at most 10,000 records per call (its Limit's maximum, in the API reference). */
  private val MaxRecordsPerCall = 10000
  /** Kinesis allows 5 GetRecords calls per second per shard. */
  private val CallsPerSecond = 5
  /**
   * How much more than a second the sixth call keeps from the first of five. A call reaches Kinesis some time after it
   * starts here, and not always the same time (a GC pause, a busy core); a throttled call costs its shard 5 s.
   */
  private val WindowMarginMs = 100L
  /** The most of the retention period before expiry that a reader checks its calls in (see [[PollingShardReader]]). */
  val RetentionMarginMillis: Long = 5L * 60 * 1000
  /** How often a start time ahead of Kinesis's clock is asked for again. */
  val FutureStartRetryMs = 1000L
}

/** The stream a reader read was deleted and created again under the same name. */
private final class StreamRecreatedException(message: String) extends RuntimeException(message)
