package io.kinesisspark.options

import java.util.Locale

import scala.util.Try

import org.apache.spark.network.util.JavaUtils

import io.kinesisspark.KinesisErrors

/**
 * How every options class (the source's, the connection's, enhanced fan-out's, the sink's) reads one value: the
 * one place an option's text becomes a typed value, and a bad value an error naming the option, the value and what
 * is accepted ([[KinesisErrors.invalidOption]]). Options call these through their kinds ([[OptionKind]]); the texts of what
 * is accepted are here too, for the kinds to describe themselves in the option catalog.
 *
 * {{{
 *   OptionValues.parseDuration("minFetchPeriod", "1s", minMs = 200L)     // 1000
 *   OptionValues.parseInt("maxRecordsPerFetch", "0", min = 1, max = 10000)
 *   // KinesisSparkException: option 'maxRecordsPerFetch' ... '0' ... an integer from 1 to 10000
 * }}}
 */
object OptionValues {

  def parseInt(option: String, value: String, min: Int, max: Int): Int =
    parseLong(option, value, min.toLong, max.toLong).toInt

  def integerAccepted(min: Long, max: Long): String =
    if (max == Long.MaxValue || max == Int.MaxValue) s"an integer of at least $min" else s"an integer from $min to $max"

  def decimalAccepted(exclusiveMin: Double, max: Double): String =
    s"a decimal number greater than $exclusiveMin and at most $max"

  def durationAccepted(minMs: Long): String = s"a duration such as '${math.max(minMs, 1)}ms', '1s' or '2m', of at least ${minMs}ms"

  val BytesAccepted = "a positive byte size such as '10mb' or '2gb'"

  val BooleanAccepted = "'true' or 'false'"

  def parseLong(option: String, value: String, min: Long, max: Long): Long = {
    val accepted = integerAccepted(min, max)
    val n = Try(value.trim.replace(",", "").replace("_", "").toLong)
      .getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (n < min || n > max) throw KinesisErrors.invalidOption(option, value, accepted)
    n
  }

  /** A decimal in (`exclusiveMin`, `max`]. */
  def parseDouble(option: String, value: String, exclusiveMin: Double, max: Double): Double = {
    val accepted = decimalAccepted(exclusiveMin, max)
    val n = Try(value.trim.toDouble).filter(d => !d.isNaN).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (n <= exclusiveMin || n > max) throw KinesisErrors.invalidOption(option, value, accepted)
    n
  }

  /** A duration string as Spark accepts it ("210ms", "1s", "2m", "1h"); a bare number means milliseconds. */
  def parseDuration(option: String, value: String, minMs: Long): Long = {
    val accepted = durationAccepted(minMs)
    val ms = Try(JavaUtils.timeStringAsMs(value.trim)).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (ms < minMs) throw KinesisErrors.invalidOption(option, value, accepted)
    ms
  }

  /** A byte size as Spark accepts it ("10mb", "2gb", "512k"); a bare number means bytes. */
  def parseBytes(option: String, value: String): Long = {
    val accepted = BytesAccepted
    val bytes = Try(JavaUtils.byteStringAsBytes(value.trim)).getOrElse(throw KinesisErrors.invalidOption(option, value, accepted))
    if (bytes <= 0) throw KinesisErrors.invalidOption(option, value, accepted)
    bytes
  }

  def parseBoolean(option: String, value: String): Boolean =
    value.trim.toLowerCase(Locale.ROOT) match {
      case "true"  => true
      case "false" => false
      case _       => throw KinesisErrors.invalidOption(option, value, BooleanAccepted)
    }
}
