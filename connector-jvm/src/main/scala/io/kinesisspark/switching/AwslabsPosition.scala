package io.kinesisspark.switching

import scala.util.Try

import org.json4s._
import org.json4s.jackson.JsonMethods

import io.kinesisspark.KinesisErrors

/**
 * Where the awslabs connector (spark-sql-kinesis-connector) stands in one shard, as it writes it: at the end of each
 * batch, one per shard, in the `shard-source/<batchId>/<shardId>` files under its metadata path or the items of its
 * DynamoDB table; and, for the batch's start, in its source offset in Spark's `offsets/` log. Its `ShardInfo` JSON:
 * `{"shardId", "iteratorType", "iteratorPosition", "subSequenceNumber", "isLast"}` (the offset writes all five as
 * strings).
 *
 * {{{
 *   AwslabsPosition.fromJson("""{"shardId":"shardId-000000000001","iteratorType":"AFTER_SEQUENCE_NUMBER",
 *     "iteratorPosition":"4959...","subSequenceNumber":2,"isLast":false}""", "shard-source/7/shardId-000000000001")
 *   // AwslabsPosition("shardId-000000000001", "AFTER_SEQUENCE_NUMBER", "4959...", 2, false)
 * }}}
 *
 * @param iteratorType      `AFTER_SEQUENCE_NUMBER`, `AT_SEQUENCE_NUMBER`, `TRIM_HORIZON`, `LATEST`, `AT_TIMESTAMP` or
 *                          `SHARD_END`
 * @param iteratorPosition  the sequence number, or the timestamp in epoch milliseconds for `AT_TIMESTAMP`
 * @param subSequenceNumber the user record inside a KPL aggregate; -1 for a plain record (and for the sentinels)
 * @param isLast            whether that user record was its aggregate's last
 */
final case class AwslabsPosition(shardId: String, iteratorType: String, iteratorPosition: String,
    subSequenceNumber: Long, isLast: Boolean) {
  /** Whether the position stops inside a KPL aggregate, with user records of it still to read. */
  def insideAggregate: Boolean = subSequenceNumber >= 0 && !isLast
}

object AwslabsPosition {
  val AfterSequenceNumber = "AFTER_SEQUENCE_NUMBER"
  val AtSequenceNumber = "AT_SEQUENCE_NUMBER"
  val TrimHorizon = "TRIM_HORIZON"
  val Latest = "LATEST"
  val AtTimestamp = "AT_TIMESTAMP"
  val ShardEnd = "SHARD_END"
  private val Types = Set(AfterSequenceNumber, AtSequenceNumber, TrimHorizon, Latest, AtTimestamp, ShardEnd)
  private val SequenceNumber = "[0-9]{1,128}".r

  /** The position in one `ShardInfo` JSON object; `where` names the file or item, for errors. */
  def fromJson(text: String, where: String): AwslabsPosition =
    JsonMethods.parseOpt(text) match {
      case Some(JObject(fields)) => fromFields(fields.toMap, where)
      case _ => throw KinesisErrors.notAnAwslabsCheckpoint(where, "it is not a JSON object")
    }

  /** The position in the fields of a `ShardInfo` object (numbers and booleans as JSON values, or as strings). */
  def fromFields(fields: Map[String, JValue], where: String): AwslabsPosition = {
    def text(name: String): String = fields.get(name) match {
      case Some(JString(s))  => s
      case Some(JInt(n))     => n.toString
      case Some(JLong(n))    => n.toString
      case Some(JBool(b))    => b.toString
      case _ => throw KinesisErrors.notAnAwslabsCheckpoint(where, s"it has no '$name'")
    }
    val shardId = text("shardId")
    // awslabs reads the type ignoring case.
    val kind = text("iteratorType").toUpperCase(java.util.Locale.ROOT)
    if (!Types(kind)) {
      throw KinesisErrors.notAnAwslabsCheckpoint(where, s"its iteratorType is '$kind', not one of " +
        Types.toSeq.sorted.mkString(", "))
    }
    val position = text("iteratorPosition")
    val sub = Try(text("subSequenceNumber").toLong).getOrElse(
      throw KinesisErrors.notAnAwslabsCheckpoint(where, s"its subSequenceNumber is '${text("subSequenceNumber")}'"))
    val last = text("isLast") match {
      case "true"  => true
      case "false" => false
      case other   => throw KinesisErrors.notAnAwslabsCheckpoint(where, s"its isLast is '$other'")
    }
    val bySequenceNumber = kind == AfterSequenceNumber || kind == AtSequenceNumber
    if (bySequenceNumber && !SequenceNumber.pattern.matcher(position).matches()) {
      throw KinesisErrors.notAnAwslabsCheckpoint(where, s"its iteratorPosition '$position' is not a sequence number")
    }
    if (kind == AtTimestamp && Try(position.toLong).isFailure) {
      throw KinesisErrors.notAnAwslabsCheckpoint(where, s"its AT_TIMESTAMP iteratorPosition '$position' is not " +
        "epoch milliseconds")
    }
    AwslabsPosition(shardId, kind, position, sub, last)
  }
}
