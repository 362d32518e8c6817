package io.kinesisspark

import scala.util.control.NonFatal

import org.apache.spark.sql.connector.read.streaming.Offset
import org.json4s._
import org.json4s.jackson.JsonMethods

import io.kinesisspark.ShardPosition._

/**
 * The source's offset: for every stream and every shard, the [[ShardPosition]] after which reading continues.
 * It is the only record of progress; it lives in Spark's offset log as versioned JSON, written with every batch and
 * repeated in every progress event, so it is kept compact (about 45 bytes per shard since version 2, where version
 * 1 took about 95):
 *
 * {{{
 *   {"v":3,"streams":{"clicks":{
 *     "0":"ags3rdusd6teh04lp23n4rcjangyrafx80jtu",     // shardId-000000000000, after a record
 *     "1":"ags3rdusd6teh04lp23n4rcjangyrafx80jtv.3",   // after sub-record 3 of a KPL aggregate
 *     "2":"t",                                          // TRIM_HORIZON
 *     "3":"@1593105825000",                             // AT_TIMESTAMP, epoch milliseconds
 *     "4":"f"}},                                        // read to its end
 *   "created":{"clicks":1593105800000}}
 * }}}
 *
 * A shard id of Kinesis's form `shardId-` and 12 digits is written as its number; any other id as it is (prefixed
 * with `=` if it could be taken for a number). A sequence number (decimal, up to 129 digits) is written in base 36.
 * Version 3 writes the same JSON as version 2, but a finished shard may be absent once its children have moved on
 * (see [[StartReconciler]]): a build that reads only version 2 would take such a shard for a new one and read it
 * again, so it must refuse the checkpoint instead. Version 2 checkpoints are read as they are. Version 1, still
 * read, spelled both out:
 * `{"v":1,"streams":{"clicks":{"shardId-000000000000":{"after":"4959...","sub":3}}}}`.
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

  // Spark compares offsets by their JSON, often (the same end planned again, the offset log): made once.
  @transient private lazy val rendered = JsonMethods.compact(JsonMethods.render(toJValue))

  override def json(): String = rendered

  def position(stream: String, shardId: String): Option[ShardPosition] = streams.get(stream).flatMap(_.get(shardId))

  /**
   * The same positions and creation times as `other`, compared as values: Spark's `Offset.equals` compares JSON,
   * and rendering an offset of 10,000 shards takes tens of milliseconds.
   */
  def samePositions(other: KinesisSourceOffset): Boolean =
    (this eq other) || (streams == other.streams && created == other.created)

  private def toJValue: JValue = {
    val fields = List(
      "v" -> JInt(KinesisSourceOffset.Version),
      "streams" -> JObject(streams.toList.sortBy(_._1).map { case (stream, shards) =>
        stream -> JObject(shards.toList.sortBy(_._1).map { case (shard, pos) =>
          KinesisSourceOffset.compactShardId(shard) -> (JString(KinesisSourceOffset.compactPosition(pos)): JValue)
        })
      }))
    val createdField =
      if (created.isEmpty) Nil
      else List("created" -> JObject(created.toList.sortBy(_._1).map { case (s, ms) => s -> (JLong(ms): JValue) }))
    JObject(fields ++ createdField)
  }
}

object KinesisSourceOffset {
  /** Bump when the JSON changes incompatibly; keep a checkpoint of each version under test resources. */
  val Version = 3

