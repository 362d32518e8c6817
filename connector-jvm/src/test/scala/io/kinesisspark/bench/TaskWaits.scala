package io.kinesisspark.bench

import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable

import org.apache.spark.scheduler.{SparkListener, SparkListenerStageSubmitted, SparkListenerTaskEnd}

/**
 * What prefetching costs the batches in task slots (issue 17: prefetch jobs must never delay batch tasks): how long
 * prefetch tasks held a slot, and how long batch tasks waited for one, from their stage's submission to their launch.
 * Prefetch tasks are told apart by the job group the prefetcher sets ("kinesis-spark-prefetch-…").
 *
 * {{{
 *   val waits = new TaskWaits; spark.sparkContext.addSparkListener(waits)
 *   waits.reset(); ...; println(waits.summary)
 * }}}
 */
final class TaskWaits extends SparkListener {
  private final case class Stage(prefetch: Boolean, submittedAt: Long)
  private val stages = new ConcurrentHashMap[Int, Stage]()
  private val prefetchTaskMs = mutable.ArrayBuffer.empty[Long]
  private val batchTaskWaitMs = mutable.ArrayBuffer.empty[Long]

  override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit = {
    val group = Option(e.properties).flatMap(p => Option(p.getProperty("spark.jobGroup.id"))).getOrElse("")
    stages.put(e.stageInfo.stageId, Stage(group.startsWith("kinesis-spark-prefetch-"),
      e.stageInfo.submissionTime.getOrElse(System.currentTimeMillis())))
  }

  override def onTaskEnd(e: SparkListenerTaskEnd): Unit = Option(stages.get(e.stageId)).foreach { stage =>
    synchronized {
      if (stage.prefetch) prefetchTaskMs += e.taskInfo.duration
      else batchTaskWaitMs += math.max(0L, e.taskInfo.launchTime - stage.submittedAt)
    }
  }

  /** Forgets the tasks seen so far (the warm-up). */
  def reset(): Unit = synchronized { prefetchTaskMs.clear(); batchTaskWaitMs.clear() }

  /** Prefetch tasks' slot time and batch tasks' wait, in ms: count, median and maximum of each. */
  def summary: TaskWaits.Summary = synchronized {
    def stats(xs: Seq[Long]) = if (xs.isEmpty) (0, 0L, 0L) else (xs.size, xs.sorted.apply(xs.size / 2), xs.max)
    TaskWaits.Summary(stats(prefetchTaskMs.toSeq), stats(batchTaskWaitMs.toSeq))
  }
}

object TaskWaits {
  /** (tasks, median ms, max ms) of prefetch tasks' durations and of batch tasks' waits for a slot. */
  final case class Summary(prefetch: (Int, Long, Long), batchWait: (Int, Long, Long)) {
    override def toString: String =
      f"prefetch tasks ${prefetch._1}%,d, held a slot ${prefetch._2}%,d ms median (${prefetch._3}%,d max); " +
        f"batch tasks ${batchWait._1}%,d, waited for a slot ${batchWait._2}%,d ms median (${batchWait._3}%,d max)"
  }
}
