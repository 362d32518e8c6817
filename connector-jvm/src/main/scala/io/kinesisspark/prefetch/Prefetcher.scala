package io.kinesisspark.prefetch

import java.time.Clock
import java.util.UUID
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable
import scala.concurrent.Await
import scala.concurrent.duration.Duration
import scala.util.control.NonFatal

import org.apache.spark.{FutureAction, SparkContext, TaskContext}
import org.apache.spark.kinesisspark.{BlockStoreBridge, FetchResultChannel}
import org.slf4j.LoggerFactory

import io.kinesisspark.{BlockRemover, BufferIndex, DataLossPolicy, KinesisErrors, KinesisSourceOffset,
  KinesisSourceOptions, ShardGraph, ShardListings, ShardPosition, ShardStats, StartReconciler, StreamNotFoundException,
  TestSettings}
import io.kinesisspark.ShardPosition.{Finished, TrimHorizon, reaches}
import io.kinesisspark.aws.{ErrorClassifier, KinesisApi, KinesisClients}
import io.kinesisspark.efo.ConsumerRegistrar
import io.kinesisspark.fetch._

/**
 * The driver's background prefetcher. A daemon thread runs fetch rounds back to back (another lists shards, on
 * its own schedule): each round is one Spark job whose tasks hand `shardsPerTask` shards each to the
 * [[FetchService]] of the executor that fetched them last (so readers keep their iterators and rate limits) and
 * return at once: the executor fetches them on its own threads, holding no task slot, leaves the records there as
 * blocks, and delivers the blocks' metadata to this prefetcher's [[FetchResultChannel]] endpoint. The round ends
 * when every result has come (or its executor is lost); the metadata goes into the [[BufferIndex]], and the stream
 * exposes it as batch ends.
 *
 * It pauses while the buffer holds `fetchBufferSize` bytes or more, lists shards every `shardFetchInterval`, and
 * fetches a child shard as soon as its parents have been fetched to their end (the stream still exposes the
 * child only after the parents' batches). The first failure stops it and is rethrown to the query.
 *
 * It decides where fetching of a shard the batch start does not hold begins: the initial position for the
 * shards of a stream added to `streamName` (at their first listing), TRIM_HORIZON for shards that appear later
 * (resharding) and for every shard of a stream that was deleted and created again. Whether such changes are
 * acceptable (data loss) is decided by [[StartReconciler]], not here.
 *
 * With enhanced fan-out (`consumers`), each stream's consumer is registered (or found) before its shards are first
 * fetched and checked again every `consumerRefreshInterval`; fetch orders carry its ARN, and whether ListShards
 * reports the shard closed (the executor then confirms its end, which EFO endpoints need not announce). The
 * consumers are deregistered on [[stop]] when the options require it.
 */
