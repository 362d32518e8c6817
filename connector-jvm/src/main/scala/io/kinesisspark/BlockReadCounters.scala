package io.kinesisspark

import org.apache.spark.SparkContext
import org.apache.spark.util.LongAccumulator

/**
 * How many prefetched blocks the query's partition readers found on their own executor, and how many they fetched
 * from another one: accumulators registered on the driver, shipped inside the [[KinesisPartitionReaderFactory]], added to
 * on executors, and read back by the source's metrics (`blockReadsLocal`, `blockReadsRemote`).
 *
 * {{{
 *   val counters = BlockReadCounters(sparkContext)
 *   counters.read(local = true)        // in a partition reader, per block got
 *   counters.local.value               // on the driver, once the tasks have finished
 * }}}
 */
final case class BlockReadCounters(local: LongAccumulator, remote: LongAccumulator) {
  def read(local: Boolean): Unit = if (local) this.local.add(1L) else remote.add(1L)
}

object BlockReadCounters {
  def apply(sc: SparkContext): BlockReadCounters =
    BlockReadCounters(sc.longAccumulator("kinesis-spark blocks read locally"),
      sc.longAccumulator("kinesis-spark blocks read from another executor"))
}
