package io.kinesisspark.prefetch

import java.util.concurrent.{CancellationException, CountDownLatch, LinkedBlockingQueue, TimeUnit}

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.concurrent.{Await, Future, Promise}
import scala.concurrent.duration._
import scala.util.Try

import org.apache.spark.kinesisspark.FetchResultChannel
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{LogCapture, ShardPosition, SteppedClock}
import io.kinesisspark.ShardPosition.{AfterRecord, TrimHorizon}
import io.kinesisspark.aws.{AwsConnection, AwsCredentialsConfig}
import io.kinesisspark.blocks.{BlockRef, FetchedRange}
import io.kinesisspark.executor.{FetchDelivery, FetchTicket, ShardFetchOrder, ShardFetchResult, ShardFetchTask}
import io.kinesisspark.reader.{FetchLimits, ShardCounters}

/** The round dispatcher's ledger and liveness, with a job submitter and an executor link that only pretend. */
class RoundDispatcherSuite extends AnyFunSuite {
  private val connection = AwsConnection("us-east-1", Some(java.net.URI.create("http://127.0.0.1:9")),
    AwsCredentialsConfig.DefaultChain)

  private def task(shardId: String): ShardFetchTask =
    ShardFetchTask(connection, FetchLimits(10), 1, Seq(ShardFetchOrder("s", shardId, TrimHorizon, 1L)))

  private def result(ticket: FetchTicket): ShardFetchResult = {
    val shardId = ticket.task.orders.head.shardId
    // One block, in two ranges (the block's last range names it).
    def range(from: ShardPosition, to: String, last: Boolean) = FetchedRange("s", shardId, from, AfterRecord(to),
      Some(BlockRef(3, ticket.id, "executor_host_0", 0, 10, last)), 1, 10L)
    val ranges = Seq(range(TrimHorizon, "100", last = false), range(AfterRecord("100"), "200", last = true))
    ShardFetchResult("s", shardId, ranges,
      caughtUp = true, millisBehindLatest = Some(0L), ShardCounters.Zero, location = "executor_host_0")
  }

  /**
   * Submits nothing: each ticket "goes" to its task's first location (or executor_host_9), after `onDispatch` ran
   * with the job's tickets; with `holdUntilCancelled`, the job's tasks never end until it is cancelled.
   */
  private class FakeJobs extends JobSubmitter {
    val submitted = mutable.ArrayBuffer.empty[Seq[(Seq[FetchTicket], Seq[String])]]
    val submittedOnce = new CountDownLatch(1)
    @volatile var onDispatch: Seq[FetchTicket] => Unit = (_: Seq[FetchTicket]) => ()
    @volatile var holdUntilCancelled = false
    val cancelled = new CountDownLatch(1)

    override def parallelism: Int = 2

    override def submit(description: String, tasks: Seq[(Seq[FetchTicket], Seq[String])]): JobSubmitter.Job = {
      submitted += tasks
      submittedOnce.countDown()
      new JobSubmitter.Job {
        override def await(): Seq[(Long, String)] = {
          if (holdUntilCancelled) {
            cancelled.await()
            throw new CancellationException("job cancelled")
          }
          onDispatch(tasks.flatMap(_._1))
          tasks.flatMap { case (tickets, at) => tickets.map(t => t.id -> at.headOption.getOrElse("executor_host_9")) }
        }

        override def cancel(): Unit = cancelled.countDown()
      }
    }
  }

  /** Holds the endpoint's callbacks, so a test delivers as an executor would; `live` are the executors alive. */
  private class FakeLink extends ExecutorLink {
    @volatile var live = Set("executor_host_0", "executor_host_1", "executor_host_9")
    @volatile private var onResult: Array[Byte] => Int = (_: Array[Byte]) => FetchResultChannel.Closed
    @volatile var onPending: Array[Long] => Unit = (_: Array[Long]) => ()
    @volatile var onRemoved: Int => Unit = (_: Int) => ()
    @volatile var closed = false

    override def listen(endpoint: String)(onResult: Array[Byte] => Int,
        onPending: Array[Long] => Unit, onRemoved: Int => Unit): AutoCloseable = {
      this.onResult = onResult
      this.onPending = onPending
      this.onRemoved = onRemoved
      new AutoCloseable { override def close(): Unit = closed = true }
    }

    override def liveLocations(): Set[String] = live

    def deliver(ticket: FetchTicket, copy: String): Int =
      onResult(FetchDelivery.encode(FetchDelivery(ticket.id, copy, Seq(result(ticket)))))
  }

  private class Fixture(silenceLimitMillis: Long = 15000L) {
    val clock = new SteppedClock
    val jobs = new FakeJobs
    val link = new FakeLink
    val dispatcher = new RoundDispatcher("kinesis-spark-prefetch-test", jobs, link, clock, silenceLimitMillis)
    dispatcher.open()

    /** Runs a round on a thread of its own; `dispatched` completes with its tickets once they went out. */
    def runAside(tasks: (ShardFetchTask, Option[String])*): (Future[Seq[ShardFetchResult]], Future[Seq[FetchTicket]]) =
      runAsideHanding(_ => ())(tasks: _*)

