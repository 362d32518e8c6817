package io.kinesisspark

import java.text.{ParseException, SimpleDateFormat}
import java.util.Locale

import scala.util.Try

import org.json4s._
import org.json4s.jackson.JsonMethods

import io.kinesisspark.aws.ShardInfo

/**
 * Where a query that has no checkpoint starts reading: option `initialPosition`. Either one position for every
 * shard, or a position per shard (to continue where another consumer stopped) with a default for the shards not
 * named.
 *
 * {{{
 *   InitialPosition.parse("trim_horizon")   // TrimHorizon
 *   InitialPosition.parse("""{"at_timestamp": "06/25/2020 10:23:45 PDT"}""")
 *   InitialPosition.parse("""{"at_timestamp": "2020-06-25 10:23", "format": "yyyy-MM-dd HH:mm"}""")
 *   // One stream read: shards by id. Several: "streams": {"orders": {"shardId-000000000000": ...}}
 *   InitialPosition.parse("""{"default": "trim_horizon",
 *     "shards": {"shardId-000000000000": {"after_sequence_number": "4959...0002"}}}""", Seq("orders"))
 * }}}
 */
sealed trait InitialPosition {
  /** Where a shard not named per shard starts when the query (or a stream added to it) starts at `nowMillis`. */
  def shardPosition(nowMillis: Long): ShardPosition = this match {
    case InitialPosition.Latest                   => ShardPosition.AtTimestamp(nowMillis)
    case InitialPosition.TrimHorizon              => ShardPosition.TrimHorizon
    case InitialPosition.AtTimestamp(ms)          => ShardPosition.AtTimestamp(ms)
    // An aggregate's user records are numbered from 0: from record i on is after record i - 1.
    case InitialPosition.AtSequenceNumber(seq, sub) => ShardPosition.AfterRecord(seq, Some(sub.fold(-1L)(_ - 1)))
    case InitialPosition.AfterSequenceNumber(seq, sub) => ShardPosition.AfterRecord(seq, sub)
    case InitialPosition.ShardEnd                 => ShardPosition.Finished
    case InitialPosition.PerShard(default, _)     => default.shardPosition(nowMillis)
  }

  /**
   * Where each shard of `stream` (`listed`: its shards, as ListShards gives them) starts when the query, or the
   * stream added to it, starts at `nowMillis`. A shard named per shard starts where it is named. A shard named by a
   * sequence number (where another consumer stopped) also places its unnamed relatives: the shards that descend
   * from it start at their beginning (TRIM_HORIZON), never at the default, as they hold records that came after the
   * named position, which a `latest` default would skip; the shards it descends from count as read to their end, as
   * children are read only after their parents ended, so whoever read the named shard had read them. A shard named
   * `shard_end` (read to its end) places its relatives the same way. A shard named by a name or a timestamp says
   * nothing of where a consumer was, and places no other. Other shards start at the default.
   *
   * {{{
   *   // shardId-0 split into 1 and 2; shardId-1 named, from a consumer that stopped in it
   *   PerShard(Latest, Map(("s", "shardId-1") -> AfterSequenceNumber("42"))).shardPositions("s", shards, now)
   *   // shardId-0 -> Finished, shardId-1 -> AfterRecord("42"), shardId-2 -> AtTimestamp(now) (not a descendant)
   * }}}
   */
  def shardPositions(stream: String, listed: Seq[ShardInfo], nowMillis: Long): Map[String, ShardPosition] = this match {
    case InitialPosition.PerShard(default, shards) =>
      val named = listed.map(_.shardId)
        .filter(id => shards.get((stream, id)).exists(InitialPosition.placesRelatives)).toSet
      val graph = ShardGraph(listed)
      val ancestors = graph.ancestorsOf(named) -- named
      val descendants = graph.descendantsOf(named) -- named -- ancestors
      if (ancestors.nonEmpty || descendants.nonEmpty) {
        InitialPosition.log.info(s"Option '${InitialPosition.OptionKey}' names shards of stream '$stream' related to " +
          s"shards it does not name: ${InitialPosition.listed(descendants)} descend from shards named by a sequence " +
          s"number and start at their beginning; ${InitialPosition.listed(ancestors)} are their ancestors and count " +
          "as read")
      }
      listed.map { shard =>
        val id = shard.shardId
        id -> shards.get((stream, id)).map(_.shardPosition(nowMillis)).getOrElse {
          if (ancestors(id)) ShardPosition.Finished
          else if (descendants(id)) ShardPosition.TrimHorizon
          else default.shardPosition(nowMillis)
        }
      }.toMap
    case one => listed.map(_.shardId -> one.shardPosition(nowMillis)).toMap
  }

