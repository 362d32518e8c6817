package io.kinesisspark

import org.apache.spark.sql.connector.read.streaming.ReadLimit

/**
 * `maxBytesPerTrigger` as a Spark read limit, on Spark 3.5, which has no limit in bytes (Spark 4.0 added
 * `ReadMaxBytes`). `ReadLimit` is an open interface there and Spark hands a source's default limit back to its
 * `latestOffset` as it is (or replaces it by `ReadAllAvailable` for `Trigger.Once`, as Spark 4 does), so a limit
 * of the connector's own gives `maxBytesPerTrigger` the same meaning on both lines. The Spark 4 build uses Spark's
 * own class instead (src/main/spark-4).
 *
 * {{{
 *   ByteReadLimit(64L << 20) match { case ByteReadLimit(bytes) => bytes }   // 67108864
 * }}}
 */
private[kinesisspark] object ByteReadLimit {
  def apply(maxBytes: Long): ReadLimit = MaxBytes(maxBytes)

  def unapply(limit: ReadLimit): Option[Long] = limit match {
    case MaxBytes(bytes) => Some(bytes)
    case _               => None
  }

  private final case class MaxBytes(maxBytes: Long) extends ReadLimit {
    override def toString: String = s"MaxBytes: $maxBytes"
  }
}
