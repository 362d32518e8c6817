package io.kinesisspark

import java.time.Clock
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.apache.spark.kinesisspark.BlockStoreBridge
import org.slf4j.LoggerFactory

import io.kinesisspark.ShardPosition.TrimHorizon
import io.kinesisspark.aws.{KinesisApi, KinesisClients}
import io.kinesisspark.fetch._

/**
 * The driver's background prefetcher. A daemon thread runs fetch rounds back to back: each round is one Spark
 * job whose tasks fetch `shardsPerTask` shards each, on the executor that fetched them last (so readers keep their
 * iterators and rate limits), and leave the records there as blocks. The blocks' metadata goes into the
 * [[BufferIndex]]; the stream exposes it as batch ends.
 *
 * It pauses while the buffer holds `fetchBufferSize` bytes or more, lists shards every `shardFetchInterval`, and
 * fetches a child shard as soon as its parents have been fetched to their end (the stream still exposes the
 * child only after the parents' batches). The first failure stops it and is rethrown to the query.
 */
final class Prefetcher(
    sc: SparkContext,
    options: KinesisSourceOptions,
    streamId: Int,
    clock: Clock = Clock.systemUTC()) {

  import Prefetcher._

  private val api: KinesisApi = KinesisClients.api(options.connection)
  private val limits = options.fetchLimits
  private val nextOrder = new AtomicLong(0)
  private val jobGroup = s"kinesis-spark-prefetch-$streamId"
  val buffer = new BufferIndex

  // Guarded by `this`.
  private val base = mutable.Map.empty[(String, String), ShardPosition]
  private val graphs = mutable.Map.empty[String, ShardGraph]
  private val stats = mutable.Map.empty[(String, String), ShardStats]
  private var lastListMillis = Long.MinValue
  private var failure: Option[Throwable] = None
  private var rounds = 0L
  @volatile private var stopped = false
  private var thread: Thread = _

  /** Starts prefetching from `start` (idempotent: later calls only add shards `start` knows and we do not). */
  def start(start: KinesisSourceOffset): Unit = synchronized {
    for ((stream, shards) <- start.streams; (shard, pos) <- shards) base.getOrElseUpdate((stream, shard), pos)
    if (thread == null) {
      thread = new Thread(() => run(), s"kinesis-spark-prefetcher-$streamId")
      thread.setDaemon(true)
      thread.start()
    }
  }

  /** The shard graph of a stream as last listed (empty before the first listing). */
  def graph(stream: String): ShardGraph = synchronized(graphs.getOrElse(stream, ShardGraph(Nil)))

  /** Every shard known to the prefetcher with the furthest position fetched (or where fetching starts). */
  def positions: Map[(String, String), ShardPosition] = synchronized {
    base.keys.map(k => k -> buffer.end(k._1, k._2).getOrElse(base(k))).toMap
  }

  /** Per shard: the latest fetch statistics. */
  def shardStats: Map[(String, String), ShardStats] = synchronized(stats.toMap)

  def completedRounds: Long = synchronized(rounds)

  /** Rethrows the prefetcher's failure, if it failed. */
  def checkFailure(): Unit = synchronized(failure.foreach(e => throw e))

  /** A batch committed through `end`: fetching continues from there for shards with nothing buffered. */
  def committed(end: KinesisSourceOffset): Seq[BlockRef] = synchronized {
    for ((stream, shards) <- end.streams; (shard, pos) <- shards) base((stream, shard)) = pos
    buffer.dropThrough(end)
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
    stopped = true
    sc.cancelJobGroup(jobGroup)
    val t = synchronized { notifyAll(); thread }
    if (t != null) { t.interrupt(); t.join(StopWaitMillis) }
    buffer.clear()
    BlockStoreBridge.removeAll(streamId)
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
        synchronized { failure = Some(e); notifyAll() }
    }
  }

  /** One round; returns whether any records (or shard ends) were fetched. */
  private def runRound(): Boolean = {
    refreshShards()
    val room = options.fetchBufferSizeBytes - buffer.bufferedBytes
    if (room <= 0) {
      synchronized { rounds += 1; notifyAll(); wait(limits.minFetchPeriodMs) }
      return false
    }
    val orders = synchronized {
      val known = positions
      options.streams.flatMap { stream =>
        val graph = graphs.getOrElse(stream, ShardGraph(Nil))
        val positions = known.collect { case ((s, shard), pos) if s == stream => shard -> pos }
        graph.readable(positions).map(s => ShardFetchOrder(stream, s.shardId, positions(s.shardId), nextOrder.getAndIncrement()))
      }
    }
    val roundStart = clock.millis()
    val results = if (orders.isEmpty) Nil else runJob(orders, room)
    synchronized {
      results.foreach { r =>
        r.ranges.foreach(buffer.append)
        val previous = stats.get((r.stream, r.shardId))
        stats((r.stream, r.shardId)) = ShardStats(
          millisBehindLatest = r.millisBehindLatest.orElse(previous.flatMap(_.millisBehindLatest)),
          caughtUpAtRoundStart = if (r.caughtUp) Some(roundStart) else previous.flatMap(_.caughtUpAtRoundStart),
          location = Some(r.location),
          calls = previous.map(_.calls).getOrElse(0L) + r.calls,
          throttles = previous.map(_.throttles).getOrElse(0L) + r.throttles,
          callMillis = previous.map(_.callMillis).getOrElse(0L) + r.callMillis,
          lastRoundCalls = r.calls,
          lastRoundCallMillis = r.callMillis)
      }
      rounds += 1
      notifyAll()
    }
    results.exists(_.ranges.nonEmpty)
  }

  /** Lists shards every `shardFetchInterval`; new shards start at TRIM_HORIZON (they appeared after the start). */
  private def refreshShards(): Unit = {
    if (lastListMillis != Long.MinValue && clock.millis() - lastListMillis < options.shardFetchIntervalMs) return
    val listed = options.streams.map(s => s -> ShardGraph(api.listShards(s, options.maxShardsPerDescribe)))
    lastListMillis = clock.millis()
    synchronized {
      listed.foreach { case (stream, graph) =>
        graphs(stream) = graph
        graph.shards.foreach(s => base.getOrElseUpdate((stream, s.shardId), TrimHorizon))
      }
    }
  }

  /**
   * One Spark job; tasks go to the executor that last fetched their first shard and share the buffer's free
   * `room` equally, so the buffer exceeds `fetchBufferSize` by at most one response per task.
   */
  private def runJob(orders: Seq[ShardFetchOrder], room: Long): Seq[ShardFetchResult] = {
    val located = synchronized {
      val groups = orders.sortBy(o => (stats.get((o.stream, o.shardId)).flatMap(_.location).getOrElse(""), o.stream, o.shardId))
        .grouped(options.shardsPerTask).toSeq
      val share = math.max(1L, room / groups.size)
      groups.map { group =>
        val location = stats.get((group.head.stream, group.head.shardId)).flatMap(_.location).toSeq
        (ShardFetchTask(options.connection, limits, streamId, group, share), location)
      }
    }
    sc.setJobGroup(jobGroup, s"kinesis-spark prefetch: ${orders.size} shard(s) of ${options.streams.mkString(",")}",
      interruptOnCancel = true)
    try {
      sc.makeRDD(located)
        .mapPartitions(_.flatMap(task => ShardFetcher.fetch(task, KinesisClients.api(task.connection))))
        .collect()
        .toSeq
    } finally sc.clearJobGroup()
  }
}

object Prefetcher {
  private val log = LoggerFactory.getLogger(classOf[Prefetcher])
  private val StopWaitMillis = 10000L
}

/**
 * What the prefetcher knows about one shard's fetching.
 *
 * @param caughtUpAtRoundStart the start time of the latest round in which the shard was read up to its tip
 */
final case class ShardStats(
    millisBehindLatest: Option[Long],
    caughtUpAtRoundStart: Option[Long],
    location: Option[String],
    calls: Long,
    throttles: Long,
    callMillis: Long,
    lastRoundCalls: Long,
    lastRoundCallMillis: Long)