  /**
   * Checks the shards named for `stream` against its listing: each must be listed, a sequence number must lie in its
   * shard's range, and only a closed shard can be named `shard_end`. (Kinesis has the last word: the first start
   * asks it for an iterator at each sequence number.)
   */
  def checkShards(stream: String, listed: Seq[ShardInfo]): Unit = this match {
    case InitialPosition.PerShard(_, shards) =>
      val byId = listed.map(s => s.shardId -> s).toMap
      shards.collect { case ((`stream`, shardId), position) => (shardId, position) }.toSeq.sortBy(_._1).foreach {
        case (shardId, position) =>
          val shard = byId.getOrElse(shardId, throw InitialPosition.invalid(
            s"shard '$shardId' of stream '$stream', which Kinesis does not list (its shards: " +
              s"${listed.map(_.shardId).sorted.take(10).mkString(", ")}${if (listed.size > 10) ", ..." else ""})"))
          for (seq <- InitialPosition.sequenceOf(position); range <- shard.sequenceNumberRange if !range.contains(BigInt(seq))) {
            throw InitialPosition.invalid(s"sequence number $seq for shard '$shardId' of stream '$stream', which " +
              s"holds sequence numbers $range: the number belongs to another shard or stream")
          }
          if (position == InitialPosition.ShardEnd && !shard.closed) {
            throw InitialPosition.invalid(s"shard '$shardId' of stream '$stream' as read to its end ('shard_end'), " +
              "but the shard is open: records can still arrive in it")
          }
      }
    case _ => ()
  }

  /**
   * This position as option `initialPosition`'s text, which parses back to it for a query reading `streams` (per-shard
   * positions are written under "shards" for one stream, "streams" for several).
   *
   * {{{
   *   PerShard(Latest, Map(("orders", "shardId-000000000000") -> AfterSequenceNumber("42", Some(3L)))).json(Seq("orders"))
   *   // {"default":"latest","shards":{"shardId-000000000000":{"after_sequence_number":"42","sub_sequence_number":3}}}
   * }}}
   */
  def json(streams: Seq[String]): String = InitialPosition.jsonValue(this, streams) match {
    case JString(name) => name // a name stands as itself, unquoted: "latest", not "\"latest\""
    case value         => JsonMethods.compact(JsonMethods.render(value))
  }

  /** The shards named with a sequence number, as (stream, shard, position): Kinesis is asked about each. */
  def sequenceStarts: Seq[(String, String, InitialPosition)] = this match {
    case InitialPosition.PerShard(_, shards) =>
      shards.toSeq.sortBy(_._1).collect { case ((stream, shardId), p) if InitialPosition.sequenceOf(p).isDefined =>
        (stream, shardId, p)
      }
    case _ => Nil
  }
}

object InitialPosition {
  /** Records that arrive after the query first starts; pinned to that start time in the first offset. */
  case object Latest extends InitialPosition
  /** The oldest record still in each shard (`earliest` is an alias). */
  case object TrimHorizon extends InitialPosition
  /** Records whose approximate arrival time is at or after `epochMillis`. */
  final case class AtTimestamp(epochMillis: Long) extends InitialPosition
  /**
   * Per shard only: the record with this sequence number and later ones; with `subSequenceNumber`, from that user
   * record of the record's KPL aggregate on (without it, all of the aggregate's user records).
   */
  final case class AtSequenceNumber(sequenceNumber: String, subSequenceNumber: Option[Long] = None)
    extends InitialPosition
  /**
   * Per shard only: the records after this sequence number; with `subSequenceNumber`, the user records of its KPL
   * aggregate after that one, then the records after it (a consumer that stopped inside an aggregate).
   */
  final case class AfterSequenceNumber(sequenceNumber: String, subSequenceNumber: Option[Long] = None)
    extends InitialPosition
  /**
   * Per shard only: the shard was read to its end (a KCL lease's `SHARD_END`); nothing of it is read, and the shards
   * that descend from it start at their beginning.
   */
  case object ShardEnd extends InitialPosition
  /** A position per (stream, shard id); shards not named start at `default`. */
  final case class PerShard(default: InitialPosition, shards: Map[(String, String), InitialPosition])
    extends InitialPosition