final class Prefetcher(
    sc: SparkContext,
    options: KinesisSourceOptions,
    streamId: Int,
    clock: Clock = Clock.systemUTC(),
    consumers: Option[ConsumerRegistrar] = None,
    silenceLimitMillis: Long = Prefetcher.SilenceLimitMillis) {

  import Prefetcher._

  private val api: KinesisApi = KinesisClients.api(options.connection)
  private val limits = options.fetchLimits
  private val nextOrder = new AtomicLong(0)
  private val jobGroup = s"kinesis-spark-prefetch-$streamId"
  val buffer = new BufferIndex
  private val remover = new BlockRemover(s"kinesis-spark-block-remover-$streamId",
    b => BlockStoreBridge.remove(b.streamId, b.uniqueId))

  // Written under `this`; read without it. Immutable maps in volatile fields, so the query thread reads them (every
  // shard's start in each plan, every shard's statistics in each progress report) without waiting for the lock,
  // which the round and listing threads hold for tens of milliseconds at 10,000 shards: in a JFR of
  // DriverScaleBenchmark at 10,000 shards, the query thread waited 50 to 100 ms at a time for it in `shardStats`,
  // `completedRounds` and `startingPositions`.
  @volatile private var base = Map.empty[(String, String), ShardPosition]
  @volatile private var stats = Map.empty[(String, String), ShardStats]
  // Guarded by `this`.
  private val graphs = mutable.Map.empty[String, ShardGraph]
  private val shardListings = new ShardListings
  private val created = mutable.Map.empty[String, Long]
  // Each stream's retention period as last described (orders carry it: see ShardReader's retention edge).
  private val retention = mutable.Map.empty[String, Long]
  // Streams the batch start did not hold (added to `streamName`): when they were added (their first listed shards
  // start at the initial position as of then).
  private val addedStreamAt = mutable.Map.empty[String, Long]
  private val missingStreams = mutable.Set.empty[String]
  @volatile private var streamDataLossEvents = 0L // written under `this`, read without it, as the counters below
  private val dataLoss = DataLossPolicy(options.failOnDataLoss)
  private var lastListMillis = Long.MinValue
  private val listingBackoff = new TransientBackoff()
  // Written under `this`; read without it (checkFailure runs on the query thread every plan).
  @volatile private var failure: Option[Throwable] = None
  @volatile private var rounds = 0L
  @volatile private var lastRoundBlockCount = 0L
  @volatile private var blocksStoredTotal = 0L
  @volatile private var lastRoundDuration = 0L
  @volatile private var ticketsLost = 0L
  @volatile private var resultsRefused = 0L
  @volatile private var stopped = false
  @volatile private var started = false // the prefetcher's threads were started (under `this`)
  /**
   * Each stream's graph and creation time as last listed, published under `this` whenever `graphs` or `created`
   * change, and read without it: the query thread plans every batch from them, while the lister and the round thread
   * hold the lock for tens of milliseconds at 10,000 shards (JFR of DriverScaleBenchmark: the plan's waits for it).
   */
  @volatile private var listedView = ListedStreams(Map.empty, Map.empty)
  /** The start, starts and listing [[knowsAll]] last found the start known in (the query thread's, as `start`). */
  @volatile private var knownFrom: Option[(KinesisSourceOffset, Map[(String, String), ShardPosition], ListedStreams)] =
    None

  private def publishListed(): Unit = listedView = ListedStreams(graphs.toMap, created.toMap)

  /** Trigger.AvailableNow's target time: responses are split there (see [[ShardFetchTask.arrivalCut]]). */
  @volatile private var arrivalCut: Option[Long] = None

  /** From now on, fetch rounds store what arrived up to `millis` and after it as separate ranges. */
  def cutAtArrival(millis: Long): Unit = arrivalCut = Some(millis)
  private var thread: Thread = _
  // Lists shards on its own schedule, so a slow or throttled control plane never holds up fetching.
  private var lister: Thread = _
  private var runningRound: Option[FutureAction[_]] = None
  // Where executors deliver what they fetched: a name of its own per prefetcher (streamId alone may repeat across
  // the class loaders of Spark Connect sessions).
  private val resultEndpoint = s"kinesis-spark-prefetch-$streamId-${UUID.randomUUID()}"
  private var receiver: Option[FetchResultChannel.Receiver] = None
  private val nextTicket = new AtomicLong(0)
  // The running round's tickets: where each was dispatched (None until its task says), when its executor last said
  // it holds it, and those delivered.
  private val awaited = mutable.Map.empty[Long, Option[String]]
  private val heardOf = mutable.Map.empty[Long, Long]
  private val delivered = mutable.Map.empty[Long, Seq[ShardFetchResult]]
  // The copy of each recent ticket that was kept: an executor that did not get the answer delivers it again.
  private val keptCopies = mutable.LinkedHashMap.empty[Long, String]

  /** Starts prefetching from `start` (idempotent: later calls only add shards `start` knows and we do not). */
  def start(start: KinesisSourceOffset): Unit = if (!knowsAll(start)) synchronized {
    val added = for ((stream, shards) <- start.streams if options.streams.contains(stream); (shard, pos) <- shards
                     if !base.contains((stream, shard))) yield (stream, shard) -> pos
    if (added.nonEmpty) base = base ++ added
    start.created.foreach { case (stream, ms) => created.getOrElseUpdate(stream, ms) }
    if (start.created.keys.exists(s => !listedView.created.contains(s))) publishListed()
    options.streams.filterNot(start.streams.contains).filterNot(graphs.contains).foreach { stream =>
      addedStreamAt.getOrElseUpdate(stream, clock.millis())
    }
    if (thread == null && !stopped) {
      receiver = Some(FetchResultChannel.open(resultEndpoint)(onResult, onPending))
      thread = new Thread(() => run(), s"kinesis-spark-prefetcher-$streamId")
      thread.setDaemon(true)
      thread.start()
      lister = new Thread(() => listShards(), s"kinesis-spark-lister-$streamId")
      lister.setDaemon(true)
      lister.start()
      started = true
    }
  }

  /**
   * Whether [[start]] would change nothing: checked without the lock, as the query thread calls it every plan and the
   * round thread holds the lock for tens of milliseconds at 10,000 shards (JFR of DriverScaleBenchmark).
   */
  private def knowsAll(start: KinesisSourceOffset): Boolean = {
    val (known, listed) = (base, listedView)
    // The same start, starts and listing as when it last held: it holds (Spark passes the same start on every
    // trigger until a batch has data, and walking 10,000 shards each time showed in a JFR of DriverScaleBenchmark).
    if (knownFrom.exists { case (s, k, l) => (s eq start) && (k eq known) && (l eq listed) }) return true
    val holds = (started || stopped) && start.created.keys.forall(listed.created.contains) &&
      options.streams.forall(s => start.streams.contains(s) || listed.graphs.contains(s)) &&
      start.streams.forall { case (stream, shards) =>
        !options.streams.contains(stream) || shards.keys.forall(shard => known.contains((stream, shard)))
      }
    if (holds) knownFrom = Some((start, known, listed))
    holds
  }

  /** Each stream as last listed (streams not listed yet are absent). */
  def listings: Map[String, StartReconciler.Listing] = listedView.listings

  /** Where fetching of a shard began or continues from when nothing is buffered for it. */
  def startingPosition(stream: String, shardId: String): Option[ShardPosition] = base.get((stream, shardId))

  /** [[startingPosition]] of every shard known, at once (metrics ask for thousands). */
  def startingPositions: Map[(String, String), ShardPosition] = base

  /** Every shard known to the prefetcher with the furthest position fetched (or where fetching starts). */
  private def positions: Map[(String, String), ShardPosition] = synchronized(positionsFrom(base))

  private def positionsFrom(starts: Map[(String, String), ShardPosition]): Map[(String, String), ShardPosition] = {
    val ends = buffer.ends
    starts.map { case (k, start) => k -> ends.getOrElse(k, start) }
  }

  /** Per shard: the latest fetch statistics. */
  def shardStats: Map[(String, String), ShardStats] = stats

  def completedRounds: Long = rounds

  /** The blocks the latest round stored: each was reported to the driver's block manager, one RPC apiece. */
  def lastRoundBlocks: Long = lastRoundBlockCount

  /** The blocks every round so far stored. */
  def blocksStored: Long = blocksStoredTotal

  /** How long the latest round that fetched took, from its job's submission to its last result's delivery. */
  def lastRoundMillis: Long = lastRoundDuration

  /** Prefetch tickets given up on: their executor was gone, or silent for the silence limit (their shards were fetched
   * again in a later round). */
  def lostTickets: Long = ticketsLost

  /** Results delivered for tickets no round waited for any more (a lost ticket's, delivered late): refused, and their
   * executor removed their blocks. */
  def refusedResults: Long = resultsRefused

  /** Data-loss events the driver saw (deleted streams); shard readers count theirs in [[shardStats]]. */
  def driverDataLossEvents: Long = streamDataLossEvents

  /** Rethrows the prefetcher's failure, if it failed. */
  def checkFailure(): Unit = failure.foreach(e => throw e)

  /**
   * A batch through `end` has run (the stream says so when Spark asks for the next batch's end, and Spark's `commit`
   * says it again later): fetching continues from there for shards with nothing buffered. A batch of a
   * stream since deleted and created again (one replayed from the offset log after a restart, planned before the
   * listing that found the new stream) moves nothing of the new stream: its positions belong to the old one, and
   * would skip the new stream's records or drop them from the buffer. The blocks the batch no longer needs are
   * removed in the background ([[BlockRemover]]): Spark calls this on the query's thread.
   */
  def committed(end: KinesisSourceOffset): Unit = {
    val (blocks, bytes) = synchronized {
      val current = end.copy(streams = end.streams.filter { case (stream, _) =>
        end.created.get(stream).forall(c => created.get(stream).forall(_ == c))
      })
      // Only forwards: with asynchronous progress tracking Spark commits an older batch after the stream has already
      // released a later one (see KinesisMicroBatchStream.latestOffsetOf), and moving back would fetch again what
      // was read, or reopen a finished parent.
      val moved = for ((stream, shards) <- current.streams; (shard, pos) <- shards
                       if base.get((stream, shard)).forall(reaches(pos, _))) yield (stream, shard) -> pos
      if (moved.nonEmpty) base = base ++ moved
      val held = buffer.bufferedBytes
      val dropped = buffer.dropThrough(current)
      (dropped, held - buffer.bufferedBytes)
    }
    remover.submit(blocks, bytes)
  }

  /** Waits until a round completes after `round`, or `timeoutMs` passes. */
  def awaitRoundAfter(round: Long, timeoutMs: Long): Unit = synchronized {
    val deadline = clock.millis() + timeoutMs
    while (rounds <= round && failure.isEmpty && !stopped && clock.millis() < deadline) {
      wait(math.max(1L, deadline - clock.millis()))
    }
  }

  /** Stops the thread, cancels a running round, and drops every block and cached reader of this stream. */
  def stop(): Unit = {
    // Under the lock that guards submitting a round: after this, no round starts, and the one running is known.
    // After this, no round starts, no result is taken (executors remove the blocks of those they deliver later),
    // and the round being dispatched is known.
    val (t, l, round, listening) = synchronized {
      stopped = true
      notifyAll()
      (thread, lister, runningRound, receiver)
    }
    round.foreach(_.cancel())
    listening.foreach(_.close()) // executors' fetches for this query end at their next call (see FetchService)
    if (t != null) { t.interrupt(); t.join(StopWaitMillis) }
    if (l != null) { l.interrupt(); l.join(StopWaitMillis) }
    consumers.foreach(_.stop())
    remover.stop() // what it had queued goes with the sweep below
    ShardReaderCache.dropStream(streamId) // this JVM's fetches and subscriptions (local mode) end now
    buffer.clear()
    BlockStoreBridge.removeAll(streamId)
    // In local mode, a fetch in this JVM that was storing a block as the stop came removes it itself, but may do so
    // after the sweep above reached the master: sweep again once they are gone. (Executors elsewhere remove their
    // own once they find the endpoint gone; on a cluster's driver the service is not even started.)
    if (sc.isLocal) {
      val deadline = clock.millis() + StopWaitMillis
      while (FetchService.pending(streamId) > 0 && clock.millis() < deadline) Thread.sleep(20)
      BlockStoreBridge.removeAll(streamId)
    }
  }

  /**
   * An executor's delivery of a ticket's results: kept if the running round waits for it and no other copy came
   * first (see [[FetchService]]); the same copy delivered again (its executor missed the answer) is told it was kept.
   */
  private def onResult(bytes: Array[Byte]): Int = {
    val FetchDelivery(ticket, copy, results) = FetchDelivery.decode(bytes)
    synchronized {
      if (stopped) FetchResultChannel.Closed
      else if (keptCopies.get(ticket).contains(copy)) FetchResultChannel.Accepted
      else if (awaited.contains(ticket) && !delivered.contains(ticket)) {
        delivered(ticket) = results
        keptCopies(ticket) = copy
        if (keptCopies.size > KeptCopiesRemembered) keptCopies.remove(keptCopies.head._1)
        notifyAll()
        FetchResultChannel.Accepted
      } else {
        resultsRefused += 1
        FetchResultChannel.Refused
      }
    }
  }

  /** An executor's list of the tickets it holds, not delivered yet: they are not lost. */
  private def onPending(tickets: Array[Long]): Unit = synchronized {
    val now = clock.millis()
    tickets.foreach(id => if (awaited.contains(id)) heardOf(id) = now)
  }

  private def run(): Unit = {
    try {
      while (!stopped) {
        val fetchedAnything = runRound()
        // An idle or throttled stream: do not launch empty jobs back to back.
        if (!fetchedAnything && !stopped) synchronized(wait(limits.minFetchPeriodMs))
      }
    } catch {
      case _: InterruptedException if stopped => ()
      case NonFatal(e) if stopped => log.debug("prefetch round ended by stop", e)
      case NonFatal(e) =>
        log.error(s"Kinesis prefetching stopped: ${e.getMessage}", e)
        synchronized { if (failure.isEmpty) failure = Some(e); notifyAll() }
    }
  }

  /** The lister thread: lists every `shardFetchInterval` (sooner after a failure's back-off) until stopped. */
  private def listShards(): Unit =
    try {
      while (!stopped) {
        refreshShards()
        // Never back to back, whatever shardFetchInterval says: each listing is several control-plane calls.
        val dueInMs = math.max(MinListingGapMs, lastListMillis + options.shardFetchIntervalMs - clock.millis())
        if (!stopped) synchronized(wait(dueInMs))
      }
    } catch {
      case _: InterruptedException if stopped => ()
      case NonFatal(e) if stopped => log.debug("shard listing ended by stop", e)
      case NonFatal(e) =>
        log.error(s"Listing Kinesis shards failed: ${e.getMessage}", e)
        synchronized { if (failure.isEmpty) failure = Some(e); notifyAll() }
    }

  /** One round; returns whether any records (or shard ends) were fetched. */
  private def runRound(): Boolean = {
    consumers.foreach(_.refreshDue())
    // Blocks committed and not removed yet are still in the executors' memory.
    val room = options.fetchBufferSizeBytes - buffer.bufferedBytes - remover.pendingBytes
    if (room <= 0) {
      synchronized { rounds += 1; notifyAll(); wait(limits.minFetchPeriodMs) }
      return false
    }
    val readable = synchronized {
      val known = positions
      options.streams.flatMap { stream =>
        val graph = graphs.getOrElse(stream, ShardGraph(Nil))
        val positions = known.collect { case ((s, shard), pos) if s == stream => shard -> pos }
        graph.readable(positions).map(s => (stream, s, positions(s.shardId)))
      }
    }
    // Outside the lock: registering a consumer waits until it is ACTIVE. A stream deleted since its listing has no
    // consumer either; the next listing reports it.
    val consumerArns = readable.map(_._1).distinct.flatMap { s =>
      consumers.flatMap(c => try Some(s -> c.consumerArn(s)) catch { case _: StreamNotFoundException => None })
    }.toMap
    val orders = synchronized {
      readable.filter(r => consumers.isEmpty || consumerArns.contains(r._1)).map { case (stream, s, from) =>
        ShardFetchOrder(stream, s.shardId, from, nextOrder.getAndIncrement(), created.get(stream), s.hashKeyRange,
          consumerArns.get(stream), s.closed, retention.get(stream))
      }
    }
    val roundStart = clock.millis()
    val results = if (orders.isEmpty) Nil else runJob(orders, room)
    results.flatMap(_.failure).headOption.foreach(e => throw e) // a task's error (see FetchFailure)
    results.filter(_.consumerMissing).map(_.stream).distinct.foreach { stream =>
      log.warn(s"Kinesis says the enhanced fan-out consumer of stream '$stream' does not exist; checking it again")
      consumers.foreach(_.invalidate(stream))
    }
    val roundEnd = clock.millis()
    val staleBlocks = synchronized {
      // Listing runs meanwhile: a stream created again, or a shard gone, since the orders were made leaves results
      // that no longer continue what is buffered; they are dropped (their blocks removed), never appended.
      val ends = buffer.ends
      val (fitting, stale) = results.partition { r =>
        val key = (r.stream, r.shardId)
        base.contains(key) && r.ranges.headOption.forall(first => ends.getOrElse(key, base(key)) == first.from)
      }
      stale.foreach(r => log.info(s"Dropping what a prefetch round read of stream '${r.stream}', ${r.shardId}: the " +
        "shard was reset or dropped by a listing during the round"))
      buffer.appendAll(fitting.flatMap(_.ranges))
      stats = stats ++ fitting.map { r =>
        val key = (r.stream, r.shardId)
        key -> ShardStats.after(stats.get(key), r, roundStart, roundEnd)
      }
      rounds += 1
      if (orders.nonEmpty) {
        lastRoundBlockCount = results.iterator.flatMap(_.ranges).count(_.block.exists(_.last)).toLong
        blocksStoredTotal += lastRoundBlockCount
        lastRoundDuration = roundEnd - roundStart
      }
      notifyAll()
      stale.flatMap(_.ranges).flatMap(_.block).filter(_.last)
    }
    staleBlocks.foreach(b => BlockStoreBridge.remove(b.streamId, b.uniqueId))
    results.exists(_.ranges.nonEmpty)
  }

  /**
   * Lists shards every `shardFetchInterval`, most times only those after the highest id known (see
   * [[ShardListings.listAfter]]), and describes a stream, for its creation time, when it is first listed or a full
   * listing shows it was created again (see [[ShardListings.needsDescribe]]). Shards that
   * appear start at TRIM_HORIZON, or at the initial position when their stream was just added, or finished when
   * their children were read already (they had left the offset); what a listing must show before shards are
   * forgotten is [[ShardListings]]'s call; a stream whose creation time changed is fetched afresh from TRIM_HORIZON.
   */
  private def refreshShards(): Unit = {
    if (lastListMillis != Long.MinValue && clock.millis() - lastListMillis < options.shardFetchIntervalMs) return
    val listed =
      try options.streams.flatMap { s =>
        try {
          val knownCreated = synchronized(created.get(s))
          val listing = shardListings.listAfter(s).filter(_ => knownCreated.isDefined) match {
            case Some(lastShardId) => // only the shards a reshard added since
              shardListings.updateAfter(s, api.listShards(s, options.maxShardsPerDescribe, Some(lastShardId)))
                .map(graph => (knownCreated.get, graph))
            case None =>
              val shards = api.listShards(s, options.maxShardsPerDescribe)
              // The creation time tells a stream created again; ListShards shows when it must be asked for.
              // Described at least once per stream by this driver, for its retention period.
              val createdMillis = knownCreated.filterNot(_ => shardListings.needsDescribe(s, shards))
                .filter(_ => synchronized(retention.contains(s)))
                .getOrElse {
                  val summary = api.describeStream(s)
                  val retentionMillis = TestSettings.long(TestSettings.RetentionMs)
                    .getOrElse(summary.retentionHours * MillisPerHour)
                  synchronized(retention(s) = retentionMillis)
                  summary.createdMillis
                }
              shardListings.update(s, createdMillis, shards).map(graph => (createdMillis, graph))
          }
          listing match {
            case Right((createdMillis, graph)) => Some((s, createdMillis, graph))
            case Left(why) => log.warn(why); None
          }
        } catch { case e: StreamNotFoundException => streamMissing(s, e); None }
      } catch {
        // Kinesis unreachable for a while: keep reading the shards known, and list again after a back-off.
        case NonFatal(e) if ErrorClassifier.isTransient(e) =>
          val delayMs = listingBackoff.failed().getOrElse(throw KinesisErrors.unavailable(
            s"Listing the shards of ${options.streams.map(s => s"'$s'").mkString(", ")}", listingBackoff.budget + 1, e))
          log.warn(s"Listing Kinesis shards failed (${e.getClass.getSimpleName}: ${e.getMessage}); reading the shards " +
            s"known, listing again in about ${delayMs}ms (retry ${listingBackoff.failuresInARow} of ${listingBackoff.budget})")
          lastListMillis = clock.millis() - options.shardFetchIntervalMs + delayMs
          return
      }
    listingBackoff.succeeded()
    lastListMillis = clock.millis()
    val recreatedStreams = synchronized(listed.collect { case (s, ms, _) if created.get(s).exists(_ != ms) => s })
    // Outside the prefetcher's lock: the registrar's is held while a consumer is being registered.
    recreatedStreams.foreach(s => consumers.foreach(_.invalidate(s))) // the stream's consumers were deleted with it
    val dropped = synchronized {
      missingStreams --= listed.map(_._1)
      // The new starts are made aside and published with the listing, at once: the query thread reads both without
      // the lock, and a shard it sees listed must have its start (a finished parent's Finished, without which the
      // plan would read it again from TRIM_HORIZON), as a recreated stream's shards must not have their old ones.
      var starts = base
      val blocks = listed.flatMap { case (stream, createdMillis, graph) =>
        val recreated = created.get(stream).exists(_ != createdMillis)
        val droppedBlocks = if (recreated) {
          log.warn(s"Kinesis stream '$stream' was deleted and created again; fetching its new shards from TRIM_HORIZON")
          starts = starts.filterNot(_._1._1 == stream)
          stats = stats.filterNot(_._1._1 == stream)
          buffer.dropStream(stream)
        } else Nil
        // Decided before this listing is recorded below: a stream listed before only gets new shards (resharding).
        val listedBefore = graphs.contains(stream) || recreated
        lazy val known = positionsFrom(starts).collect { case ((s, shard), pos) if s == stream => shard -> pos }
        def newShardStart(shardId: String): ShardPosition =
          // Listed again, or absent from the checkpoint because its children had moved on (StartReconciler).
          if (!recreated && graph.endedByDescendants(shardId, known)) Finished
          else if (listedBefore) TrimHorizon
          else addedStreamAt.get(stream).fold[ShardPosition](TrimHorizon)(options.initialPosition.shardPosition(stream, shardId, _))
        created(stream) = createdMillis
        graphs(stream) = graph
        // Most listings change nothing: the starts are made again only when a shard came or went (at 10,000 shards,
        // making them again on every listing was most of the lister's CPU in DriverScaleBenchmark).
        if (starts.keysIterator.exists { case (s, shard) => s == stream && !graph.lists(shard) })
          starts = starts.filterNot { case ((s, shard), _) => s == stream && !graph.lists(shard) }
        val added = graph.shards.filterNot(s => starts.contains((stream, s.shardId)))
        if (added.nonEmpty) starts = starts ++ added.map(s => (stream, s.shardId) -> newShardStart(s.shardId))
        droppedBlocks
      }
      base = starts
      publishListed()
      blocks
    }
    dropped.foreach(b => BlockStoreBridge.remove(b.streamId, b.uniqueId))
  }

  /**
   * A stream the query reads was deleted. Nothing of it is fetched until it exists again (as a new stream,
   * read from TRIM_HORIZON). Whether that is acceptable is the data-loss policy's call, made once per deletion.
   */
  private def streamMissing(stream: String, e: StreamNotFoundException): Unit = {
    val first = synchronized {
      graphs.remove(stream)
      publishListed()
      shardListings.forget(stream)
      missingStreams.add(stream)
    }
    if (first) {
      dataLoss.report(stream, "every shard", s"the stream was deleted while the query read it (${e.getMessage}); " +
        "records not yet read are gone")
      synchronized(streamDataLossEvents += 1)
    }
  }

  /**
   * One round: a Spark job whose tasks go to the executor that last fetched their shards, hand those shards to
   * its [[FetchService]] as tickets of `shardsPerTask` shards and return; then the results as executors deliver
   * them. Tickets share the buffer's free `room` equally, so the buffer exceeds `fetchBufferSize` by at most one
   * response per ticket. The round ends when every ticket's result has come, or the ticket is lost (its shards are
   * fetched again next round from where the buffer ends; a result delivered after that is refused and its blocks
   * removed).
   */
  private def runJob(orders: Seq[ShardFetchOrder], room: Long): Seq[ShardFetchResult] = {
    // Outside the lock: sorting 10,000 shards by where they were last read takes milliseconds.
    val locations = stats
    val groups = orders.sortBy(o => (locations.get((o.stream, o.shardId)).flatMap(_.location).getOrElse(""), o.stream,
      o.shardId)).grouped(options.shardsPerTask).toSeq
    val share = math.max(1L, room / groups.size)
    val tickets = groups.map { group =>
      val location = locations.get((group.head.stream, group.head.shardId)).flatMap(_.location).toSeq
      (FetchTicket(resultEndpoint, nextTicket.getAndIncrement(), ShardFetchTask(options.connection, limits, streamId,
        group, share, dataLoss, options.efo.flatMap(_.subscriptionMaxEvents), arrivalCut)), location)
    }
    // Submitted under the lock `stop` takes, so a stop either sees this round (and cancels it) or prevents it.
    val dispatching = synchronized {
      if (stopped) return Nil
      tickets.foreach { case (ticket, _) => awaited(ticket.id) = None }
      sc.setJobGroup(jobGroup, s"kinesis-spark prefetch: ${orders.size} shard(s) of ${options.streams.mkString(",")}",
        interruptOnCancel = true)
      try {
        // Spark's own types come back (ticket id, location): with the jar added to a Connect session, the connector's
        // would be another loader's classes here (see LoaderBridge).
        val submitted = sc.makeRDD(dispatchTasks(tickets))
          .mapPartitions(_.flatMap { group =>
            val attempt = Option(TaskContext.get()).map(_.attemptNumber()).getOrElse(0)
            group.map(ticket => (Long.box(ticket.id), FetchService.dispatch(ticket, attempt)): AnyRef)
          })
          .collectAsync()
        runningRound = Some(submitted)
        submitted
      } finally sc.clearJobGroup()
    }
    // Whatever ends the round, its tickets are forgotten: a later delivery of one is refused, its blocks removed.
    try {
      val dispatched = try Await.result(dispatching, Duration.Inf) finally synchronized { runningRound = None }
      synchronized {
        val now = clock.millis()
        dispatched.foreach {
          case (id: java.lang.Long, location: String) => awaited(id.longValue()) = Some(location); heardOf(id.longValue()) = now
          case other => throw new IllegalStateException(s"a prefetch task returned a ${other.getClass.getName}")
        }
      }
      awaitResults()
    } finally synchronized { awaited.clear(); heardOf.clear(); delivered.clear() }
  }

  /**
   * The round's Spark tasks: one per executor for the tickets that go back to it, and the tickets of shards no
   * executor fetched yet spread over `defaultParallelism` tasks. A task only hands tickets over, so there is no
   * reason for more: at 10,000 shards a task per ticket meant 2,000 tasks a round for the scheduler.
   */
  private def dispatchTasks(tickets: Seq[(FetchTicket, Seq[String])]): Seq[(Seq[FetchTicket], Seq[String])] =
    tickets.groupBy(_._2).toSeq.sortBy(_._1.headOption).flatMap {
      case (Seq(), unplaced) =>
        val perTask = math.max(1, math.ceil(unplaced.size.toDouble / math.max(1, sc.defaultParallelism)).toInt)
        unplaced.map(_._1).grouped(perTask).map(_ -> Seq.empty[String])
      case (location, placed) => Seq(placed.map(_._1) -> location)
    }

  /**
   * Waits until every ticket of the round is delivered or lost: its executor is gone, or has not listed it among
   * those it holds for `silenceLimitMillis` (a delivery that failed, an executor that restarted its service). The
   * delivered results, in ticket order.
   */
  private def awaitResults(): Seq[ShardFetchResult] = {
    val lost = mutable.HashSet.empty[Long]
    // Every delivery wakes this thread: what it does then is constant, and the tickets are walked only when the
    // liveness check is due (so a silent ticket is found lost up to LivenessCheckMillis after the silence limit).
    // Walking them on every wake was quadratic in the tickets of a round (at 1,000 shards, a sixth of the driver JVM's
    // allocation in DriverScaleBenchmark, and longer GC pauses for the query thread).
    def openCount: Int = awaited.size - delivered.size - lost.count(!delivered.contains(_))
    var checkedAt = clock.millis() - LivenessCheckMillis // due at once
    while (synchronized(!stopped && openCount > 0)) {
      val due = clock.millis() - checkedAt >= LivenessCheckMillis
      val live = if (due) {
        checkedAt = clock.millis()
        Some(BlockStoreBridge.liveLocations())
      } else None
      synchronized {
        if (due) {
          val now = clock.millis()
          val gone = awaited.iterator.filter { case (id, _) => !delivered.contains(id) && !lost.contains(id) }
            .flatMap { case (id, at) => at.map(id -> _) }
            .flatMap { case (id, at) =>
              if (live.exists(!_.contains(at))) Some((id, s"was fetching on $at, which is gone"))
              else if (now - heardOf.getOrElse(id, now) > silenceLimitMillis) {
                Some((id, s"was dispatched to $at, which has not listed it for ${silenceLimitMillis / 1000.0} s"))
              } else None
            }.toSeq
          gone.foreach { case (id, why) =>
            log.warn(s"Prefetch ticket $id $why; its shards are fetched again next round")
          }
          lost ++= gone.map(_._1)
          ticketsLost += gone.size
        }
        if (!stopped && openCount > 0) wait(math.max(1L, checkedAt + LivenessCheckMillis - clock.millis()))
      }
    }
    synchronized(if (stopped) Nil else awaited.keys.toSeq.sorted.flatMap(delivered.get).flatten)
  }
}