    /** [[runAside]], with the round's results handed to `onDelivered` as they come. */
    def runAsideHanding(onDelivered: Seq[ShardFetchResult] => Unit)(tasks: (ShardFetchTask, Option[String])*)
        : (Future[Seq[ShardFetchResult]], Future[Seq[FetchTicket]]) = {
      val dispatched = Promise[Seq[FetchTicket]]()
      jobs.onDispatch = tickets => dispatched.success(tickets)
      val round = Promise[Seq[ShardFetchResult]]()
      val thread = new Thread(() => round.complete(Try(dispatcher.runJob(tasks, "round", onDelivered))))
      thread.setDaemon(true)
      thread.start()
      (round.future, dispatched.future)
    }
  }

  test("a round whose results all arrive ends with them in ticket order; tickets go to their executors' tasks") {
    val f = new Fixture
    f.jobs.onDispatch = tickets => tickets.reverse.foreach { t =>
      assert(f.link.deliver(t, "executor_host_0/0") == FetchResultChannel.Accepted)
    }
    val results = f.dispatcher.runJob(Seq(task("shardId-0") -> Some("executor_host_1"), task("shardId-1") -> None,
      task("shardId-2") -> Some("executor_host_0"), task("shardId-3") -> Some("executor_host_1")), "round")
    assert(results.map(_.shardId) == Seq("shardId-0", "shardId-1", "shardId-2", "shardId-3"))
    // One task per executor, and the ticket no executor fetched yet in a task of its own.
    assert(f.jobs.submitted.head.map { case (tickets, at) => (tickets.map(_.id), at) } ==
      Seq((Seq(1L), Nil), (Seq(2L), Seq("executor_host_0")), (Seq(0L, 3L), Seq("executor_host_1"))))
    assert(f.dispatcher.lostTickets == 0 && f.dispatcher.refusedResults == 0)
  }

  test("each ticket's results are handed over once, as they come, before the round ends") {
    val f = new Fixture
    val handed = new LinkedBlockingQueue[String]()
    val (round, dispatched) = f.runAsideHanding(_.foreach(r => handed.put(r.shardId)))(
      task("shardId-0") -> Some("executor_host_0"), task("shardId-1") -> Some("executor_host_0"))
    val tickets = Await.result(dispatched, 10.seconds)
    assert(f.link.deliver(tickets(1), "executor_host_0/0") == FetchResultChannel.Accepted)
    assert(handed.poll(10, TimeUnit.SECONDS) == "shardId-1", "the result waited for the round's end")
    assert(!round.isCompleted)
    assert(f.link.deliver(tickets(1), "executor_host_0/0") == FetchResultChannel.Accepted, "the executor missed it")
    assert(f.link.deliver(tickets(0), "executor_host_0/0") == FetchResultChannel.Accepted)
    assert(Await.result(round, 10.seconds).map(_.shardId) == Seq("shardId-0", "shardId-1"))
    assert(handed.asScala.toList == List("shardId-0"), "a result was handed over twice, or not at all")
  }

  test("the last ticket, delivered while the one before it is handed over, is handed over too") {
    // The round used to end once every ticket was in, though the last one delivered had not been handed over.
    val f = new Fixture
    val handed = mutable.ArrayBuffer.empty[String]
    var tickets = Seq.empty[FetchTicket]
    f.jobs.onDispatch = dispatched => { tickets = dispatched; f.link.deliver(dispatched(1), "executor_host_0/0") }
    val results = f.dispatcher.runJob(Seq(task("shardId-0") -> Some("executor_host_0"),
      task("shardId-1") -> Some("executor_host_0")), "round", { delivered =>
      handed ++= delivered.map(_.shardId)
      if (handed.size == 1) f.link.deliver(tickets(0), "executor_host_0/0") // while this hand-over runs
    })
    assert(results.map(_.shardId) == Seq("shardId-0", "shardId-1"))
    assert(handed == Seq("shardId-1", "shardId-0"), "a delivered result never went into the buffer")
  }

  test("what handing a result over throws ends the round and is thrown by it") {
    val f = new Fixture
    val (round, dispatched) = f.runAsideHanding(_ => throw new IllegalStateException("a task failed"))(
      task("shardId-0") -> Some("executor_host_0"), task("shardId-1") -> Some("executor_host_0"))
    val tickets = Await.result(dispatched, 10.seconds)
    f.link.deliver(tickets(0), "executor_host_0/0")
    assert(Try(Await.result(round, 10.seconds)).failed.toOption.map(_.getMessage).contains("a task failed"))
    assert(f.link.deliver(tickets(1), "executor_host_0/0") == FetchResultChannel.Refused, "the round's tickets stayed")
  }

