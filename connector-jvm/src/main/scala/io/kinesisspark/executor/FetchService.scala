package io.kinesisspark.executor

import java.util.concurrent.{ConcurrentHashMap, Executors, LinkedBlockingQueue, ThreadFactory, ThreadPoolExecutor, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.kinesisspark.{BlockStoreBridge, FetchResultChannel}
import org.slf4j.LoggerFactory

import io.kinesisspark.aws.KinesisClients

/**
 * A prefetch task handed to an executor's [[FetchService]].
 *
 * @param endpoint the driver's [[FetchResultChannel]] endpoint its result goes to
 * @param id       the driver's number for it: a result delivered twice (a task dispatched by two attempts) is
 *                 kept once
 */
final case class FetchTicket(endpoint: String, id: Long, task: ShardFetchTask)

/**
 * Executor-side: fetches prefetch tasks on threads of its own, so a prefetch round's Spark tasks only hand their
 * shards over and return within milliseconds. Waiting on Kinesis (rate limits, back-off, the calls themselves)
 * holds no task slot, so a batch's tasks never queue behind a round's (under Spark's default FIFO scheduling they
 * would wait for every task of a round submitted before them, each up to `maxFetchDuration`).
 *
 * Each result goes to the driver through [[FetchResultChannel]] when its fetching is done; when the driver refuses
 * it (its round gave up on it, another copy came first, the query stopped) its blocks are removed here. A stopped
 * query's fetches end at their next call: in local mode the driver's stop says so at once, on a cluster a check
 * once a second finds the driver's endpoint gone.
 *
 * Bounded: [[Threads]] tasks fetch at once, each holding at most `ShardFetcher.TaskPendingBytes` unstored; the
 * rest wait in the queue, which the driver bounds (one round at a time per query, one task per `shardsPerTask`
 * shards). The threads' CPU (decoding responses, storing blocks) is shared with the batches' tasks.
 *
 * {{{
 *   val location = FetchService.dispatch(FetchTicket(endpoint, 7L, task), attempt = TaskContext.get().attemptNumber())
 * }}}
 */
object FetchService {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * Two per core the executor runs tasks on (`spark.executor.cores`; in local mode every core), at least four: the
   * threads mostly wait on Kinesis, and each holds at most `ShardFetcher.TaskPendingBytes` of responses not stored
   * yet, so this bounds that memory at 32 MB per core. Not the host's core count: an executor may have a few of many.
   */
  val Threads: Int = math.max(4, 2 * Option(SparkEnv.get).flatMap(_.conf.getOption("spark.executor.cores"))
    .flatMap(c => scala.util.Try(c.trim.toInt).toOption).getOrElse(Runtime.getRuntime.availableProcessors()))
  private val CheckIntervalMs = 1000L
  /** Deliveries the driver could not be asked about are tried again this often, this many times in all. */
  private val DeliveryAttempts = 3
  private val DeliveryRetryMs = 1000L

  private val pool = {
    val threadIds = new AtomicLong()
    val p = new ThreadPoolExecutor(Threads, Threads, 60L, TimeUnit.SECONDS, new LinkedBlockingQueue[Runnable](),
      daemon(s"kinesis-spark-fetch-${threadIds.incrementAndGet()}"))
    p.allowCoreThreadTimeOut(true)
    p
  }

  // Tickets queued or fetching: how many per query stream instance, and which per driver endpoint.
  private val pendingByStream = new ConcurrentHashMap[Int, AtomicInteger]()
  private val pendingByEndpoint = new ConcurrentHashMap[String, java.util.Set[Long]]()
  // Endpoints the driver said it no longer has (their queries stopped). Names are never reused.
  private val closed = ConcurrentHashMap.newKeySet[String]()

  private val checker = Executors.newSingleThreadScheduledExecutor(daemon("kinesis-spark-fetch-check"))
  checker.scheduleWithFixedDelay(() => checkEndpoints(), CheckIntervalMs, CheckIntervalMs, TimeUnit.MILLISECONDS)

  private def daemon(name: => String): ThreadFactory = (r: Runnable) => {
    val t = new Thread(r, name)
    t.setDaemon(true)
    t
  }

  /**
   * Queues `ticket` and returns this executor's location (the driver watches it: the results of an executor that is
   * lost never come).
   *
   * @param attempt the dispatching task's attempt. A second attempt (a retry, a speculative copy) fetches nothing
   *                and delivers an empty result: two readers of one shard would double its GetRecords calls, or take
   *                an enhanced fan-out subscription from each other. The next round fetches the shards again.
   */
  def dispatch(ticket: FetchTicket, attempt: Int): String = {
    var added = false
    // Inside `compute`, as `ended` drops a set once empty: an id is never added to a set already dropped.
    pendingByEndpoint.compute(ticket.endpoint, (_, ids) => {
      val set = Option(ids).getOrElse(ConcurrentHashMap.newKeySet[Long]())
      added = set.add(ticket.id)
      set
    })
    if (added) { // not already here (the same task run twice on this executor)
      pendingByStream.compute(ticket.task.streamId, (_, n) => {
        val c = Option(n).getOrElse(new AtomicInteger()); c.incrementAndGet(); c
      })
      // The task's class loader (with Spark Connect, its session's), for what fetching loads by name (credentials
      // providers): pool threads outlive the task that made them.
      val loader = Thread.currentThread().getContextClassLoader
      try pool.execute(() => run(ticket, attempt, loader))
      catch { case NonFatal(e) => ended(ticket); throw e }
    }
    BlockStoreBridge.location
  }

  /** Tickets of `streamId` queued or fetching in this JVM (a local-mode stop waits for them to end). */
  def pending(streamId: Int): Int = Option(pendingByStream.get(streamId)).map(_.get).getOrElse(0)

  private def ended(ticket: FetchTicket): Unit = {
    // Entries go with their last ticket, so a long-lived executor keeps none per stopped query.
    pendingByStream.computeIfPresent(ticket.task.streamId, (_, n) => if (n.decrementAndGet() <= 0) null else n)
    pendingByEndpoint.computeIfPresent(ticket.endpoint, (_, ids) => { ids.remove(ticket.id); if (ids.isEmpty) null else ids })
    if (!pendingByEndpoint.containsKey(ticket.endpoint)) {
      closed.remove(ticket.endpoint)
      FetchResultChannel.forget(ticket.endpoint)
    }
  }

  private def run(ticket: FetchTicket, attempt: Int, loader: ClassLoader): Unit = {
    val thread = Thread.currentThread()
    val ownLoader = thread.getContextClassLoader
    thread.setContextClassLoader(loader)
    try {
      val task = ticket.task
      def stopped: Boolean = ShardReaderCache.isDropped(task.streamId) || closed.contains(ticket.endpoint)
      val results =
        if (attempt > 0) {
          log.info(s"Attempt $attempt of prefetch ticket ${ticket.id} (${task.orders.size} shard(s)) fetches nothing; " +
            "the next round fetches its shards")
          Nil
        } else try ShardFetcher.fetch(task, KinesisClients.api(task.connection), attempt, () => stopped)
        catch { case e @ (_: LinkageError | NonFatal(_)) => ShardFetcher.failed(task, e) } // the driver fails the query
      // A stopped fetch's result is empty (its blocks are gone): delivered all the same, so a driver that still waits
      // for it does not wait until it gives up.
      val copy = s"${BlockStoreBridge.location}/$attempt"
      val answer = if (ShardReaderCache.isDropped(task.streamId)) FetchResultChannel.Closed
        else deliver(ticket, FetchDelivery.encode(FetchDelivery(ticket.id, copy, results)))
      val blocks = ShardFetchResult.blocks(results)
      if (answer == FetchResultChannel.Refused || answer == FetchResultChannel.Closed) {
        val removed = blocks.count(b =>
          try BlockStoreBridge.removeLocal(b.streamId, b.uniqueId) catch { case NonFatal(_) => false })
        // Counted by the driver (the metric fetchRefusedBlocksRemoved); a closed endpoint has nobody to tell.
        if (answer == FetchResultChannel.Refused) FetchResultChannel.removed(ticket.endpoint, removed)
      } else if (answer == FetchResultChannel.Unknown && blocks.nonEmpty) {
        // The driver may have kept them: they stay until the query's stop sweeps its blocks.
        log.warn(s"Could not tell the driver of prefetch ticket ${ticket.id}; its ${blocks.size} block(s) stay until " +
          "the query stops, and the driver fetches its shards again")
      }
    } catch {
      case NonFatal(e) => log.warn(s"Prefetch ticket ${ticket.id} could not be delivered", e)
    } finally {
      thread.setContextClassLoader(ownLoader)
      ended(ticket)
    }
  }

  /** Delivers, trying again while the driver cannot be asked (its answer is then unknown). */
  private def deliver(ticket: FetchTicket, payload: Array[Byte]): Int = {
    var answer = FetchResultChannel.deliver(ticket.endpoint, payload)
    var attempts = 1
    while (answer == FetchResultChannel.Unknown && attempts < DeliveryAttempts) {
      Thread.sleep(DeliveryRetryMs)
      answer = FetchResultChannel.deliver(ticket.endpoint, payload)
      attempts += 1
    }
    answer
  }

  /** Tells each driver endpoint with tickets here which it holds; notes those that are gone. */
  private def checkEndpoints(): Unit =
    try pendingByEndpoint.asScala.toSeq.foreach { case (endpoint, ids) =>
      if (FetchResultChannel.heartbeat(endpoint, ids.asScala.toArray).contains(false)) closed.add(endpoint)
    } catch { case e: Throwable => log.warn("Telling the driver which prefetch tickets are held failed", e) }
}
