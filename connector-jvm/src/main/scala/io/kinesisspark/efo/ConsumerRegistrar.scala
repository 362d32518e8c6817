package io.kinesisspark.efo

import java.time.Clock

import scala.collection.mutable
import scala.util.Random
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory
import software.amazon.awssdk.services.kinesis.model.LimitExceededException

import io.kinesisspark.{KinesisErrors, StreamNotFoundException}
import io.kinesisspark.aws.{ConsumerInUseException, KinesisApi}

/**
 * Driver side of enhanced fan-out: one registered consumer per stream of the query. A consumer is looked up by
 * name and reused when it exists, registered when it does not, and waited for (polling DescribeStreamConsumer
 * with jittered, growing pauses) until it is ACTIVE; only then do executors subscribe with its ARN. Every
 * `refreshIntervalMs` each consumer is checked again, and registered again if someone deregistered it (its ARN
 * then changes, and the next prefetch round hands the new one to the executors). On [[stop]] the consumers are
 * deregistered only when `deregisterOnStop` (option `requireConsumerDeregistration`): by default they stay, so a
 * restarted query subscribes at once. Executors never register or deregister.
 *
 * {{{
 *   val registrar = new ConsumerRegistrar(api, Map("orders" -> "kinesis_spark_orders-app"), 300000L, false)
 *   registrar.consumerArn("orders")  // registers if needed, waits until ACTIVE
 *   registrar.refreshDue()           // in the prefetch loop
 *   registrar.stop()
 * }}}
 *
 * @param names          the consumer name of each stream
 * @param activeTimeoutMs how long a consumer may take to become ACTIVE (or a DELETING one to go) before the query fails
 */
final class ConsumerRegistrar(
    api: KinesisApi,
    val names: Map[String, String],
    refreshIntervalMs: Long,
    deregisterOnStop: Boolean,
    clock: Clock = Clock.systemUTC(),
    sleep: Long => Unit = Thread.sleep,
    random: Random = new Random(),
    activeTimeoutMs: Long = ConsumerRegistrar.DefaultActiveTimeoutMs) {

  import ConsumerRegistrar._

  // Guarded by `this`: the ARN of each stream's ACTIVE consumer, and when it was last checked.
  private val arns = mutable.Map.empty[String, String]
  private val checkedAt = mutable.Map.empty[String, Long]
  private var stopped = false

  /** The ARN of the stream's consumer: registered if it does not exist, and waited for until ACTIVE. */
  def consumerArn(stream: String): String = synchronized {
    arns.getOrElse(stream, {
      val arn = ensureActive(stream)
      arns(stream) = arn
      checkedAt(stream) = clock.millis()
      arn
    })
  }

  /** Checks again each consumer not checked for `refreshIntervalMs`; registers a deregistered one again. */
  def refreshDue(): Unit = synchronized {
    val now = clock.millis()
    for ((stream, arn) <- arns.toSeq if now - checkedAt(stream) >= refreshIntervalMs) {
      val current = try api.describeConsumer(stream, names(stream)) catch {
        case _: StreamNotFoundException =>
          // The prefetcher's listing reports the deleted stream; its consumer went with it.
          arns.remove(stream)
          None
      }
      current match {
        case Some(c) if c.active && c.arn == arn => checkedAt(stream) = clock.millis()
        case other if arns.contains(stream) =>
          log.warn(s"Enhanced fan-out consumer '${names(stream)}' of stream '$stream' is " +
            other.fold("gone")(c => s"${c.status} (${c.arn})") + "; registering it again")
          arns(stream) = ensureActive(stream)
          checkedAt(stream) = clock.millis()
        case _ => ()
      }
    }
  }

  /** Forgets a stream's consumer (its stream was deleted or created again): the next [[consumerArn]] checks afresh. */
  def invalidate(stream: String): Unit = synchronized {
    arns.remove(stream)
    checkedAt.remove(stream)
  }

  /** Deregisters the consumers this query used when `deregisterOnStop`; failures are logged, never thrown. */
  def stop(): Unit = synchronized {
    if (!stopped) {
      stopped = true
      if (deregisterOnStop) names.foreach { case (stream, name) =>
        try {
          if (api.deregisterConsumer(stream, name)) {
            log.info(s"Deregistered enhanced fan-out consumer '$name' of stream '$stream' (option " +
              "'requireConsumerDeregistration' is true)")
          }
        } catch {
          case NonFatal(e) => log.warn(s"Could not deregister enhanced fan-out consumer '$name' of stream '$stream': " +
            s"${e.getMessage}. Deregister it with KinesisConsumerManager to stop its charges.")
        }
      }
    }
  }

  private def ensureActive(stream: String): String = {
    val name = names(stream)
    val started = clock.millis()
    var pause = FirstPauseMs
    var limitRetries = 0
    while (true) {
      val state = api.describeConsumer(stream, name) match {
        case Some(c) if c.active => return c.arn
        case Some(c) => c.status
        case None =>
          try {
            val c = api.registerConsumer(stream, name)
            log.info(s"Registered enhanced fan-out consumer '$name' of stream '$stream' (${c.arn})")
            if (c.active) return c.arn
            c.status
          } catch {
            // Registered (or being deleted) by someone else between our two calls: look again.
            case _: ConsumerInUseException => "being registered or deleted elsewhere"
            case e: LimitExceededException =>
              limitRetries += 1
              if (limitRetries > MaxLimitRetries) {
                throw KinesisErrors.consumerRegistrationFailed(stream, name, Option(e.awsErrorDetails())
                  .map(_.errorMessage()).getOrElse(e.getMessage), e)
              }
              "not registered (RegisterStreamConsumer was throttled)"
          }
      }
      val waited = clock.millis() - started
      if (waited >= activeTimeoutMs) throw KinesisErrors.consumerNotActive(stream, name, state, waited)
      // Jittered, so queries started together do not describe in lock-step (DescribeStreamConsumer allows 20/s).
      sleep(pause / 2 + random.nextInt((pause / 2).toInt + 1))
      pause = math.min(MaxPauseMs, pause * 2)
    }
    throw new IllegalStateException("unreachable")
  }
}

object ConsumerRegistrar {
  private val log = LoggerFactory.getLogger(classOf[ConsumerRegistrar])
  /** A new consumer usually becomes ACTIVE within seconds; Kinesis documents no bound. */
  val DefaultActiveTimeoutMs: Long = 5 * 60 * 1000L
  private val FirstPauseMs = 250L
  private val MaxPauseMs = 5000L
  private val MaxLimitRetries = 5

  /** The registrar of a query's consumers, named from the options and the streaming query id. */
  def apply(api: KinesisApi, streams: Seq[String], options: EfoOptions, queryId: => Option[String]): ConsumerRegistrar =
    new ConsumerRegistrar(api, streams.map(s => s -> options.consumerName(streams, s, queryId)).toMap,
      options.consumerRefreshIntervalMs, options.requireConsumerDeregistration)
}
