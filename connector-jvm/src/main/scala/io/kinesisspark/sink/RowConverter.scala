package io.kinesisspark.sink

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.InternalRow

import io.kinesisspark.KinesisErrors
import io.kinesisspark.kpl.UserRecord
import io.kinesisspark.options.StreamNames

/**
 * Turns each row into the record it stands for and its stream, refusing rows that no retry could ever write: no
 * data, no partition key (unless `partitionKeyFallback` = `random`), a partition key that is empty or over 256
 * characters, an explicit hash key that is not a decimal from 0 to 2^128-1, an unknown stream name, or data and
 * partition key over 1 MiB together. The error names the row (task partition and row number), the stream, the
 * column and what is accepted; it never shows the data.
 *
 * {{{
 *   val convert = new RowConverter(columns, options, partitionId = 3)
 *   val (stream, record) = convert(row)   // ("clicks", UserRecord("user-1", None, bytes))
 * }}}
 */
final class RowConverter(columns: SinkColumns, options: KinesisSinkOptions, partitionId: Int,
    random: java.util.Random = new java.util.Random()) {
  import RowConverter._

  private var rowNumber = 0L

  def apply(row: InternalRow): (String, UserRecord) = {
    rowNumber += 1
    val stream = columns.streamName.filterNot(row.isNullAt).map(i => row.getUTF8String(i).toString) match {
      case Some(name) =>
        if (!StreamNames.isStreamName(name)) {
          throw KinesisErrors.unwritableRow(describe, name, "column 'streamName' must hold a stream name of 1 to 128 " +
            "characters from a-z, A-Z, 0-9, '_', '-' and '.'")
        }
        name
      case None => options.stream.getOrElse(throw KinesisErrors.rowWithoutStream(describe))
    }
    if (row.isNullAt(columns.data.ordinal)) {
      throw KinesisErrors.unwritableRow(describe, stream, "column 'data' is null (Kinesis records need data; filter " +
        "such rows out, or write an empty string or byte array instead)")
    }
    val data = if (columns.data.binary) row.getBinary(columns.data.ordinal)
               else row.getUTF8String(columns.data.ordinal).getBytes
    val partitionKey = columns.partitionKey.filterNot(row.isNullAt).map(i => row.getUTF8String(i).toString) match {
      case Some(key) =>
        if (key.isEmpty || key.length > PutRecordsLimits.MaxPartitionKeyLength) {
          throw KinesisErrors.unwritableRow(describe, stream, s"column 'partitionKey' holds a key of ${key.length} " +
            s"characters ('${key.take(40)}${if (key.length > 40) "..." else ""}'): expected 1 to " +
            s"${PutRecordsLimits.MaxPartitionKeyLength} characters")
        }
        key
      case None if options.partitionKeyFallback == PartitionKeyFallback.Random => randomKey()
      case None => throw KinesisErrors.unwritableRow(describe, stream, "column 'partitionKey' is null: expected a " +
        "string of 1 to 256 characters, or option 'partitionKeyFallback' = 'random' to give such rows a random key")
    }
    val explicitHashKey = columns.explicitHashKey.filterNot(row.isNullAt).map { i =>
      val key = row.getUTF8String(i).toString
      if (!isHashKey(key)) {
        throw KinesisErrors.unwritableRow(describe, stream, s"column 'explicitHashKey' holds '${key.take(60)}': " +
          "expected a decimal number from 0 to 2^128-1 (340282366920938463463374607431768211455) without leading " +
          "zeros, or null to place the row by its partition key")
      }
      key
    }
    val size = data.length.toLong + partitionKey.getBytes(StandardCharsets.UTF_8).length
    if (size > PutRecordsLimits.MaxRecordBytes) {
      throw KinesisErrors.unwritableRow(describe, stream, s"its data (${data.length} bytes) and partition key " +
        s"(${size - data.length} bytes) are $size bytes together, over Kinesis's limit of " +
        s"${PutRecordsLimits.MaxRecordBytes} bytes (1 MiB) per record")
    }
    (stream, UserRecord(partitionKey, explicitHashKey, data))
  }

  private def describe: String = s"row $rowNumber of task partition $partitionId"

  private def randomKey(): String = java.lang.Long.toHexString(random.nextLong())
}

object RowConverter {
  private val HashKeyPattern = "0|[1-9][0-9]{0,38}".r

  /** A decimal from 0 to 2^128-1 in Kinesis's form (no sign, no leading zeros). */
  def isHashKey(key: String): Boolean =
    HashKeyPattern.pattern.matcher(key).matches() && BigInt(key) < UserRecord.HashKeySpace
}
