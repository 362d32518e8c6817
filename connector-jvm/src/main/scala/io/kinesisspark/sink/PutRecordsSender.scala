package io.kinesisspark.sink

import java.util.concurrent.{Executor, LinkedBlockingQueue, TimeUnit}

import scala.collection.mutable
import scala.util.control.NonFatal

import io.kinesisspark.{KinesisErrors, KinesisSparkException}
import io.kinesisspark.aws.{ErrorClassifier, PutEntry, PutEntryResult}

/**
 * Puts the entries of one writer task into Kinesis: PutRecords calls within Kinesis's limits
 * ([[PutRecordsBatcher]]), up to `maxInflight` of them at once on `executor`, and every entry Kinesis refuses
 * (throttled, internal failure) or whose call failed in a way worth retrying (throttling, 5xx, I/O) put again
 * after a back-off ([[RetryPolicy]]), until it is stored or out of retries (a throttled entry uses none while the
 * stream takes others of the task's entries, in the same call or within [[ThrottleGraceMs]]: the task is being
 * paced, not failing); then the task fails, naming the stream,
 * the records, the attempts and the last error. Errors no retry can fix (a missing stream, refused credentials, a
 * malformed request) fail the task at once.
 *
 * Pacing. With `pacerFor`, every entry (placed in its shard by the [[ShardMap]]) waits for its shard's
 * [[ShardWritePacer]] to take it, so each shard is sent about what it takes per second and no more; a stream's
 * calls go out every [[PacedCallIntervalMs]] with what the shards' buckets let through (at once when full), and a
 * throttle slows that shard's pacer down. A shard that cannot take an entry, or whose oldest entry waits for a
 * retry, holds the shard's later entries too (so they do not overtake), not the other shards'. Without pacing, a
 * throttle stops the whole stream, new or retried entries, until the throttled entries' back-off ends: the stream
 * is then paced by being refused.
 *
 * All state lives on the task's thread: calls run on `executor` and hand their answers back through a queue that
 * [[add]] and [[flush]] drain. Everything is bounded: at most `maxInflight` + 1 calls' worth of entries (records and
 * bytes) is held, queued or in flight; [[add]] blocks beyond that. Paced, each shard also holds at most
 * [[ShardBacklogSeconds]] of its pacer's limits: a shard takes no more than that in the time, so a larger backlog
 * would only hold memory, and the rows made ahead of it would take the CPU when the task's calls need it (the
 * task makes its rows as its shards take them, not all at its start), and one slow shard would fill the buffer
 * that the task's other shards share.
 *
 * Order. Entries are sent in the order they were added, and a retried entry goes before newer ones, but Kinesis
 * itself reorders in two cases: an entry refused in a call whose later entry of the same key was stored lands
 * after it when retried, and two calls in flight at once may be stored in either order. With `preserveKeyOrder`,
 * neither can happen: an entry is only sent when no earlier entry of its order key (the partition key of a row,
 * the shard of an aggregate) is in flight or waiting, so a call holds at most one entry per key and a key's
 * entries are stored one after the other.
 *
 * {{{
 *   val sender = new PutRecordsSender(api.putRecords, maxInflight = 4, RetryPolicy(20), preserveKeyOrder = false,
 *     metrics, executor)
 *   rows.foreach(r => sender.add(entryOf(r)))  // sends full calls as they fill
 *   sender.flush()                             // returns once every entry is stored
 * }}}
 *
 * @param clock    milliseconds now; with `sleeper`, replaced in tests
 * @param onStored told of every stored entry with Kinesis's answer (the shard it went to)
 * @param pacerFor the pacer of a stream's shard, to pace entries with a predicted shard; `None`: no pacing
 */
