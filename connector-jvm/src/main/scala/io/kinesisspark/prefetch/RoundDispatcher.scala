package io.kinesisspark.prefetch

import java.time.Clock
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable

import org.apache.spark.kinesisspark.FetchResultChannel
import org.slf4j.LoggerFactory

import io.kinesisspark.executor.{FetchDelivery, FetchTicket, ShardFetchResult, ShardFetchTask}

/**
 * The driver's half of the delivery protocol, twin of the executors' [[io.kinesisspark.executor.FetchService]]: a
 * round's fetch tasks go out as tickets in one job ([[JobSubmitter]]) and their results come back to this
 * dispatcher's endpoint ([[ExecutorLink]]), where the ledger of the round's tickets takes each once. A ticket is lost
 * when its executor is gone, or has not listed it among those it holds for `silenceLimitMillis`; its result,
 * delivered later, is refused (the executor then removes its blocks).
 *
 * Threads and locks: the round thread calls [[runJob]]; the endpoint's RPC threads deliver results and pending
 * tickets; the prefetcher's start and stop call [[open]] and [[stop]]. `this` guards the ledger (`awaited`,
 * `heardOf`, `delivered`, `unhanded`, `keptCopies`), the job running, the receiver, and every write of `stopped` and
 * the counters. Under it only the job is submitted and the endpoint opened; no other lock of the prefetcher is taken
 * (the round thread hands results over outside it).
 *
 * {{{
 *   val dispatcher = new RoundDispatcher("kinesis-spark-prefetch-3-…",
 *     new JobSubmitter.Spark(sc, "kinesis-spark-prefetch-3"))
 *   dispatcher.open()
 *   val results = dispatcher.runJob(Seq(task -> Some("executor_host_1")), "kinesis-spark prefetch: 5 shard(s)")
 *   dispatcher.stop()
 * }}}
 *
 * @param endpoint where executors deliver (see [[FetchTicket.endpoint]])
 */
