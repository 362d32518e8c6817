package org.apache.spark.kinesisspark

import scala.concurrent.duration._
import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.rpc.{IsolatedRpcEndpoint, RpcCallContext, RpcEnv, RpcTimeout}

/**
 * How a real-time task talks to the driver about resharding within its batch: a Spark RPC endpoint on the driver, one
 * per real-time stream, under a name of its own, on threads of its own. Only the driver sees every task's finished shards, so only it can
 * tell when the last parent of a merge ended, whichever task read it. A task asks which children it may read once it
 * finished a shard, and from time to time whether the batch should end early. Spark-private API (RPC), hence this
 * package.
 *
 * Messages are JDK types (strings and a number; the answer as bytes or a boolean), for the reason
 * [[FetchResultChannel]] gives.
 *
 * {{{
 *   val listening = ChildShardChannel.open("kinesis-spark-children-3")(
 *     (batch, task, stage, stageTasks, stream, shardId) => encodedOrders, batch => false)
 *   ChildShardChannel.finished("kinesis-spark-children-3", 12L, 7L, 31, 2, "clicks", "shardId-000000000001")
 *   listening.close()
 * }}}
 */
object ChildShardChannel {
  private final class Endpoint(
      override val rpcEnv: RpcEnv,
      onFinished: (Long, Long, Int, Int, String, String) => Array[Byte],
      onEndAsked: Long => Boolean) extends IsolatedRpcEndpoint {
    // Threads of its own: an answer may list the stream again (seconds, when ListShards is throttled), and in Spark's
    // shared loop (two threads on a 2-core driver) two such answers held up every other driver endpoint meanwhile,
    // executors' heartbeats and output commits among them. Two: a task's question whether to end the batch is
    // answered while another task's waits on a relisting.
    override def threadCount(): Int = 2

    override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
      case Array(batch: String, task: String, stage: String, stageTasks: String, stream: String, shardId: String) =>
        context.reply(onFinished(batch.toLong, task.toLong, stage.toInt, stageTasks.toInt, stream, shardId))
      case batch: java.lang.Long => context.reply(java.lang.Boolean.valueOf(onEndAsked(batch)))
    }
  }

  /**
   * Listens under `name` on the driver until closed.
   *
   * @param onFinished a task (attempt) of a batch, in a stage (its id and task count), finished a shard of a stream:
   *                   the orders' bytes of what it may read now
   * @param onEndAsked whether the batch should end now
   */
  def open(name: String)(onFinished: (Long, Long, Int, Int, String, String) => Array[Byte],
      onEndAsked: Long => Boolean): AutoCloseable = {
    val env = SparkEnv.get.rpcEnv
    val ref = env.setupEndpoint(name, new Endpoint(env, onFinished, onEndAsked))
    () => try env.stop(ref) catch { case NonFatal(_) => () }
  }

  /**
   * Tells the driver's endpoint `name` that task attempt `task` of `batch`, in stage `stage` of `stageTasks` tasks,
   * finished `shardId` of `stream`: the driver's answer, or the failure (the driver unreachable, the query stopped, no
   * answer within [[AskTimeout]]).
   */
  def finished(name: String, batch: Long, task: Long, stage: Int, stageTasks: Int, stream: String,
      shardId: String): Either[Throwable, Array[Byte]] =
    ask[Array[Byte]](name,
      Array[String](batch.toString, task.toString, stage.toString, stageTasks.toString, stream, shardId))

  /** Whether the driver's endpoint `name` wants `batch` to end now; the failure when it could not be asked. */
  def endRequested(name: String, batch: Long): Either[Throwable, Boolean] =
    ask[java.lang.Boolean](name, java.lang.Long.valueOf(batch)).map(_.booleanValue)

  /**
   * How long a task waits for an answer: the task asks from within Spark's call for its next record, which a driver
   * that does not answer must not hold for Spark's default two minutes.
   */
  val AskTimeout: FiniteDuration = 10.seconds

  private def ask[T: scala.reflect.ClassTag](name: String, message: AnyRef): Either[Throwable, T] =
    try Right(DriverEndpoints.ref(name).askSync[T](message, new RpcTimeout(AskTimeout, "kinesis-spark child shards")))
    catch {
      // Looked up again (which may take Spark's lookup timeout) only once the endpoint is gone, not after a slow
      // answer: the task asks again within a second.
      case NonFatal(e) => if (DriverEndpoints.notFound(e)) DriverEndpoints.forget(name); Left(e)
    }
}