final class PutRecordsSender(
    put: (String, IndexedSeq[PutEntry]) => IndexedSeq[PutEntryResult],
    maxInflight: Int,
    retry: RetryPolicy,
    preserveKeyOrder: Boolean,
    metrics: SinkMetrics,
    executor: Executor,
    clock: () => Long = () => System.currentTimeMillis(),
    sleeper: Long => Unit = ms => Thread.sleep(ms),
    onStored: (SinkEntry, PutEntryResult) => Unit = (_, _) => (),
    pacerFor: Option[(String, String) => ShardWritePacer] = None) {
  import PutRecordsSender._

  require(maxInflight >= 1, "maxInflight must be at least 1")

  private val maxBufferedRecords = (maxInflight + 1) * PutRecordsLimits.MaxRecordsPerCall
  private val maxBufferedBytes = (maxInflight + 1).toLong * PutRecordsLimits.MaxBytesPerCall

  private val queues = mutable.LinkedHashMap.empty[String, StreamQueue]
  /** Paced: each stream's shards' entries held, queued or in flight. */
  private val backlogs = mutable.HashMap.empty[String, mutable.HashMap[String, ShardBacklog]]
  private val completions = new LinkedBlockingQueue[Completion]()
  private var inFlight = 0
  private var bufferedEntries = 0
  private var bufferedBytes = 0L
  private var bufferedRows = 0L
  private var nextSeq = 0L
  private var nextStream = 0
  private var failure: Option[Throwable] = None
  private var aborted = false

  /** Entries added and not yet stored (queued or in flight). */
  def pendingEntries: Int = bufferedEntries

  /** Queues `entry`, sending calls that are full; blocks while the buffer is full. */
  def add(entry: SinkEntry): Unit = {
    checkFailure()
    val backlog = backlogOf(entry)
    while (bufferedEntries > 0 &&
        (bufferedEntries >= maxBufferedRecords || bufferedBytes + entry.size > maxBufferedBytes ||
          backlog.exists(_.isFullFor(entry.size)))) {
      dispatch(urgent = true)
      awaitProgress()
      checkFailure()
    }
    val pending = new PendingEntry(nextSeq, entry)
    nextSeq += 1
    queues.getOrElseUpdate(entry.stream, new StreamQueue(entry.stream)).queued.put(pending.seq, pending)
    bufferedEntries += 1
    bufferedBytes += entry.size
    bufferedRows += entry.userRecords
    backlog.foreach(_.add(entry.size))
    drainCompletions()
    checkFailure()
    dispatch(urgent = false)
  }

  /**
   * The backlog of the entry's shard, with the shard's pacer, when it is paced. The pacer is looked up once per
   * shard of the task, not per entry: the JVM's shared map of them keys on the whole connection.
   */
  private def backlogOf(entry: SinkEntry): Option[ShardBacklog] =
    for (pacerOf <- pacerFor; shard <- entry.predictedShard) yield
      backlogs.getOrElseUpdate(entry.stream, mutable.HashMap.empty)
        .getOrElseUpdate(shard, new ShardBacklog(shard, pacerOf(entry.stream, shard)))

  /**
   * Takes in the answers of calls that ended (putting refused entries back for their retry) and starts calls with
   * whatever may go now, full or not, without waiting for any: for a writer that sends each row as it comes
   * ([[KinesisForeachWriter]]) rather than in full calls. Throws if an entry could not be stored.
   */
  def sendReady(): Unit = {
    checkFailure()
    drainCompletions()
    checkFailure()
    dispatch(urgent = true)
  }

  /** Sends everything queued and returns once every entry is stored; throws if one cannot be. */
  def flush(): Unit = {
    checkFailure()
    while (bufferedEntries > 0) {
      dispatch(urgent = true)
      awaitProgress()
      checkFailure()
    }
  }

  /** Stops: nothing more is sent or retried. Calls in flight finish in the background; their answers are dropped. */
  def abort(): Unit = {
    aborted = true
    queues.clear()
    backlogs.clear()
  }

  private def checkFailure(): Unit = {
    if (aborted) throw new IllegalStateException("the Kinesis writer was aborted")
    failure.foreach(e => throw e)
  }

  /** Starts calls while fewer than `maxInflight` run: full ones, or with `urgent` any with an entry ready. */
  private def dispatch(urgent: Boolean): Unit = {
    var started = true
    while (started && inFlight < maxInflight && failure.isEmpty) {
      started = false
      val streams = queues.values.toIndexedSeq
      var i = 0
      while (i < streams.size && inFlight < maxInflight) {
        val queue = streams((nextStream + i) % streams.size)
        val now = clock()
        if (pacerFor.isEmpty || now >= queue.nextPacedCallAt) {
          val batch = nextCall(queue, now)
          // A paced call takes what the shards let through now: waiting for it to fill would only idle them.
          if (!batch.isEmpty && (urgent || batch.isWorthSending || pacerFor.isDefined)) {
            send(queue, batch)
            started = true
            if (pacerFor.isDefined) {
              queue.nextPacedCallAt = if (batch.isWorthSending) now else now + PacedCallIntervalMs
            }
          }
        }
        i += 1
      }
      nextStream += 1
    }
  }

  /**
   * The entries of the next call to `queue`'s stream, in order, skipping those that must wait. With pacing, the
   * entries taken have their shards' tokens, and when nothing could be taken `queue.nextPacedCallAt` is when the
   * first waiting shard can take its entry.
   */
  private def nextCall(queue: StreamQueue, now: Long): PutRecordsBatcher = {
    val batch = new PutRecordsBatcher()
    if (now < queue.pausedUntil) return batch
    val seenKeys = mutable.HashSet.empty[String]
    val heldShards = mutable.HashSet.empty[String]
    var readyAt = Long.MaxValue
    val it = queue.queued.values().iterator()
    var scanned = 0
    var done = false
    while (!done && it.hasNext && scanned < ScanLimit) {
      val pending = it.next()
      scanned += 1
      // Under preserveKeyOrder only the oldest entry of a key that is not in flight may go.
      val eligible = !preserveKeyOrder || (!queue.busyKeys.contains(pending.entry.orderKey) && seenKeys.add(pending.entry.orderKey))
      val paced = backlogOf(pending.entry)
      if (eligible && !paced.exists(b => heldShards.contains(b.shard))) {
        if (pending.notBeforeMillis > now) {
          paced.foreach(heldShards += _.shard) // its shard's later entries wait behind the retry
        } else if (!batch.fits(pending)) {
          done = true
        } else paced match {
          case Some(backlog) =>
            val takenAt = backlog.pacer.take(pending.entry.size)
            if (takenAt != ShardWritePacer.NotTaken) {
              pending.takenAt = takenAt
              batch.tryAdd(pending)
            } else {
              heldShards += backlog.shard
              readyAt = math.min(readyAt, now + backlog.pacer.readyInMs(pending.entry.size))
            }
          case None => batch.tryAdd(pending)
        }
      }
      if (batch.isFull) done = true
    }
    if (batch.isEmpty && readyAt != Long.MaxValue) queue.nextPacedCallAt = math.max(queue.nextPacedCallAt, readyAt)
    batch
  }

  private def send(queue: StreamQueue, batch: PutRecordsBatcher): Unit = {
    val entries = batch.entries
    entries.foreach { p =>
      queue.queued.remove(p.seq)
      if (preserveKeyOrder) queue.busyKeys += p.entry.orderKey
      if (p.attempts > 0) metrics.retriedEntries += 1
    }
    inFlight += 1
    metrics.putRecordsCalls += 1
    val request = entries.map(_.entry.put)
    val stream = queue.stream
    executor.execute(() => {
      val outcome = try Right(put(stream, request)) catch { case NonFatal(e) => Left(e) }
      completions.put(Completion(queue, entries, outcome))
    })
  }

  private def drainCompletions(): Unit = {
    var c = completions.poll()
    while (c != null) {
      handle(c)
      c = completions.poll()
    }
  }

  /** Waits for a call to finish, or for the first retry's back-off to end when nothing is in flight. */
  private def awaitProgress(): Unit = {
    if (!completions.isEmpty) { drainCompletions(); return }
    val now = clock()
    val nextRetry = earliestRetry(now)
    if (inFlight > 0) {
      val timeout = nextRetry.map(_ - now).getOrElse(PollIntervalMs).max(1L).min(PollIntervalMs)
      val c = completions.poll(timeout, TimeUnit.MILLISECONDS)
      if (c != null) { handle(c); drainCompletions() }
    } else {
      nextRetry match {
        case Some(at) => sleeper(at - now)
        case None if bufferedEntries > 0 && failure.isEmpty =>
          throw new IllegalStateException(s"$bufferedEntries entries queued but none can be sent or waited for")
        case None =>
      }
    }
  }

  /** When the first entry now waiting (for a back-off, or for its shard's pacer) may go. */
  private def earliestRetry(now: Long): Option[Long] = {
    var earliest = Long.MaxValue
    queues.values.foreach { q =>
      if (!q.queued.isEmpty && q.pausedUntil > now) earliest = math.min(earliest, q.pausedUntil)
      if (!q.queued.isEmpty && pacerFor.isDefined) earliest = math.min(earliest, math.max(q.nextPacedCallAt, now + 1))
      q.queued.values().forEach(p => if (p.notBeforeMillis > now) earliest = math.min(earliest, p.notBeforeMillis))
    }
    if (earliest == Long.MaxValue) None else Some(earliest)
  }

  private def handle(c: Completion): Unit = {
    inFlight -= 1
    if (preserveKeyOrder) c.entries.foreach(p => c.queue.busyKeys -= p.entry.orderKey)
    if (aborted || failure.isDefined) return
    val exhausted = mutable.ArrayBuffer.empty[PendingEntry]
    /** The stream stored entries of the task in this call or lately: it is taking writes. */
    var streamTakes = false
    val retried = mutable.ArrayBuffer.empty[PendingEntry]
    // A throttled entry while the stream stores others of the task is being paced, not failing: the stream takes
    // what its shards can. Such refusals use no retry, or a writer faster than its shards would run out of them
    // (a task writing to one shard gets whole calls refused while that shard is full).
    def refused(p: PendingEntry, code: String, message: String, streamTookSome: Boolean): Unit = {
      p.attempts += 1
      p.lastErrorCode = code
      p.lastErrorMessage = message
      val throttled = ErrorClassifier.ThrottlingCodes(code)
      if (throttled) {
        metrics.throttledEntries += 1
        backlogOf(p.entry).foreach(_.pacer.throttled(p.takenAt, p.entry.size))
      }
      if (!(throttled && streamTookSome)) p.retriesUsed += 1
      if (retry.exhausted(p.retriesUsed)) exhausted += p else retried += p
    }
    c.outcome match {
      case Right(results) if results.size == c.entries.size =>
        val tookSome = results.exists(_.succeeded) || clock() - c.queue.lastStoredAt <= ThrottleGraceMs
        streamTakes = tookSome
        c.entries.zip(results).foreach { case (p, r) =>
          if (r.succeeded) {
            stored(p, r)
            c.queue.lastStoredAt = clock()
          } else refused(p, r.errorCode.get, r.errorMessage.getOrElse(""), tookSome)
        }
      case Right(results) =>
        failure = Some(KinesisErrors.putFailed(c.queue.stream, c.entries.map(_.entry.userRecords.toLong).sum,
          "UnexpectedResponse", s"Kinesis answered ${results.size} entries for a call of ${c.entries.size}", null))
      case Left(error) => retryable(error) match {
        case Some((code, message)) => c.entries.foreach(refused(_, code, message, streamTookSome = false))
        case None => failure = Some(error match {
          case ours: KinesisSparkException => ours // a missing stream, refused credentials, TLS: already explained
          case other =>
            val (code, message) = describe(other)
            KinesisErrors.putFailed(c.queue.stream, c.entries.map(_.entry.userRecords.toLong).sum, code, message, other)
        })
      }
    }
    if (retried.nonEmpty) {
      // One back-off for all the entries a call got back, so they go out again together, in their order. Paced, an
      // entry its shard refused as full, while the stream takes writes, waits for the shard's pacer instead, which
      // the refusal emptied and slowed: that is the back-off, and one on top would leave the shard idle for it
      // (tens of milliseconds each time a shard alone at its limit meets a throttle, a few percent of its second
      // over a run). A stream that takes nothing gets the back-off, as its entries are spending their retries.
      val throttled = retried.exists(p => ErrorClassifier.ThrottlingCodes(p.lastErrorCode))
      val now = clock()
      val notBefore = now + retry.delayMs(retried.map(_.attempts).max, throttled)
      retried.foreach { p =>
        val pacedOut = streamTakes && pacerFor.isDefined && p.entry.predictedShard.isDefined &&
          p.lastErrorCode == ShardFullCode
        p.notBeforeMillis = if (pacedOut) now else notBefore
        c.queue.queued.put(p.seq, p)
      }
      // Unpaced, a throttled stream takes nothing new either until then: new rows would only be throttled too, and
      // spend their retries on it. Paced, the throttled shards' pacers hold back their shards, and only them
      // (entries with no predicted shard, of a stream whose shards could not be listed, are unpaced).
      if (throttled && (pacerFor.isEmpty || retried.exists(_.entry.predictedShard.isEmpty))) {
        c.queue.pausedUntil = math.max(c.queue.pausedUntil, notBefore)
      }
    }
    if (exhausted.nonEmpty && failure.isEmpty) {
      val rows = exhausted.map(_.entry.userRecords.toLong).sum
      val last = exhausted.last
      failure = Some(KinesisErrors.putRetriesExhausted(c.queue.stream, rows, last.attempts, retry.maxRetries, last.lastErrorCode,
        last.lastErrorMessage, bufferedRows - rows))
    }
  }

  private def stored(p: PendingEntry, result: PutEntryResult): Unit = {
    bufferedEntries -= 1
    bufferedBytes -= p.entry.size
    bufferedRows -= p.entry.userRecords
    backlogOf(p.entry).foreach(_.remove(p.entry.size))
    metrics.recordsWritten += p.entry.userRecords
    metrics.bytesWritten += p.entry.userBytes
    metrics.kinesisRecordsWritten += 1
    if (p.entry.aggregated) metrics.aggregatesWritten += 1
    onStored(p.entry, result)
  }
}

