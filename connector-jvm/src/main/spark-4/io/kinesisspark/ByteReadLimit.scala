package io.kinesisspark

import org.apache.spark.sql.connector.read.streaming.{ReadLimit, ReadMaxBytes}

/**
 * `maxBytesPerTrigger` as a Spark read limit. On Spark 4 this is Spark's own `ReadMaxBytes`; the Spark 3.5 build
 * has a file of the same name (src/main/spark-3.5) with a limit of the connector's own, as 3.5 has none in bytes.
 *
 * {{{
 *   ByteReadLimit(64L << 20) match { case ByteReadLimit(bytes) => bytes }   // 67108864
 * }}}
 */
private[kinesisspark] object ByteReadLimit {
  def apply(maxBytes: Long): ReadLimit = ReadLimit.maxBytes(maxBytes)

  def unapply(limit: ReadLimit): Option[Long] = limit match {
    case bytes: ReadMaxBytes => Some(bytes.maxBytes())
    case _                   => None
  }
}
