package io.kinesisspark.prefetch

import java.time.Clock
import java.util.UUID
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.apache.spark.kinesisspark.BlockStoreBridge
import org.slf4j.LoggerFactory

import io.kinesisspark.{BlockRemover, BufferIndex, DataLossPolicy, KinesisSourceOffset, KinesisSourceOptions,
  ShardGraph, ShardPosition, ShardStats, StartReconciler, StreamNotFoundException}
import io.kinesisspark.aws.{KinesisApi, KinesisClients}
import io.kinesisspark.efo.ConsumerRegistrar
import io.kinesisspark.executor.{FetchService, ShardFetchOrder, ShardFetchResult, ShardFetchTask, ShardReaderCache}

/**
 * The driver's background prefetcher. A daemon thread runs fetch rounds back to back (another lists shards, on
 * its own schedule: [[ShardDiscovery]]): each round is one Spark job whose tasks hand `shardsPerTask` shards each
 * to the [[FetchService]] of the executor that fetched them last (so readers keep their iterators and rate limits) and
 * return at once: the executor fetches them on its own threads, holding no task slot, leaves the records there as
 * blocks, and delivers the blocks' metadata to this prefetcher's endpoint ([[RoundDispatcher]]). Each task's
 * metadata goes into the [[BufferIndex]] as it comes, and the stream exposes it as batch ends; the round ends when
 * every result has come (or its executor is lost).
 *
 * It pauses while the buffer holds `fetchBufferSize` bytes or more, lists shards every `shardFetchInterval`, and
 * fetches a child shard as soon as its parents have been fetched to their end (the stream still exposes the
 * child only after the parents' batches). The first failure stops it and is rethrown to the query.
 *
 * Where fetching of each shard starts, and which shards there are, is [[ShardDiscovery]]'s book: a round plans from
 * it, and checks its results against it, under its lock.
 *
 * Threads and locks: the query thread calls [[start]], [[committed]], [[awaitRoundAfter]], [[stop]] and the readers;
 * the round thread runs `run`; the lister runs [[ShardDiscovery.listUntilStopped]]. `this` guards `thread`,
 * `lister`, and every write of `stats`, `failure`, `stopped`, `started` and the round counters, which are read
 * without it; rounds and stops are waited for on it. Locks are taken in one order: discovery's, this one, then the
 * dispatcher's or the buffer's.
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
    silenceLimitMillis: Long = RoundDispatcher.SilenceLimitMillis,
    addedAt: (String, Long) => Long = (_, now) => now) {

  import Prefetcher._

  private val api: KinesisApi = KinesisClients.api(options.connection)
  private val limits = options.fetchLimits
  private val nextOrder = new AtomicLong(0)
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
    forgetStream = stream => synchronized { stats = stats.filterNot(_._1._1 == stream) }, addedAt = addedAt)
  // Written under `this`; read without it (checkFailure runs on the query thread every plan).
  @volatile private var failure: Option[Throwable] = None
  @volatile private var rounds = 0L
  @volatile private var fetchProgress = 0L
  @volatile private var lastRoundBlockCount = 0L
  @volatile private var blocksStoredTotal = 0L
  @volatile private var lastRoundDuration = 0L
  @volatile private var stopped = false
  @volatile private var started = false // the prefetcher's threads were started (under `this`)

  /** Trigger.AvailableNow's target time: responses are split there (see [[ShardFetchTask.arrivalCut]]). */
  @volatile private var arrivalCut: Option[Long] = None

  /** From now on, fetch rounds store what arrived up to `millis` and after it as separate ranges. */
  def cutAtArrival(millis: Long): Unit = arrivalCut = Some(millis)
  private var thread: Thread = _
  // Lists shards on its own schedule, so a slow or throttled control plane never holds up fetching.
  private var lister: Thread = _
  // Where executors deliver what they fetched: a name of its own per prefetcher (streamId alone may repeat across
  // the class loaders of Spark Connect sessions).
  private val dispatcher = new RoundDispatcher(s"kinesis-spark-prefetch-$streamId-${UUID.randomUUID()}",
    new JobSubmitter.Spark(sc, s"kinesis-spark-prefetch-$streamId"), ExecutorLink.Spark, clock, silenceLimitMillis)

  /**
   * Starts prefetching from `start` (idempotent: later calls only add shards `start` knows and we do not). Whether
   * there is anything to add is checked without a lock: the query thread calls this every plan.
   */
  def start(start: KinesisSourceOffset): Unit = if (!((started || stopped) && discovery.knowsAll(start))) {
    discovery.addStart(start)
    synchronized {
      if (thread == null && !stopped) {
        dispatcher.open()
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
  def lostTickets: Long = dispatcher.lostTickets

  /** Results delivered for tickets no round waited for any more (a lost ticket's, delivered late): refused, and their
   * executor removes their blocks. */
  def refusedResults: Long = dispatcher.refusedResults

  /** The blocks of refused results, and those of them their executors said they removed. */
  def refusedBlocks: Long = dispatcher.refusedBlocks
  def refusedBlocksRemoved: Long = dispatcher.refusedBlocksRemoved

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
  def awaitRoundAfter(round: Long, timeoutMs: Long): Unit = awaitWhile(rounds <= round, timeoutMs)

  /**
   * Rounds completed plus task results that brought ranges into the buffer: it grows whenever a batch may find more
   * to read. See [[awaitFetchAfter]].
   */
  def fetched: Long = fetchProgress

  /** Waits until [[fetched]] passes `mark` (a round ends, or a task's records come), or `timeoutMs` passes. */
  def awaitFetchAfter(mark: Long, timeoutMs: Long): Unit = awaitWhile(fetchProgress <= mark, timeoutMs)

  private def awaitWhile(condition: => Boolean, timeoutMs: Long): Unit = synchronized {
    val deadline = clock.millis() + timeoutMs
    while (condition && failure.isEmpty && !stopped && clock.millis() < deadline) {
      wait(math.max(1L, deadline - clock.millis()))
    }
  }

  /** Stops the thread, cancels a running round, and drops every block and cached reader of this stream. */
  def stop(): Unit = {
    val (t, l) = synchronized {
      stopped = true
      notifyAll()
      (thread, lister)
    }
    // First, as it takes no lock another thread holds for long: no round starts or takes a result after this, and
    // the one being dispatched is cancelled (discovery's stop may wait for a listing or a round's apply to finish).
    dispatcher.stop()
    discovery.stop() // before the lister's interrupt: the call it aborts is the stop's doing, not a failed listing
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
  private def fail(e: Throwable): Unit = synchronized {
    // A thread that fails as the stop ends its calls is not the query's failure.
    if (failure.isEmpty && !stopped) failure = Some(e)
    notifyAll()
  }

  /** One round; returns whether any records (or shard ends) were fetched. */
  private def runRound(): Boolean = {
    consumers.foreach(_.refreshDue())
    // Blocks committed and not removed yet are still in the executors' memory.
    val room = options.fetchBufferSizeBytes - buffer.bufferedBytes - remover.pendingBytes
    if (room <= 0) {
      synchronized { rounds += 1; fetchProgress += 1; notifyAll(); wait(limits.minFetchPeriodMs) }
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
      listed.order(stream, s, from, nextOrder.getAndIncrement(), consumerArns.get(stream))
    }
    val roundStart = clock.millis()
    // Each task's results go into the buffer as they come, not when the round's slowest task is done: at 1,000 shards
    // a round takes about a second, and a batch takes what a task delivered before the rest arrive.
    val results = if (orders.isEmpty) Nil else dispatcher.runJob(fetchTasks(orders, room),
      s"kinesis-spark prefetch: ${orders.size} shard(s) of ${options.streams.mkString(",")}",
      delivered => take(delivered, roundStart))
    results.filter(_.consumerMissing).map(_.stream).distinct.foreach { stream =>
      log.warn(s"Kinesis says the enhanced fan-out consumer of stream '$stream' does not exist; checking it again")
      consumers.foreach(_.invalidate(stream))
    }
    val roundEnd = clock.millis()
    synchronized {
      rounds += 1
      fetchProgress += 1
      if (orders.nonEmpty) {
        lastRoundBlockCount = ShardFetchResult.blocks(results).size.toLong
        blocksStoredTotal += lastRoundBlockCount
        lastRoundDuration = roundEnd - roundStart
      }
      notifyAll()
    }
    results.exists(_.ranges.nonEmpty)
  }

  /**
   * One task's results, delivered during the round that began at `roundStart`: into the buffer, and the shards'
   * statistics. A task's error fails the round (see FetchFailure).
   */
  private def take(results: Seq[ShardFetchResult], roundStart: Long): Unit = {
    results.flatMap(_.failure).headOption.foreach(e => throw e)
    // Under discovery's lock: no listing drops a stream from the buffer, and no commit moves a start, meanwhile.
    val staleBlocks = discovery.holding(view => synchronized {
      // Listing runs meanwhile: a stream created again, or a shard gone, since the orders were made leaves results
      // that no longer continue what is buffered; they are dropped (their blocks removed), never appended.
      val base = view.starts
      // After a stop, nothing goes into the buffer: the blocks go.
      val (fitting, stale) = if (stopped) (Nil, results) else results.partition { r =>
        val key = (r.stream, r.shardId)
        base.contains(key) &&
          r.ranges.headOption.forall(first => buffer.end(r.stream, r.shardId).getOrElse(base(key)) == first.from)
      }
      if (!stopped) stale.foreach(r => log.info(s"Dropping what a prefetch round read of stream '${r.stream}', " +
        s"${r.shardId}: the shard was reset or dropped by a listing during the round"))
      buffer.appendAll(fitting.flatMap(_.ranges))
      val now = clock.millis()
      stats = stats ++ fitting.map { r =>
        val key = (r.stream, r.shardId)
        key -> ShardStats.after(stats.get(key), r, roundStart, now)
      }
      if (fitting.exists(_.ranges.nonEmpty)) {
        fetchProgress += 1
        notifyAll()
      }
      ShardFetchResult.blocks(stale)
    })
    staleBlocks.foreach(b => BlockStoreBridge.remove(b.streamId, b.uniqueId))
  }

  /**
   * A round's fetch tasks: the orders sorted by the executor that last fetched their shards, `shardsPerTask` to a
   * task, each task for the executor of its first shard (so readers keep their iterators and rate limits). Tasks share
   * the buffer's free `room` equally, so the buffer exceeds `fetchBufferSize` by at most one response per task.
   */
  private def fetchTasks(orders: Seq[ShardFetchOrder], room: Long): Seq[(ShardFetchTask, Option[String])] = {
    // Outside any lock: sorting 10,000 shards by where they were last read takes milliseconds.
    val locations = stats
    val groups = orders.sortBy(o => (locations.get((o.stream, o.shardId)).flatMap(_.location).getOrElse(""), o.stream,
      o.shardId)).grouped(options.shardsPerTask).toSeq
    val share = math.max(1L, room / groups.size)
    groups.map { group =>
      (ShardFetchTask(options.connection, limits, streamId, group, share, dataLoss,
        options.efo.flatMap(_.subscriptionMaxEvents), arrivalCut),
        locations.get((group.head.stream, group.head.shardId)).flatMap(_.location))
    }
  }
}

object Prefetcher {
  private val log = LoggerFactory.getLogger(classOf[Prefetcher])
  private val StopWaitMillis = 10000L
}
