package org.apache.spark.kinesisspark

import org.apache.spark.SparkContext

/**
 * How many tasks the cluster can run at once now: Spark's own count (every executor's cores over the cores a task
 * takes, `spark.task.cpus`), which it keeps to itself. `spark.default.parallelism` is not it: it is a tuning setting,
 * often two or three times the cores. Real-time tasks each hold a slot for a whole batch, so they must fit.
 *
 * {{{
 *   TaskSlots.now(spark.sparkContext)  // 2 in local[2]
 * }}}
 */
object TaskSlots {
  def now(sc: SparkContext): Int = sc.maxNumConcurrentTasks(sc.resourceProfileManager.defaultResourceProfile)
}
