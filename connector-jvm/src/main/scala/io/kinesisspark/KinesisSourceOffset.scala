package io.kinesisspark

import scala.util.control.NonFatal

import org.apache.spark.sql.connector.read.streaming.Offset
import org.json4s._
import org.json4s.jackson.JsonMethods

import io.kinesisspark.ShardPosition._

/**
 * The source's offset: for every stream and every shard, the [[ShardPosition]] after which reading continues.
 * It is the only record of progress; it lives in Spark's offset log as versioned, human-readable JSON:
 *
 * {{{
 *   {"v":1,"streams":{"clicks":{
 *     "shardId-000000000000":{"after":"49590338271490256608559692538361571095921575989136588898"},
 *     "shardId-000000000001":{"after":"49590338271490256608559692538361571095921575989136588899","sub":3},
 *     "shardId-000000000002":{"trim_horizon":true},
 *     "shardId-000000000003":{"at_timestamp":1593105825000},
 *     "shardId-000000000004":{"finished":true}}},
 *   "created":{"clicks":1593105800000}}
 * }}}
 *
 * `created` holds each stream's creation time as DescribeStreamSummary reported it: a stream deleted and created
 * again under the same name reuses its shard ids, and only the creation time tells the two apart. It was added
 * within version 1 as an optional field (checkpoints without it are read as "not known").
 *
 * A `v` newer than this build knows is refused with a clear message rather than misread.
 */
final case class KinesisSourceOffset(
    streams: Map[String, Map[String, ShardPosition]],
    created: Map[String, Long] = Map.empty) extends Offset {

  override def json(): String = JsonMethods.compact(JsonMethods.render(toJValue))

  def position(stream: String, shardId: String): Option[ShardPosition] = streams.get(stream).flatMap(_.get(shardId))

  private def toJValue: JValue = {
    val fields = List(
      "v" -> JInt(KinesisSourceOffset.Version),
      "streams" -> JObject(streams.toList.sortBy(_._1).map { case (stream, shards) =>
        stream -> JObject(shards.toList.sortBy(_._1).map { case (shard, pos) => shard -> KinesisSourceOffset.toJson(pos) })
      }))
    val createdField =
      if (created.isEmpty) Nil
      else List("created" -> JObject(created.toList.sortBy(_._1).map { case (s, ms) => s -> (JLong(ms): JValue) }))
    JObject(fields ++ createdField)
  }
}

object KinesisSourceOffset {
  /** Bump when the JSON changes incompatibly; keep a checkpoint of each version under test resources. */
  val Version = 1

  def fromJson(json: String): KinesisSourceOffset = {
    val parsed = try JsonMethods.parse(json) catch { case NonFatal(e) => throw KinesisErrors.malformedOffset(json, e) }
    val version = parsed \ "v" match {
      case JInt(v) => v.toInt
      case _       => throw KinesisErrors.malformedOffset(json, new IllegalArgumentException("no version field \"v\""))
    }
    if (version > Version) throw KinesisErrors.unsupportedOffsetVersion(version, Version)
    try {
      val streams = parsed \ "streams" match {
        case JObject(ss) => ss.map { case (stream, shards) =>
          stream -> (shards match {
            case JObject(fs) => fs.map { case (shard, pos) => shard -> fromJValue(pos) }.toMap
            case other       => throw new IllegalArgumentException(s"shards of '$stream' are not an object: $other")
          })
        }.toMap
        case other => throw new IllegalArgumentException(s""""streams" is not an object: $other""")
      }
      val created = parsed \ "created" match {
        case JNothing    => Map.empty[String, Long]
        case JObject(cs) => cs.map {
          case (stream, JInt(ms)) => stream -> ms.toLong
          case (stream, other)    => throw new IllegalArgumentException(s"creation time of '$stream' is not a number: $other")
        }.toMap
        case other => throw new IllegalArgumentException(s""""created" is not an object: $other""")
      }
      KinesisSourceOffset(streams, created)
    } catch {
      case e: KinesisSparkException => throw e
      case NonFatal(e)              => throw KinesisErrors.malformedOffset(json, e)
    }
  }

  private def toJson(position: ShardPosition): JValue = position match {
    case TrimHorizon                 => JObject("trim_horizon" -> JBool(true))
    case AtTimestamp(ms)             => JObject("at_timestamp" -> JLong(ms))
    case AfterRecord(seq, None)      => JObject("after" -> JString(seq))
    case AfterRecord(seq, Some(sub)) => JObject("after" -> JString(seq), "sub" -> JLong(sub))
    case Finished                    => JObject("finished" -> JBool(true))
  }

  private def fromJValue(value: JValue): ShardPosition = value match {
    case JObject(fields) =>
      val f = fields.toMap
      (f.get("after"), f.get("sub"), f.get("trim_horizon"), f.get("at_timestamp"), f.get("finished")) match {
        case (Some(JString(seq)), None, None, None, None)         => AfterRecord(checkSequence(seq))
        case (Some(JString(seq)), Some(JInt(sub)), None, None, None) => AfterRecord(checkSequence(seq), Some(sub.toLong))
        case (None, None, Some(JBool(true)), None, None)          => TrimHorizon
        case (None, None, None, Some(JInt(ms)), None)             => AtTimestamp(ms.toLong)
        case (None, None, None, None, Some(JBool(true)))          => Finished
        case _ => throw new IllegalArgumentException(s"unknown shard position ${JsonMethods.compact(value)}")
      }
    case other => throw new IllegalArgumentException(s"shard position is not an object: $other")
  }

  private def checkSequence(seq: String): String = {
    if (seq.isEmpty || !seq.forall(_.isDigit)) throw new IllegalArgumentException(s"sequence number '$seq' is not numeric")
    seq
  }
}
