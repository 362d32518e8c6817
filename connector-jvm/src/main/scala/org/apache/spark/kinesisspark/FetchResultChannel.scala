package org.apache.spark.kinesisspark

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.rpc.{RpcCallContext, RpcEndpoint, RpcEndpointRef, RpcEnv}
import org.apache.spark.util.RpcUtils

/**
 * How executors hand what they prefetched to the driver: a Spark RPC endpoint on the driver, one per prefetcher,
 * under a name of its own. Prefetch tasks only hand work to the executor's fetch service and return; the service
 * delivers each result here when its fetching is done (see io.kinesisspark.fetch.FetchService). Spark-private API
 * (RPC), hence this package.
 *
 * Payloads are bytes (the connector's objects, Java-serialized): the driver's RPC layer deserializes messages with
 * its own class loader, which cannot load the connector's classes when the jar came with a Spark Connect session.
 *
 * {{{
 *   val receiver = FetchResultChannel.open("kinesis-spark-prefetch-3-…")(bytes => FetchResultChannel.Accepted)
 *   FetchResultChannel.deliver("kinesis-spark-prefetch-3-…", bytes) // on an executor
 *   receiver.close()
 * }}}
 */
object FetchResultChannel {
  /** The driver kept the result. */
  val Accepted = 0
  /** The driver no longer waits for it (its round gave up on it, or took another copy): its blocks must go. */
  val Refused = 1
  /** Nobody listens any more (the query stopped) or the driver could not be reached: its blocks must go. */
  val Closed = 2

  // A JDK type, like the payloads: the driver's RPC layer could not load a class of the connector's.
  private val Ping = "kinesis-spark-ping"

  /** The driver's end: stops listening on [[close]]. */
  final class Receiver private[FetchResultChannel] (env: RpcEnv, ref: RpcEndpointRef) extends AutoCloseable {
    override def close(): Unit = try env.stop(ref) catch { case NonFatal(_) => () }
  }

  private final class Endpoint(override val rpcEnv: RpcEnv, onResult: Array[Byte] => Int) extends RpcEndpoint {
    override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
      case bytes: Array[Byte] => context.reply(Int.box(onResult(bytes)))
      case Ping => context.reply(java.lang.Boolean.TRUE)
    }
  }

  /** Listens under `name` on the driver; `onResult` answers [[Accepted]], [[Refused]] or [[Closed]]. */
  def open(name: String)(onResult: Array[Byte] => Int): Receiver = {
    val env = SparkEnv.get.rpcEnv
    new Receiver(env, env.setupEndpoint(name, new Endpoint(env, onResult)))
  }

  // Executor side: references to the driver's endpoints, looked up once each (a lookup is itself an RPC).
  private val refs = new ConcurrentHashMap[String, RpcEndpointRef]()

  private def ref(name: String): RpcEndpointRef = {
    val env = SparkEnv.get
    refs.computeIfAbsent(name, n => RpcUtils.makeDriverRef(n, env.conf, env.rpcEnv))
  }

  /** Hands `payload` to the driver's endpoint `name`; what the driver answered, or [[Closed]] if it could not be asked. */
  def deliver(name: String, payload: Array[Byte]): Int =
    try ref(name).askSync[java.lang.Integer](payload).intValue()
    catch {
      case NonFatal(_) =>
        refs.remove(name)
        Closed
    }

  /** Whether the driver still listens under `name` (a stopped query's executors stop fetching for it). */
  def isOpen(name: String): Boolean =
    try ref(name).askSync[java.lang.Boolean](Ping).booleanValue()
    catch {
      case NonFatal(_) =>
        refs.remove(name)
        false
    }

  /** Forgets the reference to `name` (its query stopped): the executor keeps no entry per query. */
  def forget(name: String): Unit = refs.remove(name)
}
