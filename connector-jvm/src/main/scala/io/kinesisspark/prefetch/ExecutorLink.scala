package io.kinesisspark.prefetch

import org.apache.spark.kinesisspark.{BlockStoreBridge, FetchResultChannel}

/**
 * What the [[RoundDispatcher]] hears from the executors: the results they deliver and the tickets they still hold,
 * through an RPC endpoint of its own, and which executors are alive. A trait, so that the dispatcher runs rounds
 * without Spark in unit tests.
 *
 * {{{
 *   val listening = ExecutorLink.Spark.listen("kinesis-spark-prefetch-3-…")(
 *     bytes => FetchResultChannel.Accepted, ids => (), removed => ())
 *   ExecutorLink.Spark.liveLocations()  // Set("driver_host_driver", "executor_host_1")
 *   listening.close()
 * }}}
 */
private[kinesisspark] trait ExecutorLink {
  /**
   * Listens under `endpoint` until closed.
   *
   * @param onResult  a delivery (a [[io.kinesisspark.executor.FetchDelivery]]'s bytes); answers
   *                  [[FetchResultChannel.Accepted]], [[FetchResultChannel.Refused]] or [[FetchResultChannel.Closed]]
   * @param onPending the tickets an executor holds, not delivered yet (sent about once a second)
   * @param onRemoved how many blocks of a refused result its executor removed
   */
  def listen(endpoint: String)(onResult: Array[Byte] => Int, onPending: Array[Long] => Unit,
      onRemoved: Int => Unit): AutoCloseable

  /** The location of every executor (and the driver) whose block manager the cluster knows now. */
  def liveLocations(): Set[String]
}

private[kinesisspark] object ExecutorLink {
  /** Spark's: a [[FetchResultChannel]] endpoint, and the block manager master's executors. */
  object Spark extends ExecutorLink {
    override def listen(endpoint: String)(onResult: Array[Byte] => Int, onPending: Array[Long] => Unit,
        onRemoved: Int => Unit): AutoCloseable =
      FetchResultChannel.open(endpoint)(onResult, onPending, onRemoved)

    override def liveLocations(): Set[String] = BlockStoreBridge.liveLocations()
  }
}
