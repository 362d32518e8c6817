package io.kinesisspark.reader.fanout

import java.util.concurrent.{ScheduledThreadPoolExecutor, ThreadFactory, TimeUnit}

/**
 * Runs a task after a delay: when [[ShardSubscription]] subscribes again. Tests pass one that runs tasks when they
 * say, so back-off and resubscription are checked without waiting.
 */
trait Scheduler {
  def schedule(delayMs: Long)(task: () => Unit): Unit
}

object Scheduler {
  /**
   * One daemon thread per JVM for every subscription: a task only starts a SubscribeToShard call, which is
   * asynchronous, so it never holds the thread.
   */
  lazy val shared: Scheduler = {
    val executor = new ScheduledThreadPoolExecutor(1, new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, "kinesis-spark-efo-resubscribe")
        t.setDaemon(true)
        t
      }
    })
    executor.setRemoveOnCancelPolicy(true)
    new Scheduler {
      override def schedule(delayMs: Long)(task: () => Unit): Unit =
        executor.schedule((() => task()): Runnable, math.max(0L, delayMs), TimeUnit.MILLISECONDS)
    }
  }
}