  /** The Databricks default for the `format` field: `java.text.SimpleDateFormat` syntax. */
  val DefaultTimestampFormat = "MM/dd/yyyy HH:mm:ss ZZZ"

  private val OptionKey = KinesisOptionKeys.InitialPosition
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[InitialPosition])

  private def listed(shards: Set[String]): String =
    if (shards.isEmpty) "no shards" else shards.toSeq.sorted.mkString(", ")

  /** What `initialPosition` accepts. */
  val Accepted: String =
    """'latest', 'trim_horizon', 'earliest', JSON {"at_timestamp": "06/25/2020 10:23:45 PDT"} with an """ +
      s"""optional "format" field (default "$DefaultTimestampFormat"), or JSON with positions per shard """ +
      """{"default": <one of those>, "shards": {"<shard id>": <one of those, or {"at_sequence_number": "<n>"} """ +
      """or {"after_sequence_number": "<n>"}, either with "sub_sequence_number": <i> inside a KPL aggregate, or """ +
      """'shard_end' for a closed shard read to its end>}} """ +
      """("streams": {"<stream>": {"<shard id>": ...}} when reading several)"""

  private val PerShardKeys = Set("default", "shards", "streams")

  /** Parses a stream-wide position (per-shard positions need the streams: the other `parse`). */
  def parse(value: String): InitialPosition = parse(value, Nil)

  /** Parses the option for a query reading `streams` (per-shard positions must name only those). */
  def parse(value: String, streams: Seq[String]): InitialPosition = value.trim match {
    case json if json.startsWith("{") =>
      val fields = Try(JsonMethods.parse(json)).toOption.collect { case JObject(fs) => fs }
        .getOrElse(throw KinesisErrors.invalidOption(OptionKey, json, Accepted))
      if (fields.exists(f => PerShardKeys.contains(f._1))) parsePerShard(json, fields, streams)
      else parseAtTimestamp(json, fields.toMap)
    case name => parseName(name).getOrElse(throw KinesisErrors.invalidOption(OptionKey, value, Accepted))
  }

  private def parseName(name: String): Option[InitialPosition] = name.toLowerCase(Locale.ROOT) match {
    case "latest"                    => Some(Latest)
    case "trim_horizon" | "earliest" => Some(TrimHorizon)
    case _                           => None
  }

  private def parsePerShard(json: String, fields: List[JField], streams: Seq[String]): PerShard = {
    def fail(what: String) = KinesisErrors.invalidOption(OptionKey, json, what)
    fields.map(_._1).filterNot(PerShardKeys).foreach(k => throw fail(s"""no field "$k" beside "default", "shards" """ +
      """and "streams" (a stream-wide "at_timestamp" goes in "default")"""))
    val map = fields.toMap
    val default = map.get("default") match {
      case None => Latest
      case Some(v) => stage(v, s"""the "default" position""", json) match {
        case AtSequenceNumber(_, _) | AfterSequenceNumber(_, _) | ShardEnd => throw fail(""""default" to be """ +
          s"latest, trim_horizon or at_timestamp, not ${JsonMethods.compact(v)}: a sequence number or shard_end " +
          "belongs to one shard")
        case p => p
      }
    }
    def shardsOf(stream: String, v: JValue, where: String): Seq[((String, String), InitialPosition)] = v match {
      case JObject(shards) => shards.map { case (shardId, p) =>
        if (shardId.trim.isEmpty) throw fail(s"shard ids in $where that are not empty")
        (stream, shardId) -> stage(p, s"the position of shard '$shardId' of stream '$stream'", json)
      }
      case other => throw fail(s"$where to be an object of shard id to position, not ${JsonMethods.compact(other)}")
    }
    val single = map.get("shards").toSeq.flatMap { v =>
      streams match {
        case Seq(stream) => shardsOf(stream, v, """"shards"""")
        case _ => throw fail(s""""streams": {"<stream>": {"<shard id>": ...}} instead of "shards" when reading """ +
          s"several streams (${streams.mkString(", ")})")
      }
    }
    val several = map.get("streams").toSeq.flatMap {
      case JObject(ss) => ss.flatMap { case (stream, v) =>
        if (!streams.contains(stream)) {
          throw fail(s"""stream names in "streams" among those read (${streams.mkString(", ")}), not '$stream'""")
        }
        shardsOf(stream, v, s"""stream '$stream' of "streams"""")
      }
      case other => throw fail(s""""streams" to be an object of stream name to shards, not ${JsonMethods.compact(other)}""")
    }
    val all = single ++ several
    all.groupBy(_._1).collectFirst { case ((stream, shard), ps) if ps.size > 1 =>
      throw fail(s"one position per shard, not ${ps.size} for shard '$shard' of stream '$stream'")
    }
    PerShard(default, all.toMap)
  }

  /** One position: a name, an at_timestamp object, or (per shard) a sequence number object. */
  private def stage(value: JValue, what: String, json: String): InitialPosition = {
    def fail() = KinesisErrors.invalidOption(OptionKey, json, s"""$what to be 'latest', 'trim_horizon', 'earliest', """ +
      """{"at_timestamp": ..., "format": ...}, {"at_sequence_number": "<n>"} or {"after_sequence_number": "<n>"} """ +
      s"""(either with "$SubSequenceKey": <i> inside a KPL aggregate) or '$ShardEndName', not """ +
      JsonMethods.compact(value))
    value match {
      case JString(name) if name.trim.equalsIgnoreCase(ShardEndName) => ShardEnd
      case JString(name) => parseName(name.trim).getOrElse(throw fail())
      case JObject(fs) =>
        val f = fs.toMap
        val sequenceFields = fs.size - f.get(SubSequenceKey).size
        (f.get("at_sequence_number"), f.get("after_sequence_number")) match {
          case (Some(JString(seq)), None) if sequenceFields == 1 =>
            AtSequenceNumber(sequenceNumber(seq, what, json), f.get(SubSequenceKey).map(subSequence(_, what, json)))
          case (None, Some(JString(seq))) if sequenceFields == 1 =>
            AfterSequenceNumber(sequenceNumber(seq, what, json), f.get(SubSequenceKey).map(subSequence(_, what, json)))
          case (None, None) if f.contains("at_timestamp") && !f.contains(SubSequenceKey) => parseAtTimestamp(json, f)
          case _ => throw fail()
        }
      case _ => throw fail()
    }
  }

  /** The field naming a user record inside a KPL aggregate, beside a sequence number. */
  private val SubSequenceKey = "sub_sequence_number"

  private def subSequence(value: JValue, what: String, json: String): Long = value match {
    case JInt(i) if i >= 0 && i <= Long.MaxValue => i.toLong
    case other => throw KinesisErrors.invalidOption(OptionKey, json, s"""$what to hold a "$SubSequenceKey" that is """ +
      s"a whole number of at least 0 (a user record's index in its KPL aggregate), not ${JsonMethods.compact(other)}")
  }

  private def sequenceNumber(seq: String, what: String, json: String): String = {
    // Kinesis sequence numbers are decimal strings of up to 128 digits (GetShardIterator's StartingSequenceNumber).
    if (seq.isEmpty || seq.length > 128 || !seq.forall(c => c >= '0' && c <= '9')) {
      throw KinesisErrors.invalidOption(OptionKey, json, s"$what to hold a sequence number of 1 to 128 digits, not '$seq'")
    }
    // Without leading zeros, as Kinesis writes them and as its StartingSequenceNumber pattern takes them.
    val canonical = seq.dropWhile(_ == '0')
    if (canonical.isEmpty) "0" else canonical
  }

  /** A shard named so tells where a consumer was: its unnamed ancestors and descendants are placed by it. */
  private def placesRelatives(position: InitialPosition): Boolean = position == ShardEnd || sequenceOf(position).isDefined

  /** Per shard: a closed shard read to its end. */
  private val ShardEndName = "shard_end"

  private def sequenceOf(position: InitialPosition): Option[String] = position match {
    case AtSequenceNumber(seq, _)    => Some(seq)
    case AfterSequenceNumber(seq, _) => Some(seq)
    case _                           => None
  }

  /** The format stream-wide timestamps are written in: SimpleDateFormat syntax, milliseconds and an ISO offset. */
  private val JsonTimestampFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"

  private def jsonValue(position: InitialPosition, streams: Seq[String]): JValue = {
    def sequence(key: String, seq: String, sub: Option[Long]): JValue =
      JObject((key -> JString(seq)) :: sub.map(i => SubSequenceKey -> (JInt(i): JValue)).toList)
    position match {
      case Latest      => JString("latest")
      case TrimHorizon => JString("trim_horizon")
      case ShardEnd    => JString(ShardEndName)
      case AtTimestamp(ms) =>
        val format = new SimpleDateFormat(JsonTimestampFormat, Locale.US)
        format.setTimeZone(java.util.TimeZone.getTimeZone("UTC"))
        JObject("at_timestamp" -> JString(format.format(new java.util.Date(ms))), "format" -> JString(JsonTimestampFormat))
      case AtSequenceNumber(seq, sub)    => sequence("at_sequence_number", seq, sub)
      case AfterSequenceNumber(seq, sub) => sequence("after_sequence_number", seq, sub)
      case PerShard(default, shards) =>
        def of(stream: String): JObject = JObject(shards.toList.collect { case ((`stream`, shard), p) => shard -> p }
          .sortBy(_._1).map { case (shard, p) => shard -> jsonValue(p, streams) })
        val named = streams match {
          case Seq(one) => "shards" -> (of(one): JValue)
          case several  => "streams" -> (JObject(several.toList.map(s => s -> (of(s): JValue))): JValue)
        }
        JObject("default" -> jsonValue(default, streams), named)
    }
  }

  private def invalid(what: String): IllegalArgumentException =
    new IllegalArgumentException(s"Invalid value for option '$OptionKey': it names $what.")

  /** The error for a named start Kinesis refuses to give an iterator at (called by the first start). */
  def refused(stream: String, shardId: String, position: InitialPosition, detail: String): IllegalArgumentException = {
    def inAggregate(sub: Option[Long]) = sub.fold("")(i => s" (user record $i of its aggregate)")
    val start = position match {
      case AtSequenceNumber(seq, sub)    => s"at sequence number $seq${inAggregate(sub)}"
      case AfterSequenceNumber(seq, sub) => s"after sequence number $seq${inAggregate(sub)}"
      case other                         => other.toString
    }
    invalid(s"a start $start in shard '$shardId' of stream '$stream', which Kinesis refuses ($detail): the " +
      "record may have been trimmed by retention or belong to another shard; start that shard at 'trim_horizon' or " +
      "another sequence number")
  }

  private def parseAtTimestamp(json: String, fields: Map[String, JValue]): AtTimestamp = {
    val timestamp = fields.get("at_timestamp").collect { case JString(s) => s }
      .getOrElse(throw KinesisErrors.invalidOption(OptionKey, json, s"""a string field "at_timestamp"; $Accepted"""))
    val pattern = fields.get("format") match {
      case None              => DefaultTimestampFormat
      case Some(JString(p))  => p
      case Some(_)           => throw KinesisErrors.invalidOption(OptionKey, json, "\"format\" to be a string")
    }
    val format = Try(new SimpleDateFormat(pattern, Locale.US))
      .getOrElse(throw KinesisErrors.invalidOption(OptionKey, json, s"""a valid SimpleDateFormat pattern in "format""""))
    format.setLenient(false)
    try AtTimestamp(format.parse(timestamp).getTime)
    catch {
      case _: ParseException =>
        throw KinesisErrors.invalidOption(OptionKey, json, s"""an "at_timestamp" value in the format "$pattern"""")
    }
  }
}
