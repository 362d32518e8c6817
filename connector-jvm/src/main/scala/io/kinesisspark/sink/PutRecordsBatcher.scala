package io.kinesisspark.sink

import scala.collection.mutable.ArrayBuffer

/** Kinesis's limits on PutRecords (its "MB" is 2^20 bytes). */
object PutRecordsLimits {
  val MaxRecordsPerCall = 500
  /** A call's data and partition keys together. */
  val MaxBytesPerCall: Int = 5 * 1024 * 1024
  /** One record's data and partition key together. */
  val MaxRecordBytes: Int = 1024 * 1024
  /** Partition keys are 1 to 256 characters. */
  val MaxPartitionKeyLength = 256
}

/**
 * Collects the entries of one PutRecords call, within Kinesis's limits: at most `maxRecords` entries and
 * `maxBytes` bytes (each entry's data plus partition key, [[SinkEntry.size]]). An entry larger than a whole call
 * never reaches here: [[RowConverter]] refuses rows over the per-record limit, which is smaller.
 *
 * {{{
 *   val batch = new PutRecordsBatcher()
 *   pending.takeWhile(batch.tryAdd)   // stops at the first entry that would break a limit
 *   api.putRecords(stream, batch.entries.map(_.put))
 * }}}
 */
final class PutRecordsBatcher(maxRecords: Int = PutRecordsLimits.MaxRecordsPerCall,
    maxBytes: Long = PutRecordsLimits.MaxBytesPerCall) {
  private val taken = ArrayBuffer.empty[PendingEntry]
  private var bytes = 0L

  /** Whether the call would stay within the limits with the entry. */
  def fits(entry: PendingEntry): Boolean = !isFull && bytes + entry.entry.size <= maxBytes

  /** Adds the entry if the call stays within the limits; false (and nothing added) otherwise. */
  def tryAdd(entry: PendingEntry): Boolean =
    if (!fits(entry)) false
    else {
      taken += entry
      bytes += entry.entry.size
      true
    }

  /** No further entry can be added: the record limit is reached. (A small entry may still fit the bytes.) */
  def isFull: Boolean = taken.size >= maxRecords

  /** Whether the call is worth sending without waiting for more: full in records, or nearly full in bytes. */
  def isWorthSending: Boolean = isFull || bytes > maxBytes - PutRecordsLimits.MaxRecordBytes

  def isEmpty: Boolean = taken.isEmpty
  def size: Int = taken.size
  def sizeInBytes: Long = bytes
  def entries: IndexedSeq[PendingEntry] = taken.toIndexedSeq
}