object Prefetcher {
  private val log = LoggerFactory.getLogger(classOf[Prefetcher])
  /** Each stream's shard graph and creation time, as one immutable value (see `listedView`). */
  private final case class ListedStreams(graphs: Map[String, ShardGraph], created: Map[String, Long]) {
    /** As [[Prefetcher.listings]] hands them out: one map per listing, so a plan can tell nothing was listed since. */
    lazy val listings: Map[String, StartReconciler.Listing] =
      graphs.map { case (s, graph) => s -> StartReconciler.Listing(created(s), graph) }
  }
  private val StopWaitMillis = 10000L
  /** How often a round waiting for results checks that the executors fetching them are still there. */
  private val LivenessCheckMillis = 500L
  /** A ticket its executor has not listed among those it holds for this long is lost (they list them every second). */
  val SilenceLimitMillis = 15000L
  /**
   * A Spark setting that replaces [[SilenceLimitMillis]]: the reliability tests pause an executor for seconds, not for
   * the production limit. Not a user option (it is not in the option table): only a test has reason to change it.
   */
  val SilenceLimitConf = "spark.kinesisspark.test.prefetchSilenceLimitMs"
  /** Tickets whose kept copy is remembered, for executors that deliver again: several rounds at 10,000 shards. */
  private val KeptCopiesRemembered = 20000
  private val MinListingGapMs = 100L
  private val MillisPerHour = 3600L * 1000
}