object PutRecordsSender {
  /** How far into a stream's queue a call looks for entries that may go (under preserveKeyOrder many may not). */
  val ScanLimit = 20000
  /** A stream that stored an entry of the task this recently is taking writes: throttling there uses no retry. */
  val ThrottleGraceMs = 10000L
  /** What Kinesis answers for an entry its shard has no room for (the PutRecords API reference). */
  val ShardFullCode = "ProvisionedThroughputExceededException"
  /** Longest wait for a call in flight before looking at the queue again. */
  val PollIntervalMs = 1000L
  /**
   * How often a paced stream gets a call (unless the last one was full): often enough that a shard's second is
   * spread over many calls (no burst the shard could refuse), seldom enough that calls carry many entries.
   */
  val PacedCallIntervalMs = 50L
  /**
   * Paced, the most a shard's entries of one task hold, queued or in flight, in seconds of its pacer's limits:
   * enough that a shard never waits for the task to make its next rows (a GC pause, a busy core), little enough
   * that a task holds a few MiB per shard rather than a whole buffer of rows made far ahead.
   */
  val ShardBacklogSeconds = 2

  /** What one paced shard's entries of a task hold, against [[ShardBacklogSeconds]] of its pacer's limits. */
  private final class ShardBacklog(val shard: String, val pacer: ShardWritePacer) {
    private val maxEntries = ShardBacklogSeconds.toLong * pacer.limits.recordsPerSecond
    private val maxBytes = ShardBacklogSeconds * pacer.limits.bytesPerSecond
    private var entries = 0L
    private var bytes = 0L
    /** Whether one more entry of `size` bytes would take it over its bound; an empty backlog takes any entry. */
    def isFullFor(size: Int): Boolean = entries > 0 && (entries + 1 > maxEntries || bytes + size > maxBytes)
    def add(size: Int): Unit = { entries += 1; bytes += size }
    def remove(size: Int): Unit = { entries -= 1; bytes -= size }
  }

  private final class StreamQueue(val stream: String) {
    /** Entries waiting to be sent, first or again, by their place in the task's order. */
    val queued = new java.util.TreeMap[java.lang.Long, PendingEntry]()
    /** Under preserveKeyOrder, the order keys of entries in flight. */
    val busyKeys = mutable.HashSet.empty[String]
    /** Unpaced: after a throttle, nothing goes to the stream before this time. */
    var pausedUntil = 0L
    /** When the stream last stored an entry of the task. */
    var lastStoredAt: Long = Long.MinValue / 2
    /** Paced: the next call to the stream is not looked for before this time. */
    var nextPacedCallAt = 0L
  }

  private final case class Completion(queue: StreamQueue, entries: IndexedSeq[PendingEntry],
      outcome: Either[Throwable, IndexedSeq[PutEntryResult]])

  /** The error code and message of a failed call worth retrying (throttling, 5xx, I/O); `None` if it is not. */
  private[sink] def retryable(error: Throwable): Option[(String, String)] =
    if (ErrorClassifier.isTransient(error)) Some(describe(error)) else None

  private def describe(error: Throwable): (String, String) =
    (ErrorClassifier.errorCode(error), ErrorClassifier.errorMessage(error))
}