  test("a ticket whose executor is gone is lost and counted; its late delivery is refused and counted") {
    val f = new Fixture
    f.link.live = Set("executor_host_0")
    var tickets = Seq.empty[FetchTicket]
    f.jobs.onDispatch = dispatched => {
      tickets = dispatched
      f.link.deliver(dispatched.find(_.task.orders.head.shardId == "shardId-1").get, "executor_host_0/0")
    }
    val (results, logged) = LogCapture.of(classOf[RoundDispatcher])(
      f.dispatcher.runJob(Seq(task("shardId-0") -> Some("executor_host_1"),
        task("shardId-1") -> Some("executor_host_0")), "round"))
    assert(results.map(_.shardId) == Seq("shardId-1"), "the round ends with what was delivered")
    assert(f.dispatcher.lostTickets == 1)
    assert(logged.exists(l => l.level == "WARN" && l.message == "Prefetch ticket 0 was fetching on executor_host_1, " +
      "which is gone; its shards are fetched again next round"), logged)
    assert(f.link.deliver(tickets.find(_.id == 0L).get, "executor_host_1/0") == FetchResultChannel.Refused)
    assert(f.dispatcher.refusedResults == 1)
    assert(f.dispatcher.refusedBlocks == 1 && f.dispatcher.refusedBlocksRemoved == 0, "one block, in two ranges")
    // Delivered again (the executor missed the answer): refused again, counted once.
    assert(f.link.deliver(tickets.find(_.id == 0L).get, "executor_host_1/0") == FetchResultChannel.Refused)
    assert(f.dispatcher.refusedResults == 1 && f.dispatcher.refusedBlocks == 1)
    f.link.onRemoved(1) // the executor removed it
    assert(f.dispatcher.refusedBlocksRemoved == 1)
  }

  test("a ticket its executor stops listing is lost after the silence limit; while listed, it is waited for") {
    val f = new Fixture(silenceLimitMillis = 15000L)
    val (round, dispatched) = f.runAside(task("shardId-0") -> Some("executor_host_1"))
    val ticket = Await.result(dispatched, 10.seconds).head
    Thread.sleep(300) // the dispatch is recorded at 0 (were it recorded later, the ticket would only be lost later)
    f.clock.now = 10000L
    f.link.onPending(Array(ticket.id)) // the executor still holds it
    f.clock.now = 20000L // past the limit since the dispatch, not since the executor last listed it
    Thread.sleep(1200) // two liveness checks at least
    assert(!round.isCompleted && f.dispatcher.lostTickets == 0, "a ticket listed 10 s ago was given up")
    f.clock.now = 40000L
    assert(Await.result(round, 10.seconds).isEmpty)
    assert(f.dispatcher.lostTickets == 1)
    assert(f.link.deliver(ticket, "executor_host_1/0") == FetchResultChannel.Refused)
    assert(f.dispatcher.refusedResults == 1)
  }

  test("a copy delivered twice is kept once; another copy of a ticket kept is refused") {
    val f = new Fixture
    f.jobs.onDispatch = tickets => {
      val t = tickets.head
      assert(f.link.deliver(t, "executor_host_0/0") == FetchResultChannel.Accepted)
      assert(f.link.deliver(t, "executor_host_0/0") == FetchResultChannel.Accepted, "the executor missed the answer")
      assert(f.link.deliver(t, "executor_host_1/1") == FetchResultChannel.Refused, "a speculative attempt's")
    }
    val results = f.dispatcher.runJob(Seq(task("shardId-0") -> Some("executor_host_0")), "round")
    assert(results.size == 1 && f.dispatcher.refusedResults == 1)
    val ticket = f.jobs.submitted.head.head._1.head
    assert(f.link.deliver(ticket, "executor_host_0/0") == FetchResultChannel.Accepted, "after the round too")
    assert(f.dispatcher.refusedResults == 1)
  }

  test("stop ends a round waiting for results, cancels a job being dispatched, and closes the endpoint") {
    val waiting = new Fixture
    val (round, dispatched) = waiting.runAside(task("shardId-0") -> Some("executor_host_0"))
    val ticket = Await.result(dispatched, 10.seconds).head
    waiting.dispatcher.stop()
    assert(Await.result(round, 10.seconds).isEmpty)
    assert(waiting.link.closed)
    assert(waiting.link.deliver(ticket, "executor_host_0/0") == FetchResultChannel.Closed)
    assert(waiting.dispatcher.runJob(Seq(task("shardId-0") -> None), "round").isEmpty)
    assert(waiting.jobs.submitted.size == 1, "no round is submitted after the stop")

    val dispatching = new Fixture
    dispatching.jobs.holdUntilCancelled = true
    val (cancelled, _) = dispatching.runAside(task("shardId-0") -> None)
    assert(dispatching.jobs.submittedOnce.await(10, TimeUnit.SECONDS), "the round was never submitted")
    dispatching.dispatcher.stop()
    assert(dispatching.jobs.cancelled.await(10, TimeUnit.SECONDS), "the job was not cancelled")
    assert(Try(Await.result(cancelled, 10.seconds)).failed.toOption.exists(_.isInstanceOf[CancellationException]))
  }
}
