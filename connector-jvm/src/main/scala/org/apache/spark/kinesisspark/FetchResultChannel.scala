package org.apache.spark.kinesisspark

import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.rpc.{RpcCallContext, RpcEndpoint, RpcEndpointRef, RpcEnv}

/**
 * How executors hand what they prefetched to the driver: a Spark RPC endpoint on the driver, one per prefetcher,
 * under a name of its own. Prefetch tasks only hand work to the executor's fetch service and return; the service
 * delivers each result here when its fetching is done, and says once a second which tickets it still holds (see
 * io.kinesisspark.executor.FetchService). Spark-private API (RPC), hence this package.
 *
 * Messages are JDK types (results travel as bytes, see io.kinesisspark.executor.FetchDelivery): the driver's RPC layer
 * deserializes messages with its own class loader, which cannot load the connector's classes when the jar came with
 * a Spark Connect session.
 *
 * {{{
 *   val receiver = FetchResultChannel.open("kinesis-spark-prefetch-3-…")(
 *     bytes => FetchResultChannel.Accepted, ids => (), removed => ())
 *   FetchResultChannel.deliver("kinesis-spark-prefetch-3-…", bytes) // on an executor
 *   receiver.close()
 * }}}
 */
object FetchResultChannel {
  /** The driver kept the result (or had kept this very copy before). */
  val Accepted = 0
  /** The driver no longer waits for it (its round gave up on it, or took another copy): its blocks must go. */
  val Refused = 1
  /** Nobody listens under that name any more (the query stopped): its blocks must go. */
  val Closed = 2
  /** The driver could not be asked, or failed to answer: whether it kept the result is not known. */
  val Unknown = 3

  /** The driver's end: stops listening on [[close]]. */
  final class Receiver private[FetchResultChannel] (env: RpcEnv, ref: RpcEndpointRef) extends AutoCloseable {
    override def close(): Unit = try env.stop(ref) catch { case NonFatal(_) => () }
  }

  private final class Endpoint(
      override val rpcEnv: RpcEnv,
      onResult: Array[Byte] => Int,
      onPending: Array[Long] => Unit,
      onRemoved: Int => Unit) extends RpcEndpoint {
    override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
      case bytes: Array[Byte] => context.reply(Int.box(onResult(bytes)))
      case pending: Array[Long] => onPending(pending); context.reply(java.lang.Boolean.TRUE)
      case removed: java.lang.Integer => onRemoved(removed.intValue); context.reply(java.lang.Boolean.TRUE)
    }
  }

  /**
   * Listens under `name` on the driver.
   *
   * @param onResult  a delivery; answers [[Accepted]], [[Refused]] or [[Closed]]
   * @param onPending the tickets an executor holds, not delivered yet (sent about once a second)
   * @param onRemoved how many blocks of a refused result its executor removed
   */
  def open(name: String)(onResult: Array[Byte] => Int, onPending: Array[Long] => Unit,
      onRemoved: Int => Unit): Receiver = {
    val env = SparkEnv.get.rpcEnv
    new Receiver(env, env.setupEndpoint(name, new Endpoint(env, onResult, onPending, onRemoved)))
  }

  private def ref(name: String): RpcEndpointRef = DriverEndpoints.ref(name)

  /** Hands `payload` to the driver's endpoint `name`: what the driver answered, or [[Closed]] or [[Unknown]]. */
  def deliver(name: String, payload: Array[Byte]): Int =
    try ref(name).askSync[java.lang.Integer](payload).intValue()
    catch { case NonFatal(_) => if (gone(name)) Closed else Unknown }

  /**
   * Tells the driver's endpoint `name` which of its tickets this executor holds: `Some(false)` when nobody listens
   * under that name any more (the query stopped), `None` when the driver could not be asked.
   */
  def heartbeat(name: String, pending: Array[Long]): Option[Boolean] =
    try Some(ref(name).askSync[java.lang.Boolean](pending).booleanValue())
    catch { case NonFatal(_) => if (gone(name)) Some(false) else None }

  /** Tells the driver's endpoint `name` how many blocks of a result it refused this executor removed (best effort). */
  def removed(name: String, blocks: Int): Unit =
    try ref(name).askSync[java.lang.Boolean](Int.box(blocks)) catch { case NonFatal(_) => () }

  /** Forgets the reference to `name` (no ticket of its query is left here): the executor keeps no entry per query. */
  def forget(name: String): Unit = DriverEndpoints.forget(name)

  /**
   * After a failed call: whether the driver says it has no endpoint `name` (a fresh lookup, which Spark answers with
   * RpcEndpointNotFoundException). Any other failure (the driver unreachable, a timeout) proves nothing.
   */
  private def gone(name: String): Boolean = {
    DriverEndpoints.forget(name)
    try { ref(name); false } catch { case NonFatal(e) => DriverEndpoints.notFound(e) }
  }
}
