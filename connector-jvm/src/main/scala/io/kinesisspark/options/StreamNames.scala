package io.kinesisspark.options

import io.kinesisspark.KinesisErrors
import io.kinesisspark.KinesisOptionKeys.StreamName

/**
 * Stream names and stream ARNs as the source's and the sink's `streamName` give them, and the stream column of
 * the sink's rows.
 *
 * {{{
 *   StreamNames.parse("clicks,arn:aws:kinesis:us-east-1:123456789012:stream/orders")
 *   // Seq(StreamRef("clicks", None), StreamRef("orders", Some(StreamArn("arn:...:stream/orders", "us-east-1"))))
 *   StreamNames.isStreamName("clicks") // true
 * }}}
 */
object StreamNames {
  private val StreamNamePattern = "[a-zA-Z0-9_.-]{1,128}".r
  private val StreamArnPattern = "arn:(aws[a-z-]*):kinesis:([a-z]{2}(?:-[a-z]+)+-[0-9]+):([0-9]{12}):stream/([a-zA-Z0-9_.-]{1,128})".r

  final case class StreamArn(arn: String, region: String)
  final case class StreamRef(name: String, arn: Option[StreamArn])

  /** Whether `name` is a valid Kinesis stream name (not an ARN). */
  def isStreamName(name: String): Boolean = StreamNamePattern.pattern.matcher(name).matches()

  /** A comma-separated list of stream names and stream ARNs, as option `streamName` gives them. */
  def parse(value: String): Seq[StreamRef] =
    value.split(",").map(_.trim).toSeq.map {
      case arn @ StreamArnPattern(_, region, _, name) => StreamRef(name, Some(StreamArn(arn, region)))
      case name if isStreamName(name) => StreamRef(name, None)
      case _ => throw KinesisErrors.invalidOption(StreamName, value, Accepted)
    }

  /** What `streamName` accepts. */
  val Accepted: String = "comma-separated stream names (1-128 characters from a-z, A-Z, 0-9, '_', '-' and '.') or " +
    "stream ARNs ('arn:aws:kinesis:<region>:<account>:stream/<name>')"
}
