package io.kinesisspark.options

import java.util.Locale

import org.json4s._

import io.kinesisspark.KinesisErrors

/**
 * What an option's value is and which values it accepts: an integer in a range, a duration of at least so long, one
 * of a few words... Each kind reads a value through [[OptionValues]] and describes itself as data for the option
 * catalog ([[OptionCatalog]]), from which the Python package checks values the same way (a Spark Connect client has
 * no JVM to ask).
 *
 * {{{
 *   OptionKind.Integer(1, 10000).read("maxRecordsPerFetch", "500")   // 500L
 *   OptionKind.Integer(1, 10000).accepted                             // "an integer from 1 to 10000"
 *   OptionKind.Duration(200L).render(400L)                            // "400ms"
 * }}}
 */
sealed trait OptionKind[T] {
  /** The kind's name in the catalog's data file. */
  def name: String
  /** What the kind accepts, as an error message says it after "expected". */
  def accepted: String
  /** `text`, the value of `option`, as a typed value; else an error naming the option, the value and [[accepted]]. */
  def read(option: String, text: String): T
  /** `value` as an option's text that [[read]] gives back. */
  def render(value: T): String
  /** What the data file says of the kind besides its name and [[accepted]]: bounds, words. */
  def fields: List[JField] = Nil
}

object OptionKind {
  /** A whole number in [`min`, `max`] (an `Int` option has `max` at most `Int.MaxValue`). */
  final case class Integer(min: Long, max: Long) extends OptionKind[Long] {
    def name: String = "integer"
    def accepted: String = OptionValues.integerAccepted(min, max)
    def read(option: String, text: String): Long = OptionValues.parseLong(option, text, min, max)
    def render(value: Long): String = value.toString
    override def fields: List[JField] = List("min" -> JLong(min), "max" -> JLong(max))
  }

  /** A decimal number in (`exclusiveMin`, `max`]. */
  final case class Decimal(exclusiveMin: Double, max: Double) extends OptionKind[Double] {
    def name: String = "decimal"
    def accepted: String = OptionValues.decimalAccepted(exclusiveMin, max)
    def read(option: String, text: String): Double = OptionValues.parseDouble(option, text, exclusiveMin, max)
    def render(value: Double): String = value.toString
    override def fields: List[JField] = List("exclusiveMin" -> JDouble(exclusiveMin), "max" -> JDouble(max))
  }

  /**
   * A duration in milliseconds, at least `minMs`; with `max`, at most its milliseconds, whose text is then what a
   * value above it is told (a range such as "from '15m' to '12h'", in the units users write).
   */
  final case class Duration(minMs: Long, max: Option[(Long, String)] = None) extends OptionKind[Long] {
    def name: String = "duration"
    def accepted: String = OptionValues.durationAccepted(minMs)
    def read(option: String, text: String): Long = {
      val ms = OptionValues.parseDuration(option, text, minMs)
      max.filter { case (maxMs, _) => ms > maxMs }.foreach { case (_, range) =>
        throw KinesisErrors.invalidOption(option, text, range)
      }
      ms
    }
    /** In the largest unit that says it exactly: "400ms", "10s", "5m", "1h". */
    def render(value: Long): String =
      Seq(3600000L -> "h", 60000L -> "m", 1000L -> "s").collectFirst {
        case (unit, suffix) if value != 0 && value % unit == 0 => s"${value / unit}$suffix"
      }.getOrElse(s"${value}ms")
    override def fields: List[JField] = List("minMs" -> JLong(minMs)) ++
      max.toList.flatMap { case (maxMs, range) => List("maxMs" -> JLong(maxMs), "rangeAccepted" -> JString(range)) }
  }

  /** A positive byte size; with `min`, at least its bytes, whose text is then what a smaller value is told. */
  final case class ByteSize(min: Option[(Long, String)] = None) extends OptionKind[Long] {
    def name: String = "bytes"
    def accepted: String = OptionValues.BytesAccepted
    def read(option: String, text: String): Long = {
      val bytes = OptionValues.parseBytes(option, text)
      min.filter { case (minBytes, _) => bytes < minBytes }.foreach { case (_, atLeast) =>
        throw KinesisErrors.invalidOption(option, text, atLeast)
      }
      bytes
    }
    /** In the largest binary unit that says it exactly: "20gb", "1mb", "1500". */
    def render(value: Long): String =
      Seq(40 -> "tb", 30 -> "gb", 20 -> "mb", 10 -> "kb").collectFirst {
        case (shift, suffix) if value != 0 && value % (1L << shift) == 0 => s"${value >> shift}$suffix"
      }.getOrElse(value.toString)
    override def fields: List[JField] =
      min.toList.flatMap { case (minBytes, atLeast) => List("minBytes" -> JLong(minBytes), "minAccepted" -> JString(atLeast)) }
  }

  /** `true` or `false`, in any case. */
  case object Flag extends OptionKind[Boolean] {
    def name: String = "boolean"
    def accepted: String = OptionValues.BooleanAccepted
    def read(option: String, text: String): Boolean = OptionValues.parseBoolean(option, text)
    def render(value: Boolean): String = value.toString
  }

  /** One of `words`, in any case, trimmed; read as the word in lower case. */
  final case class Choice(words: Seq[String], accepted: String) extends OptionKind[String] {
    def name: String = "choice"
    def read(option: String, text: String): String = {
      val word = text.trim.toLowerCase(Locale.ROOT)
      if (!words.contains(word)) throw KinesisErrors.invalidOption(option, text, accepted)
      word
    }
    def render(value: String): String = value
    override def fields: List[JField] = List("words" -> JArray(words.map(JString(_)).toList))
  }

  /**
   * Text whose form the option's own parser checks (a stream name, a position, a region, a class name...): `read`
   * gives it as it is; `accepted` describes it for the catalog.
   */
  final case class Text(accepted: String) extends OptionKind[String] {
    def name: String = "text"
    def read(option: String, text: String): String = text
    def render(value: String): String = value
  }
}
