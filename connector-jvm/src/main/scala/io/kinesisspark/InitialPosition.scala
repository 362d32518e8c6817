package io.kinesisspark

import java.text.{ParseException, SimpleDateFormat}
import java.util.Locale

import scala.util.Try

import org.json4s._
import org.json4s.jackson.JsonMethods

/**
 * Where a query that has no checkpoint starts reading: option `initialPosition`.
 *
 * {{{
 *   InitialPosition.parse("trim_horizon")   // TrimHorizon
 *   InitialPosition.parse("""{"at_timestamp": "06/25/2020 10:23:45 PDT"}""")
 *   InitialPosition.parse("""{"at_timestamp": "2020-06-25 10:23", "format": "yyyy-MM-dd HH:mm"}""")
 * }}}
 */
sealed trait InitialPosition {
  /** Where a shard starts when the query (or the stream, added to a running query's list) starts at `nowMillis`. */
  def shardPosition(nowMillis: Long): ShardPosition = this match {
    case InitialPosition.Latest          => ShardPosition.AtTimestamp(nowMillis)
    case InitialPosition.TrimHorizon     => ShardPosition.TrimHorizon
    case InitialPosition.AtTimestamp(ms) => ShardPosition.AtTimestamp(ms)
  }
}

object InitialPosition {
  /** Records that arrive after the query first starts; pinned to that start time in the first offset. */
  case object Latest extends InitialPosition
  /** The oldest record still in each shard (`earliest` is an alias). */
  case object TrimHorizon extends InitialPosition
  /** Records whose approximate arrival time is at or after `epochMillis`. */
  final case class AtTimestamp(epochMillis: Long) extends InitialPosition

  /** The Databricks default for the `format` field: `java.text.SimpleDateFormat` syntax. */
  val DefaultTimestampFormat = "MM/dd/yyyy HH:mm:ss ZZZ"

  private val Accepted =
    """'latest', 'trim_horizon', 'earliest', or JSON {"at_timestamp": "06/25/2020 10:23:45 PDT"} with an """ +
      s"""optional "format" field (default "$DefaultTimestampFormat")"""

  def parse(value: String): InitialPosition = {
    val option = KinesisOptionKeys.InitialPosition
    value.trim.toLowerCase(Locale.ROOT) match {
      case "latest"                       => Latest
      case "trim_horizon" | "earliest"    => TrimHorizon
      case json if json.startsWith("{")   => parseAtTimestamp(value.trim)
      case _                              => throw KinesisErrors.invalidOption(option, value, Accepted)
    }
  }

  private def parseAtTimestamp(json: String): AtTimestamp = {
    val option = KinesisOptionKeys.InitialPosition
    val fields = Try(JsonMethods.parse(json)).toOption.collect { case JObject(fs) => fs.toMap }
      .getOrElse(throw KinesisErrors.invalidOption(option, json, Accepted))
    val timestamp = fields.get("at_timestamp").collect { case JString(s) => s }
      .getOrElse(throw KinesisErrors.invalidOption(option, json, s"""a string field "at_timestamp"; $Accepted"""))
    val pattern = fields.get("format") match {
      case None              => DefaultTimestampFormat
      case Some(JString(p))  => p
      case Some(_)           => throw KinesisErrors.invalidOption(option, json, "\"format\" to be a string")
    }
    val format = Try(new SimpleDateFormat(pattern, Locale.US))
      .getOrElse(throw KinesisErrors.invalidOption(option, json, s"""a valid SimpleDateFormat pattern in "format""""))
    format.setLenient(false)
    try AtTimestamp(format.parse(timestamp).getTime)
    catch {
      case _: ParseException =>
        throw KinesisErrors.invalidOption(option, json, s"""an "at_timestamp" value in the format "$pattern"""")
    }
  }
}
