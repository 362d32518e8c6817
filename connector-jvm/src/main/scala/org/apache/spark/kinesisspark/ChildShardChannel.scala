package org.apache.spark.kinesisspark

import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.rpc.{RpcCallContext, RpcEndpoint, RpcEnv}

/**
 * How a real-time task talks to the driver about resharding within its batch: a Spark RPC endpoint on the driver, one
 * per real-time stream, under a name of its own. Only the driver sees every task's finished shards, so only it can
 * tell when the last parent of a merge ended, whichever task read it. A task asks which children it may read once it
 * finished a shard, and from time to time whether the batch should end early. Spark-private API (RPC), hence this
 * package.
 *
 * Messages are JDK types (strings and a number; the answer as bytes or a boolean), for the reason
 * [[FetchResultChannel]] gives.
 *
 * {{{
 *   val listening = ChildShardChannel.open("kinesis-spark-children-3")(
 *     (batch, task, stream, shardId) => encodedOrders, batch => false)
 *   ChildShardChannel.finished("kinesis-spark-children-3", 12L, 0, "clicks", "shardId-000000000001") // an executor
 *   listening.close()
 * }}}
 */
object ChildShardChannel {
  private final class Endpoint(
      override val rpcEnv: RpcEnv,
      onFinished: (Long, Int, String, String) => Array[Byte],
      onEndAsked: Long => Boolean) extends RpcEndpoint {
    override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
      case Array(batch: String, task: String, stream: String, shardId: String) =>
        context.reply(onFinished(batch.toLong, task.toInt, stream, shardId))
      case batch: java.lang.Long => context.reply(java.lang.Boolean.valueOf(onEndAsked(batch)))
    }
  }

  /**
   * Listens under `name` on the driver until closed.
   *
   * @param onFinished a task of a batch finished a shard of a stream: the orders' bytes of what it may read now
   * @param onEndAsked whether the batch should end now
   */
  def open(name: String)(onFinished: (Long, Int, String, String) => Array[Byte],
      onEndAsked: Long => Boolean): AutoCloseable = {
    val env = SparkEnv.get.rpcEnv
    val ref = env.setupEndpoint(name, new Endpoint(env, onFinished, onEndAsked))
    () => try env.stop(ref) catch { case NonFatal(_) => () }
  }

  /**
   * Tells the driver's endpoint `name` that `task` of `batch` finished `shardId` of `stream`: the driver's answer, or
   * the failure (the driver unreachable, the query stopped).
   */
  def finished(name: String, batch: Long, task: Int, stream: String, shardId: String): Either[Throwable, Array[Byte]] =
    ask[Array[Byte]](name, Array[String](batch.toString, task.toString, stream, shardId))

  /** Whether the driver's endpoint `name` wants `batch` to end now; the failure when it could not be asked. */
  def endRequested(name: String, batch: Long): Either[Throwable, Boolean] =
    ask[java.lang.Boolean](name, java.lang.Long.valueOf(batch)).map(_.booleanValue)

  private def ask[T: scala.reflect.ClassTag](name: String, message: AnyRef): Either[Throwable, T] =
    try Right(DriverEndpoints.ref(name).askSync[T](message))
    catch { case NonFatal(e) => DriverEndpoints.forget(name); Left(e) }
}