private[kinesisspark] final class RoundDispatcher(
    endpoint: String,
    submitter: JobSubmitter,
    link: ExecutorLink = ExecutorLink.Spark,
    clock: Clock = Clock.systemUTC(),
    silenceLimitMillis: Long = RoundDispatcher.SilenceLimitMillis) {

  import RoundDispatcher._

  private val nextTicket = new AtomicLong(0)
  // Guarded by `this`: the running round's tickets: where each was dispatched (None until its task says), when its
  // executor last said it holds it, and those delivered.
  private val awaited = mutable.Map.empty[Long, Option[String]]
  private val heardOf = mutable.Map.empty[Long, Long]
  private val delivered = mutable.Map.empty[Long, Seq[ShardFetchResult]]
  // Tickets delivered and not yet handed to the round's `onDelivered`, in the order they came.
  private val unhanded = mutable.ArrayBuffer.empty[Long]
  // The copy of each recent ticket that was kept: an executor that did not get the answer delivers it again.
  private val keptCopies = mutable.LinkedHashMap.empty[Long, String]
  // Copies refused so far (ticket, copy): one delivered again (its executor missed the answer) is counted once.
  private val refusedCopies = mutable.LinkedHashSet.empty[(Long, String)]
  private var running: Option[JobSubmitter.Job] = None
  private var receiver: Option[AutoCloseable] = None
  // Written under `this`; read without it.
  @volatile private var stopped = false
  @volatile private var ticketsLost = 0L
  @volatile private var resultsRefused = 0L
  @volatile private var blocksRefused = 0L
  @volatile private var blocksRemovedAfterRefusal = 0L

  /** Tickets given up on: their executor was gone, or silent for the silence limit. */
  def lostTickets: Long = ticketsLost

  /** Results delivered for tickets no round waited for any more (a lost ticket's, delivered late): refused. */
  def refusedResults: Long = resultsRefused

  /** The blocks those refused results had stored, which their executors must remove. */
  def refusedBlocks: Long = blocksRefused

  /** The blocks of refused results their executors said they removed (equal to [[refusedBlocks]] once all said). */
  def refusedBlocksRemoved: Long = blocksRemovedAfterRefusal

  /** Starts listening for deliveries (once; not after [[stop]]). */
  def open(): Unit = synchronized {
    if (!stopped && receiver.isEmpty) receiver = Some(link.listen(endpoint)(onResult, onPending, onRemoved))
  }

  /**
   * Stops: no round starts after this and no result is taken (executors remove the blocks of those they deliver
   * later); the round being dispatched is cancelled, and a round waiting for results ends with none. Executors'
   * fetches for this query end at their next call, as the endpoint closes (see
   * [[io.kinesisspark.executor.FetchService]]).
   */
  def stop(): Unit = {
    // Under the lock that guards submitting a round: after this, no round starts, and the one running is known.
    val (job, listening) = synchronized {
      stopped = true
      notifyAll()
      (running, receiver)
    }
    job.foreach(_.cancel())
    listening.foreach(_.close())
  }

  /**
   * One round: `tasks` (each with the executor that should fetch it, if any) go out as tickets in one job, then the
   * results come as executors deliver them. The round ends when every ticket's result has come, or the ticket is lost
   * (its shards are fetched again next round from where the buffer ends; a result delivered after that is refused and
   * its blocks removed). The delivered results, in ticket order; none once stopped.
   *
   * @param onDelivered called on this thread with each ticket's results as they come (not under this dispatcher's
   *                    lock), before the round ends: a shard's records need not wait for the round's slowest ticket.
   *                    What it throws ends the round and is thrown here.
   */
  def runJob(tasks: Seq[(ShardFetchTask, Option[String])], description: String,
      onDelivered: Seq[ShardFetchResult] => Unit = _ => ()): Seq[ShardFetchResult] = {
    val tickets = tasks.map { case (task, location) =>
      (FetchTicket(endpoint, nextTicket.getAndIncrement(), task), location.toSeq)
    }
    // Submitted under the lock `stop` takes, so a stop either sees this round (and cancels it) or prevents it.
    val dispatching = synchronized {
      if (stopped) return Nil
      tickets.foreach { case (ticket, _) => awaited(ticket.id) = None }
      val job = submitter.submit(description, dispatchTasks(tickets))
      running = Some(job)
      job
    }
    // Whatever ends the round, its tickets are forgotten: a later delivery of one is refused, its blocks removed.
    try {
      val dispatched = try dispatching.await() finally synchronized { running = None }
      synchronized {
        val now = clock.millis()
        dispatched.foreach { case (id, location) => awaited(id) = Some(location); heardOf(id) = now }
      }
      awaitResults(onDelivered)
    } finally synchronized { awaited.clear(); heardOf.clear(); delivered.clear(); unhanded.clear() }
  }

  /**
   * The round's tasks: one per executor for the tickets that go back to it, and the tickets of shards no executor
   * fetched yet spread over `parallelism` tasks. A task only hands tickets over, so there is no reason for more: at
   * 10,000 shards a task per ticket meant 2,000 tasks a round for the scheduler.
   */
  private def dispatchTasks(tickets: Seq[(FetchTicket, Seq[String])]): Seq[(Seq[FetchTicket], Seq[String])] =
    tickets.groupBy(_._2).toSeq.sortBy(_._1.headOption).flatMap {
      case (Seq(), unplaced) =>
        val perTask = math.max(1, math.ceil(unplaced.size.toDouble / math.max(1, submitter.parallelism)).toInt)
        unplaced.map(_._1).grouped(perTask).map(_ -> Seq.empty[String])
      case (location, placed) => Seq(placed.map(_._1) -> location)
    }

  /**
   * Waits until every ticket of the round is delivered or lost: its executor is gone, or has not listed it among
   * those it holds for `silenceLimitMillis` (a delivery that failed, an executor that restarted its service). The
   * delivered results, in ticket order.
   */
  private def awaitResults(onDelivered: Seq[ShardFetchResult] => Unit): Seq[ShardFetchResult] = {
    val lost = mutable.HashSet.empty[Long]
    // Every delivery wakes this thread: what it does then is constant, and the tickets are walked only when the
    // liveness check is due (so a silent ticket is found lost up to LivenessCheckMillis after the silence limit).
    // Walking them on every wake was quadratic in the tickets of a round (at 1,000 shards, a sixth of the driver's
    // allocation, and longer GC pauses for the query thread).
    def openCount: Int = awaited.size - delivered.size - lost.count(!delivered.contains(_))
    var checkedAt = clock.millis() - LivenessCheckMillis // due at once
    def handOver(): Unit = {
      val fresh = synchronized {
        val ids = if (stopped) Nil else unhanded.toList
        unhanded.clear()
        ids.map(delivered)
      }
      fresh.foreach(onDelivered)
    }
    // Until every ticket is in and handed over: one delivered while the last hand-over ran is handed over too.
    while ({ handOver(); synchronized(!stopped && (openCount > 0 || unhanded.nonEmpty)) }) {
      val due = clock.millis() - checkedAt >= LivenessCheckMillis
      val live = if (due) {
        checkedAt = clock.millis()
        Some(link.liveLocations())
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
        if (!stopped && openCount > 0 && unhanded.isEmpty) {
          wait(math.max(1L, checkedAt + LivenessCheckMillis - clock.millis()))
        }
      }
    }
    synchronized(if (stopped) Nil else awaited.keys.toSeq.sorted.flatMap(delivered.get).flatten)
  }

  /**
   * An executor's delivery of a ticket's results: kept if the running round waits for it and no other copy came
   * first (see [[io.kinesisspark.executor.FetchService]]); the same copy delivered again (its executor missed the
   * answer) is told it was kept.
   */
  private def onResult(bytes: Array[Byte]): Int = {
    val FetchDelivery(ticket, copy, results) = FetchDelivery.decode(bytes)
    synchronized {
      if (stopped) FetchResultChannel.Closed
      else if (keptCopies.get(ticket).contains(copy)) FetchResultChannel.Accepted
      else if (awaited.contains(ticket) && !delivered.contains(ticket)) {
        delivered(ticket) = results
        unhanded += ticket
        keptCopies(ticket) = copy
        if (keptCopies.size > KeptCopiesRemembered) keptCopies.remove(keptCopies.head._1)
        notifyAll()
        FetchResultChannel.Accepted
      } else {
        if (refusedCopies.add((ticket, copy))) {
          if (refusedCopies.size > KeptCopiesRemembered) refusedCopies.remove(refusedCopies.head)
          resultsRefused += 1
          blocksRefused += ShardFetchResult.blocks(results).size
        }
        FetchResultChannel.Refused
      }
    }
  }

  private def onRemoved(blocks: Int): Unit = synchronized { blocksRemovedAfterRefusal += blocks }

  /** An executor's list of the tickets it holds, not delivered yet: they are not lost. */
  private def onPending(tickets: Array[Long]): Unit = synchronized {
    val now = clock.millis()
    tickets.foreach(id => if (awaited.contains(id)) heardOf(id) = now)
  }
}

private[kinesisspark] object RoundDispatcher {
  private val log = LoggerFactory.getLogger(classOf[RoundDispatcher])
  /** How often a round waiting for results checks that the executors fetching them are still there. */
  private val LivenessCheckMillis = 500L
  /** A ticket its executor has not listed among those it holds for this long is lost (they list them every second). */
  val SilenceLimitMillis = 15000L
  /** Tickets whose kept copy is remembered, for executors that deliver again: several rounds at 10,000 shards. */
  private val KeptCopiesRemembered = 20000
}