  def fromJson(json: String): KinesisSourceOffset = {
    val parsed = try JsonMethods.parse(json) catch { case NonFatal(e) => throw KinesisErrors.malformedOffset(json, e) }
    val version = parsed \ "v" match {
      case JInt(v) => v.toInt
      case _       => throw KinesisErrors.malformedOffset(json, new IllegalArgumentException("no version field \"v\""))
    }
    if (version > Version || version < 1) throw KinesisErrors.unsupportedOffsetVersion(version, Version)
    try {
      val streams = parsed \ "streams" match {
        case JObject(ss) => ss.map { case (stream, shards) =>
          stream -> (shards match {
            case JObject(fs) if version == 1 => fs.map { case (shard, pos) => shard -> fromJValue(pos) }.toMap
            case JObject(fs) => fs.map {
              case (shard, JString(pos)) => fullShardId(shard) -> fromCompact(pos)
              case (shard, other)        => throw new IllegalArgumentException(s"position of $shard is not a string: $other")
            }.toMap
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

  private def asciiDigits(s: String, from: Int): Boolean = {
    var i = from
    while (i < s.length && s.charAt(i) >= '0' && s.charAt(i) <= '9') i += 1
    i == s.length
  }

  // Not a regex: every shard id is rendered on every batch (a tenth of rendering 10,000 shards' offset).
  private def compactShardId(shardId: String): String =
    if (shardId.length == 20 && shardId.startsWith("shardId-") && asciiDigits(shardId, 8)) {
      shardId.substring(8).toLong.toString
    }
    else if (shardId.nonEmpty && (shardId.forall(_.isDigit) || shardId.startsWith("="))) "=" + shardId
    else shardId

  /** 36 to the 5th: each division yields five base-36 digits; a remainder below it, times 10^9, fits a long. */
  private val Base36Chunk = 60466176L

  /**
   * A decimal number in base 36, as `new BigInteger(decimal).toString(36)` writes it, without BigInteger: every
   * position of every shard is converted each time an offset is rendered, and BigInteger's parsing and division
   * took half of rendering an offset of 10,000 shards (JFR of DriverScaleBenchmark). The number is held in limbs of
   * nine decimal digits and divided by 36^5 until nothing is left. Anything but ASCII digits goes to BigInteger,
   * which fails on it as it did before.
   */
  private[kinesisspark] def decimalToBase36(decimal: String): String = {
    if (decimal.isEmpty || !asciiDigits(decimal, 0)) return new java.math.BigInteger(decimal).toString(36)
    val limbCount = (decimal.length + 8) / 9
    val limbs = new Array[Long](limbCount) // most significant first
    var end = decimal.length - (limbCount - 1) * 9 // the first limb holds what the other nines leave
    var begin = 0
    var l = 0
    while (l < limbCount) {
      var v = 0L
      var i = begin
      while (i < end) { v = v * 10 + (decimal.charAt(i) - '0'); i += 1 }
      limbs(l) = v
      begin = end
      end += 9
      l += 1
    }
    val chunks = new Array[Long](decimal.length / 7 + 1) // least significant first; 36^5 > 10^7
    var count = 0
    var top = 0
    while (top < limbCount && limbs(top) == 0) top += 1
    while (top < limbCount) {
      var remainder = 0L
      var i = top
      while (i < limbCount) {
        val current = remainder * 1000000000L + limbs(i)
        limbs(i) = current / Base36Chunk
        remainder = current % Base36Chunk
        i += 1
      }
      chunks(count) = remainder
      count += 1
      while (top < limbCount && limbs(top) == 0) top += 1
    }
    if (count == 0) return "0"
    val out = new java.lang.StringBuilder(count * 5)
    out.append(java.lang.Long.toString(chunks(count - 1), 36))
    var c = count - 2
    while (c >= 0) {
      val digits = java.lang.Long.toString(chunks(c), 36)
      var pad = 5 - digits.length
      while (pad > 0) { out.append('0'); pad -= 1 }
      out.append(digits)
      c -= 1
    }
    out.toString
  }

  private def fullShardId(key: String): String =
    if (key.startsWith("=")) key.drop(1)
    else if (key.nonEmpty && key.length <= 12 && key.forall(_.isDigit)) {
      // By hand: String.format took most of parsing an offset of 10,000 shards.
      val number = key.toLong.toString
      "shardId-" + "0" * (12 - number.length) + number
    }
    else if (key.nonEmpty && key.forall(_.isDigit)) throw new IllegalArgumentException(s"shard number $key has over 12 digits")
    else key

  private def compactPosition(position: ShardPosition): String = position match {
    case TrimHorizon                 => "t"
    case Finished                    => "f"
    case AtTimestamp(ms)             => s"@$ms"
    case AfterRecord(seq, None)      => "a" + decimalToBase36(seq)
    case AfterRecord(seq, Some(sub)) => "a" + decimalToBase36(seq) + "." + sub
  }

  private def unknown(position: String) = new IllegalArgumentException(s"unknown shard position '$position' (accepted: " +
    "t, f, @<epoch millis>, a<sequence number in base 36>, a<sequence number in base 36>.<sub-sequence number>)")

  private def fromCompact(position: String): ShardPosition = {
    def sequence(base36: String): String = {
      if (base36.isEmpty || !base36.forall(c => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) {
        throw new IllegalArgumentException(s"sequence number '$base36' is not base 36")
      }
      new java.math.BigInteger(base36, 36).toString
    }
    position.headOption match {
      case Some('t') if position == "t" => TrimHorizon
      case Some('f') if position == "f" => Finished
      case Some('@') => AtTimestamp(position.drop(1).toLong)
      case Some('a') => position.drop(1).split("\\.", -1) match {
        case Array(seq)      => AfterRecord(sequence(seq))
        case Array(seq, sub) => AfterRecord(sequence(seq), Some(sub.toLong))
        case _               => throw unknown(position)
      }
      case _ => throw unknown(position)
    }
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
    // ASCII digits only: positions are compared as decimal strings (ShardPosition.compareSequenceNumbers), and
    // Char.isDigit takes other scripts' digits too.
    if (seq.isEmpty || !seq.forall(c => c >= '0' && c <= '9')) {
      throw new IllegalArgumentException(s"sequence number '$seq' is not numeric")
    }
    seq
  }
}
