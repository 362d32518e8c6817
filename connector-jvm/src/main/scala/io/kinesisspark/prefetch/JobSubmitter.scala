package io.kinesisspark.prefetch

import scala.concurrent.Await
import scala.concurrent.duration.Duration

import org.apache.spark.{SparkContext, TaskContext}

import io.kinesisspark.executor.{FetchService, FetchTicket}

/**
 * How a round's tickets reach the executors: one job whose tasks each hand their tickets to the [[FetchService]] of
 * the executor they run on, and return at once. A trait, so that the [[RoundDispatcher]] runs rounds without a
 * SparkContext in unit tests.
 *
 * {{{
 *   val job = new JobSubmitter.Spark(sc, "kinesis-spark-prefetch-3")
 *     .submit("kinesis-spark prefetch: 1 shard(s) of clicks", Seq(Seq(ticket) -> Seq("executor_host_1")))
 *   job.await()  // Seq(ticket.id -> "executor_host_1"): where each ticket went
 * }}}
 */
private[kinesisspark] trait JobSubmitter {
  /** How many tasks the cluster runs at once by default (Spark's `defaultParallelism`). */
  def parallelism: Int

  /** Submits one job: a task per element of `tasks`, that dispatches its tickets, run at its locations if it can. */
  def submit(description: String, tasks: Seq[(Seq[FetchTicket], Seq[String])]): JobSubmitter.Job
}

private[kinesisspark] object JobSubmitter {
  /** A submitted job. */
  trait Job {
    /** Waits until every task has run: each ticket's id with the location of the executor that took it. */
    def await(): Seq[(Long, String)]

    /** Cancels the job, interrupting its tasks; [[await]] then throws. */
    def cancel(): Unit
  }

  /** Spark's: jobs of the job group `group`, whose tasks a cancel interrupts. */
  final class Spark(sc: SparkContext, group: String) extends JobSubmitter {
    override def parallelism: Int = sc.defaultParallelism

    override def submit(description: String, tasks: Seq[(Seq[FetchTicket], Seq[String])]): Job = {
      sc.setJobGroup(group, description, interruptOnCancel = true)
      try {
        // Spark's own types come back (ticket id, location): with the jar added to a Connect session, the connector's
        // would be another loader's classes here (see LoaderBridge).
        val submitted = sc.makeRDD(tasks)
          .mapPartitions(_.flatMap { tickets =>
            val attempt = Option(TaskContext.get()).map(_.attemptNumber()).getOrElse(0)
            tickets.map(ticket => (Long.box(ticket.id), FetchService.dispatch(ticket, attempt)): AnyRef)
          })
          .collectAsync()
        new Job {
          override def await(): Seq[(Long, String)] = Await.result(submitted, Duration.Inf).map {
            case (id: java.lang.Long, location: String) => (id.longValue(), location)
            case other => throw new IllegalStateException(s"a prefetch task returned a ${other.getClass.getName}")
          }

          override def cancel(): Unit = submitted.cancel()
        }
      } finally sc.clearJobGroup()
    }
  }
}
