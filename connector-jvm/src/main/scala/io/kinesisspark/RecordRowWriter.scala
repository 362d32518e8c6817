package io.kinesisspark

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.fetch.{KinesisRecord, RecordBlockCodec}

/**
 * Writes records as rows of `schema`, each into the same [[UnsafeRow]]: a row is valid until the next is written,
 * as Spark asks of a partition reader's rows (the scan's projection copies each one before the next is read).
 *
 * A record in a prefetched block is written from the block's bytes: no String, array or object per record. Made
 * as `GenericInternalRow`s, each row cost six objects (the data copied out of the block, two `UTF8String`s, the
 * values, the row, a boxed timestamp) which Spark's projection then copied again; they were a third of the batch
 * tasks' CPU in `ReadPathBenchmark`.
 *
 * {{{
 *   val rows = KinesisRecordSchema.Databricks.rowWriter()
 *   rows.shard("clicks", "shardId-000000000001")
 *   val row = rows.fromRecord(KinesisRecord("key", Array[Byte](1), "4959", None, 1700000000123L))
 *   row.getUTF8String(0) // key
 * }}}
 */
final class RecordRowWriter(schema: KinesisRecordSchema) {
  private val layout = schema.layout
  private val columns = schema.schema.length
  private val subSequenceAt = if (schema.subSequenceNumber) columns - 1 else -1
  // Sized for a record of 1 KB; the writer grows its buffer for larger ones and keeps it.
  private val writer = new UnsafeRowWriter(columns, 1024)
  private var stream: Array[Byte] = Array.emptyByteArray
  private var shardId: Array[Byte] = Array.emptyByteArray

  /** The stream and shard of the rows written next. */
  def shard(streamName: String, shard: String): Unit = {
    stream = streamName.getBytes(UTF_8)
    shardId = shard.getBytes(UTF_8)
  }

  /** The row of the record `block` is at. */
  def fromBlock(block: RecordBlockCodec.Cursor): UnsafeRow = {
    val bytes = block.bytes
    start()
    writer.write(layout.partitionKeyAt, bytes, block.keyAt, block.keyLength)
    writer.write(layout.dataAt, bytes, block.dataAt, block.dataLength)
    writer.write(layout.sequenceNumberAt, bytes, block.sequenceAt, block.sequenceLength)
    finish(block.arrivalMillis, block.hasSubSequenceNumber, block.subSequenceNumber)
  }

  /** The row of `record`: the same row [[fromBlock]] writes of it once it is in a block. */
  def fromRecord(record: KinesisRecord): UnsafeRow = {
    start()
    writer.write(layout.partitionKeyAt, UTF8String.fromString(record.partitionKey))
    writer.write(layout.dataAt, record.data)
    writer.write(layout.sequenceNumberAt, UTF8String.fromString(record.sequenceNumber))
    finish(record.approximateArrivalMillis, record.subSequenceNumber.isDefined, record.subSequenceNumber.getOrElse(0L))
  }

  private def start(): Unit = {
    writer.reset()
    writer.zeroOutNullBytes()
    writer.write(layout.streamAt, stream)
    writer.write(layout.shardIdAt, shardId)
  }

  private def finish(arrivalMillis: Long, hasSubSequence: Boolean, subSequence: Long): UnsafeRow = {
    writer.write(layout.arrivalAt, arrivalMillis * 1000L) // Spark's timestamps are microseconds
    if (subSequenceAt >= 0) {
      if (hasSubSequence) writer.write(subSequenceAt, subSequence) else writer.setNullAt(subSequenceAt)
    }
    writer.getRow
  }
}
