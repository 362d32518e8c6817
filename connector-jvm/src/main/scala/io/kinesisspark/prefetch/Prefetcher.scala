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

import io.kinesisspark.{BlockRemover, BufferIndex, DataLossPolicy, KinesisSourceOffset, KinesisSourceOptions, ShardGraph,
  ShardPosition, ShardStats, StartReconciler, StreamNotFoundException}
import io.kinesisspark.aws.{KinesisApi, KinesisClients}
import io.kinesisspark.efo.ConsumerRegistrar
import io.kinesisspark.fetch._

/**
 * The driver's background prefetcher. A daemon thread runs fetch rounds back to back (another lists shards, on
 * its own schedule: [[ShardDiscovery]]): each round is one Spark job whose tasks hand `shardsPerTask` shards each
 * to the [[FetchService]] of the executor that fetched them last (so readers keep their iterators and rate limits) and
 * return at once: the executor fetches them on its own threads, holding no task slot, leaves the records there as
 * blocks, and delivers the blocks' metadata to this prefetcher's [[FetchResultChannel]] endpoint. The round ends
 * when every result has come (or its executor is lost); the metadata goes into the [[BufferIndex]], and the stream
 * exposes it as batch ends.
 *
 * It pauses while the buffer holds `fetchBufferSize` bytes or more, lists shards every `shardFetchInterval`, and
 * fetches a child shard as soon as its parents have been fetched to their end (the stream still exposes the
 * child only after the parents' batches). The first failure stops it and is rethrown to the query.
 *
 * Where fetching of each shard starts, and which shards there are, is [[ShardDiscovery]]'s book: a round plans from
 * it, and checks its results against it, under its lock.
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

  // Written under `this`; read without it. An immutable map in a volatile field, so the query thread reads it (every
  // shard's statistics in each progress report) without waiting for the lock, which the round thread holds for tens
  // of milliseconds at 10,000 shards: the query thread waited 50 to 100 ms at a time for it in `shardStats` and
  // `completedRounds`.
  @volatile private var stats = Map.empty[(String, String), ShardStats]
  private val dataLoss = DataLossPolicy(options.failOnDataLoss)
  private val discovery = new ShardDiscovery(api, options, buffer,
    blocks => blocks.foreach(b => BlockStoreBridge.remove(b.streamId, b.uniqueId)), clock, consumers,
    forgetStream = stream => synchronized { stats = stats.filterNot(_._1._1 == stream) })
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

  /**
   * Starts prefetching from `start` (idempotent: later calls only add shards `start` knows and we do not). Whether
   * there is anything to add is checked without a lock: the query thread calls this every plan.
   */
  def start(start: KinesisSourceOffset): Unit = if (!((started || stopped) && discovery.knowsAll(start))) {
    discovery.addStart(start)
    synchronized {
      if (thread == null && !stopped) {
        receiver = Some(FetchResultChannel.open(resultEndpoint)(onResult, onPending))
        thread = new Thread(() => run(), s"kinesis-spark-prefetcher-$streamId")
        thread.setDaemon(true)
        thread.start()
        lister = new Thread(() => discovery.listUntilStopped(fail), s"kinesis-spark-lister-$streamId")
        lister.setDaemon(true)
        lister.start()
        started = true
      }
    }
  }

  /** Each stream as last listed (streams not listed yet are absent). */
  def listings: Map[String, StartReconciler.Listing] = discovery.listings

  /** Where fetching of a shard began or continues from when nothing is buffered for it. */
  def startingPosition(stream: String, shardId: String): Option[ShardPosition] = discovery.starts.get((stream, shardId))

  /** [[startingPosition]] of every shard known, at once (metrics ask for thousands). */
  def startingPositions: Map[(String, String), ShardPosition] = discovery.starts

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
  def driverDataLossEvents: Long = discovery.dataLossEvents

  /** Rethrows the prefetcher's failure, if it failed. */
  def checkFailure(): Unit = failure.foreach(e => throw e)

  /**
   * A batch through `end` has run (the stream says so when Spark asks for the next batch's end, and Spark's `commit`
   * says it again later): fetching continues from there for shards with nothing buffered (see
   * [[ShardDiscovery.committed]]). The blocks the batch no longer needs are removed in the background
   * ([[BlockRemover]]): Spark calls this on the query's thread.
   */
  def committed(end: KinesisSourceOffset): Unit = {
    val (blocks, bytes) = discovery.committed(end)
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
    discovery.stop() // before the lister's interrupt: the call it aborts is the stop's doing, not a failed listing
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
        fail(e)
    }
  }

  /** Keeps the first failure (of the round thread or the lister) for [[checkFailure]], and wakes its waiters. */
  private def fail(e: Throwable): Unit = synchronized { if (failure.isEmpty) failure = Some(e); notifyAll() }

  /** One round; returns whether any records (or shard ends) were fetched. */
  private def runRound(): Boolean = {
    consumers.foreach(_.refreshDue())
    // Blocks committed and not removed yet are still in the executors' memory.
    val room = options.fetchBufferSizeBytes - buffer.bufferedBytes - remover.pendingBytes
    if (room <= 0) {
      synchronized { rounds += 1; notifyAll(); wait(limits.minFetchPeriodMs) }
      return false
    }
    val readable = discovery.holding { view =>
      val known = buffer.furthest(view.starts)
      options.streams.flatMap { stream =>
        val graph = view.listed.graphs.getOrElse(stream, ShardGraph(Nil))
        val positions = known.collect { case ((s, shard), pos) if s == stream => shard -> pos }
        graph.readable(positions).map(s => (stream, s, positions(s.shardId)))
      }
    }
    // Outside the lock: registering a consumer waits until it is ACTIVE. A stream deleted since its listing has no
    // consumer either; the next listing reports it.
    val consumerArns = readable.map(_._1).distinct.flatMap { s =>
      consumers.flatMap(c => try Some(s -> c.consumerArn(s)) catch { case _: StreamNotFoundException => None })
    }.toMap
    // Each stream's creation time as listed now: a reader tells by it a stream deleted and created again. Its
    // retention period, as described: a reader about that far behind checks each call against it.
    val listed = discovery.listed
    val orders = readable.filter(r => consumers.isEmpty || consumerArns.contains(r._1)).map { case (stream, s, from) =>
      ShardFetchOrder(stream, s.shardId, from, nextOrder.getAndIncrement(), listed.created.get(stream), s.hashKeyRange,
        consumerArns.get(stream), s.closed, listed.retention.get(stream))
    }
    val roundStart = clock.millis()
    val results = if (orders.isEmpty) Nil else runJob(orders, room)
    results.flatMap(_.failure).headOption.foreach(e => throw e) // a task's error (see FetchFailure)
    results.filter(_.consumerMissing).map(_.stream).distinct.foreach { stream =>
      log.warn(s"Kinesis says the enhanced fan-out consumer of stream '$stream' does not exist; checking it again")
      consumers.foreach(_.invalidate(stream))
    }
    val roundEnd = clock.millis()
    // Under discovery's lock: no listing drops a stream from the buffer, and no commit moves a start, meanwhile.
    val staleBlocks = discovery.holding(view => synchronized {
      // Listing runs meanwhile: a stream created again, or a shard gone, since the orders were made leaves results
      // that no longer continue what is buffered; they are dropped (their blocks removed), never appended.
      val ends = buffer.ends
      val base = view.starts
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
    })
    staleBlocks.foreach(b => BlockStoreBridge.remove(b.streamId, b.uniqueId))
    results.exists(_.ranges.nonEmpty)
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
}
