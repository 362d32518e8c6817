package io.kinesisspark

import org.apache.spark.SparkContext
import org.apache.spark.util.LongAccumulator

/**
 * How many prefetched blocks the query's partition readers found on their own executor, how many they fetched from
 * another one, and how many they found gone (a lost executor, an evicted block) and read again from Kinesis:
 * accumulators registered on the driver, shipped inside the [[KinesisPartitionReaderFactory]], added to on executors,
 * and read back by the source's metrics (`blockReadsLocal`, `blockReadsRemote`, `blockReadsFromKinesis`). Spark
 * merges the counts of successful tasks only, so a block is counted once per task that delivered its rows.
 *
 * {{{
 *   val counters = BlockReadCounters(sparkContext)
 *   counters.read(local = true)        // in a partition reader, per block got
 *   counters.gone()                    // in a partition reader, per block found gone
 *   counters.local.value               // on the driver, once the tasks have finished
 * }}}
 */
final case class BlockReadCounters(local: LongAccumulator, remote: LongAccumulator, fromKinesis: LongAccumulator) {
  def read(local: Boolean): Unit = if (local) this.local.add(1L) else remote.add(1L)
  def gone(): Unit = fromKinesis.add(1L)
}

object BlockReadCounters {
  def apply(sc: SparkContext): BlockReadCounters =
    BlockReadCounters(sc.longAccumulator("kinesis-spark blocks read locally"),
      sc.longAccumulator("kinesis-spark blocks read from another executor"),
      sc.longAccumulator("kinesis-spark blocks found gone and read again from Kinesis"))
}
