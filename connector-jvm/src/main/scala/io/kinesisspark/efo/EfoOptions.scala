package io.kinesisspark.efo

import org.slf4j.LoggerFactory

import io.kinesisspark.KinesisErrors
import io.kinesisspark.KinesisOptionKeys._
import io.kinesisspark.options.OptionSpec

/**
 * The enhanced fan-out options of a query with `consumerMode` = `efo`, parsed once with the other source options.
 * A consumer is registered per stream, named `consumerNamePrefix` + (`consumerName` or the streaming query id).
 *
 * {{{
 *   val efo = EfoOptions.parse(Map("consumerName" -> "orders-app").get, Seq("orders")).get
 *   efo.consumerName(Seq("orders"), "orders", queryId = None)  // "kinesis_spark_orders-app"
 * }}}
 *
 * @param consumerNames           none: the streaming query id; one: the name for every stream; else one per stream,
 *                                in the order of `streamName`
 * @param subscriptionMaxEvents   test only: end each subscription client-side after this many events, so tests can
 *                                exercise resubscription without waiting for the service's 5 minutes
 */
final case class EfoOptions(
    consumerNames: Seq[String],
    consumerNamePrefix: String,
    requireConsumerDeregistration: Boolean,
    consumerRefreshIntervalMs: Long,
    subscriptionMaxEvents: Option[Int] = None) {

  /**
   * The consumer name of `stream` (one of `streams`, the query's streams in option order). Without `consumerName`
   * it is made of the streaming query id, which stays the same across restarts from one checkpoint.
   */
  def consumerName(streams: Seq[String], stream: String, queryId: => Option[String]): String = {
    val name = consumerNames match {
      case Seq()    => queryId.getOrElse(throw KinesisErrors.consumerNameUnresolved())
      case Seq(one) => one
      case several  => several(streams.indexOf(stream))
    }
    consumerNamePrefix + name
  }
}

object EfoOptions {
  /** Ours, as Databricks' is `databricks_`: tells operators which consumers this connector registered. */
  val DefaultConsumerNamePrefix = "kinesis_spark_"
  val DefaultConsumerRefreshIntervalMs = 300000L
  val MaxConsumerRefreshIntervalMs = 3600000L
  val MinConsumerRefreshIntervalMs = 1000L
  /** What Kinesis accepts as a consumer name. */
  val MaxConsumerNameLength = 128
  private val ConsumerNameChars = "[a-zA-Z0-9_.-]*".r
  /** A streaming query id is a UUID. */
  private val QueryIdLength = 36

  private val log = LoggerFactory.getLogger(classOf[EfoOptions])

  /** `consumerMode` and the options that mean something only with `efo`, with their defaults. */
  object Spec {
    import io.kinesisspark.options.OptionKind._

    val consumerMode: OptionSpec[String] =
      OptionSpec(ConsumerMode, Choice(Seq("polling", "efo"), "'polling' or 'efo'"), Some("polling"))
    val consumerName: OptionSpec[String] = OptionSpec(ConsumerName, Text(s"a consumer name of 1 to 128 characters " +
      s"from a-z, A-Z, 0-9, '_', '.' and '-' with the prefix of '$ConsumerNamePrefix', or a comma-separated list of " +
      s"such names, one per stream of '$StreamName'"))
    val consumerNamePrefix: OptionSpec[String] = OptionSpec(ConsumerNamePrefix, Text(s"an empty string or up to " +
      s"${MaxConsumerNameLength - 1} characters from a-z, A-Z, 0-9, '_', '.' and '-'"), Some(DefaultConsumerNamePrefix))
    val requireConsumerDeregistration: OptionSpec[Boolean] =
      OptionSpec(RequireConsumerDeregistration, Flag, Some(false))
    val consumerRefreshInterval: OptionSpec[Long] = OptionSpec(ConsumerRefreshInterval,
      Duration(MinConsumerRefreshIntervalMs, Some(MaxConsumerRefreshIntervalMs -> "a duration from '1s' to '3600s'")),
      Some(DefaultConsumerRefreshIntervalMs))
    val efoSubscriptionMaxEvents: OptionSpec[Long] = OptionSpec(EfoSubscriptionMaxEvents, Integer(1, Int.MaxValue))

    val all: Seq[OptionSpec[_]] = Seq(consumerMode, consumerName, consumerNamePrefix, requireConsumerDeregistration,
      consumerRefreshInterval, efoSubscriptionMaxEvents)
  }

  /** The options of `consumerMode` = `efo`; `None` for polling (where the EFO options are ignored, with a warning). */
  def parse(get: String => Option[String], streams: Seq[String]): Option[EfoOptions] = {
    val efo = Spec.consumerMode.valueOrDefault(get) == "efo"
    val prefix = Spec.consumerNamePrefix.valueOrDefault(get).trim
    if (!ConsumerNameChars.pattern.matcher(prefix).matches() || prefix.length > MaxConsumerNameLength - 1) {
      throw KinesisErrors.invalidOption(ConsumerNamePrefix, prefix, Spec.consumerNamePrefix.kind.accepted)
    }
    val names = get(ConsumerName).map(_.split(",", -1).map(_.trim).toSeq).getOrElse(Nil)
    val room = MaxConsumerNameLength - prefix.length
    names.foreach { name =>
      if (name.isEmpty || !ConsumerNameChars.pattern.matcher(name).matches() || name.length > room) {
        throw KinesisErrors.invalidOption(ConsumerName, get(ConsumerName).get,
          s"a consumer name of 1 to $room characters from a-z, A-Z, 0-9, '_', '.' and '-' (Kinesis allows " +
            s"$MaxConsumerNameLength with the prefix '$prefix' of option '$ConsumerNamePrefix'), or a comma-separated " +
            s"list of such names, one per stream of '$StreamName'")
      }
    }
    if (names.size > 1 && names.size != streams.size) {
      throw KinesisErrors.invalidOption(ConsumerName, get(ConsumerName).get,
        s"one consumer name for every stream, or one per stream of '$StreamName' (${streams.size}, in its order)")
    }
    if (names.isEmpty && room < QueryIdLength) {
      throw KinesisErrors.invalidOption(ConsumerNamePrefix, prefix, s"at most ${MaxConsumerNameLength - QueryIdLength} " +
        s"characters when the consumer is named by the streaming query id (no option '$ConsumerName')")
    }
    val deregister = Spec.requireConsumerDeregistration.valueOrDefault(get)
    val refreshMs = Spec.consumerRefreshInterval.valueOrDefault(get)
    val maxEvents = Spec.efoSubscriptionMaxEvents.read(get).map(_.toInt)

    if (efo) Some(EfoOptions(names, prefix, deregister, refreshMs, maxEvents))
    else {
      val ignored = EfoOnly.filter(get(_).isDefined)
      if (ignored.nonEmpty) {
        log.warn(s"Option(s) ${ignored.map(o => s"'$o'").mkString(", ")} apply to enhanced fan-out only and are " +
          s"ignored: option '$ConsumerMode' is 'polling'.")
      }
      None
    }
  }
}
