package io.kinesisspark.fetch

import java.util.concurrent.{ConcurrentHashMap, Executors, LinkedBlockingQueue, ThreadFactory, ThreadPoolExecutor, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.kinesisspark.{BlockStoreBridge, FetchResultChannel}
import org.slf4j.LoggerFactory

import io.kinesisspark.LoaderBridge
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
 * Bounded: [[Threads]] tasks fetch at once (two per core, at least four), each holding at most
 * `ShardFetcher.TaskPendingBytes` unstored; the rest wait in the queue, which the driver bounds (one round at a time
 * per query, one task per `shardsPerTask` shards).
 *
 * {{{
 *   val location = FetchService.dispatch(FetchTicket(endpoint, 7L, task), attempt = TaskContext.get().attemptNumber())
 * }}}
 */
object FetchService {
  private val log = LoggerFactory.getLogger(getClass)

  val Threads: Int = math.max(4, 2 * Runtime.getRuntime.availableProcessors())
  private val CheckIntervalMs = 1000L

  private val pool = {
    val threadIds = new AtomicLong()
    val p = new ThreadPoolExecutor(Threads, Threads, 60L, TimeUnit.SECONDS, new LinkedBlockingQueue[Runnable](),
      daemon(s"kinesis-spark-fetch-${threadIds.incrementAndGet()}"))
    p.allowCoreThreadTimeOut(true)
    p
  }

  // Tickets queued or fetching, per query stream instance and per driver endpoint.
  private val pendingByStream = new ConcurrentHashMap[Int, AtomicInteger]()
  private val pendingByEndpoint = new ConcurrentHashMap[String, AtomicInteger]()
  // Endpoints with tickets here that the last check found gone (their queries stopped).
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
   * @param attempt the dispatching task's attempt: block ids carry it, so two copies never store under one id
   */
  def dispatch(ticket: FetchTicket, attempt: Int): String = {
    started(pendingByStream, ticket.task.streamId)
    started(pendingByEndpoint, ticket.endpoint)
    try pool.execute(() => run(ticket, attempt))
    catch { case NonFatal(e) => ended(ticket); throw e }
    BlockStoreBridge.location
  }

  /** Tickets of `streamId` queued or fetching in this JVM (a local-mode stop waits for them to end). */
  def pending(streamId: Int): Int = Option(pendingByStream.get(streamId)).map(_.get).getOrElse(0)

  // Counted inside `compute`, as `ended` uncounts: an entry is never dropped while a ticket is being counted into it.
  private def started[K](counts: ConcurrentHashMap[K, AtomicInteger], key: K): Unit =
    counts.compute(key, (_, n) => { val c = Option(n).getOrElse(new AtomicInteger()); c.incrementAndGet(); c })

  private def ended(ticket: FetchTicket): Unit = {
    // Entries go with their last ticket, so a long-lived executor keeps none per stopped query.
    pendingByStream.computeIfPresent(ticket.task.streamId, (_, n) => if (n.decrementAndGet() <= 0) null else n)
    pendingByEndpoint.computeIfPresent(ticket.endpoint, (_, n) => if (n.decrementAndGet() <= 0) null else n)
    if (!pendingByEndpoint.containsKey(ticket.endpoint)) {
      closed.remove(ticket.endpoint)
      FetchResultChannel.forget(ticket.endpoint)
    }
  }

  private def run(ticket: FetchTicket, attempt: Int): Unit =
    try {
      val task = ticket.task
      def stopped: Boolean = ShardReaderCache.isDropped(task.streamId) || closed.contains(ticket.endpoint)
      val results = ShardFetcher.fetch(task, KinesisClients.api(task.connection), attempt, () => stopped)
      // A stopped fetch's result is empty (its blocks are gone): delivered all the same, so a driver that still
      // waits for it (an endpoint check that failed for a moment) does not wait until it gives up.
      val answer = if (ShardReaderCache.isDropped(task.streamId)) FetchResultChannel.Closed
        else FetchResultChannel.deliver(ticket.endpoint, LoaderBridge.toBytes((Long.box(ticket.id), results)))
      if (answer != FetchResultChannel.Accepted) {
        results.iterator.flatMap(_.ranges).flatMap(_.block).filter(_.last).foreach { b =>
          try BlockStoreBridge.removeLocal(b.streamId, b.uniqueId) catch { case NonFatal(_) => () }
        }
        log.debug(s"The driver did not take prefetch ticket ${ticket.id} (answer $answer); its blocks are removed")
      }
    } catch {
      case NonFatal(e) => log.warn(s"Prefetch ticket ${ticket.id} ended with an error the driver was not told of", e)
    } finally ended(ticket)

  private def checkEndpoints(): Unit =
    try pendingByEndpoint.keySet().asScala.toSeq.foreach { endpoint =>
      if (FetchResultChannel.isOpen(endpoint)) closed.remove(endpoint) else closed.add(endpoint)
    } catch { case NonFatal(e) => log.debug("checking prefetch endpoints failed", e) }
}
