package org.apache.spark.kinesisspark

import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.concurrent.duration._

import org.apache.spark.{SparkConf, SparkContext, SparkEnv}
import org.apache.spark.rpc.{RpcCallContext, RpcEndpoint, RpcEnv, RpcTimeout}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

class ChildShardChannelSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sc: SparkContext = _

  // Two threads in the driver's shared RPC loop, as on a 2-core driver.
  override def beforeAll(): Unit = sc = new SparkContext(new SparkConf().setMaster("local[1]")
    .setAppName("ChildShardChannelSuite").set("spark.rpc.netty.dispatcher.numThreads", "2")
    .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1"))

  override def afterAll(): Unit = if (sc != null) sc.stop()

  /** Answers at once, from the driver's shared RPC loop: as most of Spark's own driver endpoints do. */
  private final class Pong(override val rpcEnv: RpcEnv) extends RpcEndpoint {
    override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
      case "ping" => context.reply("pong")
    }
  }

  test("tasks waiting on a slow answer (a relisting) hold up none of the driver's other endpoints") {
    val env = SparkEnv.get.rpcEnv
    val pong = env.setupEndpoint("kinesis-spark-test-pong", new Pong(env))
    val answering = new CountDownLatch(2)
    val release = new CountDownLatch(1)
    val channel = ChildShardChannel.open("kinesis-spark-children-test")((_, _, _, _, _, _) => {
      answering.countDown()
      release.await(30, TimeUnit.SECONDS)
      Array.emptyByteArray
    }, _ => false)
    val askers = (1 to 2).map { task =>
      val t = new Thread(() => ChildShardChannel.finished("kinesis-spark-children-test", 1L, task, 0, 2, "s", "x"))
      t.start()
      t
    }
    try {
      assert(answering.await(10, TimeUnit.SECONDS), "the two tasks' questions did not reach the channel")
      val started = System.nanoTime()
      val answer = pong.askSync[String]("ping", new RpcTimeout(5.seconds, "ping"))
      assert(answer == "pong", s"answered ${(System.nanoTime() - started) / 1000000} ms later")
    } finally {
      release.countDown()
      askers.foreach(_.join(15000))
      channel.close()
      env.stop(pong)
    }
  }
}
