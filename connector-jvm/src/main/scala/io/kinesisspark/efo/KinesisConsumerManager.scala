package io.kinesisspark.efo

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.slf4j.LoggerFactory

import io.kinesisspark.{KinesisErrors, KinesisOptionKeys}
import io.kinesisspark.aws.{ConnectionOptions, KinesisApi, KinesisClients, StreamConsumer}

/**
 * Lists, registers and deregisters the enhanced fan-out consumers of Kinesis streams, outside any query: to clean up
 * consumers a crashed query left registered (they cost money while registered), or to register one ahead of time.
 * It takes the connection options of the source (`region`, `endpoint`, `awsAccessKey`/`awsSecretKey`, `roleArn`,
 * ...).
 *
 * {{{
 *   val manager = KinesisConsumerManager.newManager()
 *     .option("region", "us-east-1")
 *     .create()
 *   manager.listConsumers("orders").foreach(c => println(s"${c.name} ${c.status}"))
 *   val arn = manager.registerConsumer("orders", "reporting")  // waits until ACTIVE
 *   manager.deregisterConsumer("orders", "reporting")
 * }}}
 *
 * Names are used exactly as given: no prefix is added (a query registers `consumerNamePrefix` + its name).
 */
final class KinesisConsumerManager private (api: KinesisApi) {

  /** Every consumer of the stream, in any state (`CREATING`, `ACTIVE`, `DELETING`). */
  def listConsumers(stream: String): Seq[StreamConsumer] = api.listConsumers(stream)

  /** [[listConsumers]] as a Java list (for Java and Python callers). */
  def listConsumersAsJava(stream: String): java.util.List[StreamConsumer] = listConsumers(stream).asJava

  /**
   * Registers a consumer, or reuses the one of that name, and waits until it is ACTIVE.
   *
   * @return the consumer's ARN
   */
  def registerConsumer(stream: String, name: String): String = {
    KinesisConsumerManager.checkName(name)
    new ConsumerRegistrar(api, Map(stream -> name), Long.MaxValue, deregisterOnStop = false).consumerArn(stream)
  }

  /**
   * Starts deregistering a consumer (Kinesis removes it within seconds).
   *
   * @return false when the stream had no consumer of that name
   */
  def deregisterConsumer(stream: String, name: String): Boolean = api.deregisterConsumer(stream, name)
}

object KinesisConsumerManager {
  private val log = LoggerFactory.getLogger(classOf[KinesisConsumerManager])
  private val NamePattern = "[a-zA-Z0-9_.-]{1,128}".r

  /** A builder: set the connection options with [[Builder.option]], then [[Builder.create]]. */
  def newManager(): Builder = new Builder(Map.empty)

  final class Builder private[KinesisConsumerManager] (options: Map[String, String]) {
    def option(key: String, value: String): Builder = new Builder(options + (key -> value))

    def options(more: Map[String, String]): Builder = new Builder(options ++ more)

    def options(more: java.util.Map[String, String]): Builder = options(more.asScala.toMap)

    /** Parses the options (a bad one fails here, named) and connects. */
    def create(): KinesisConsumerManager = {
      val byKey = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
      val known = KinesisOptionKeys.Connection.map(_.toLowerCase(Locale.ROOT)).toSet
      options.keys.filterNot(k => known(k.toLowerCase(Locale.ROOT))).toSeq.sorted.foreach { k =>
        log.warn(s"Option '$k' is not a connection option and is ignored by the consumer manager (it reads " +
          s"${KinesisOptionKeys.Connection.mkString(", ")})")
      }
      val connection = ConnectionOptions.parse(k => byKey.get(k.toLowerCase(Locale.ROOT)).filter(_ != null))
      new KinesisConsumerManager(KinesisClients.api(connection))
    }
  }

  private def checkName(name: String): Unit =
    if (name == null || !NamePattern.pattern.matcher(name).matches()) {
      throw KinesisErrors.invalidConsumerName(String.valueOf(name))
    }
}
