package io.kinesisspark.reader

import io.kinesisspark.ShardPosition
import io.kinesisspark.blocks.{KinesisRecord, RecordBlockCodec}

/**
 * What one GetRecords call (or enhanced fan-out event) gave: the records after the reader's previous position, lag,
 * whether the shard ended, and whether the reader is caught up with the shard's tip. The records come encoded, as one
 * segment of a block ([[RecordBlockCodec]]), written while they were de-aggregated: the prefetcher stores the segment
 * as it is, and [[records]] decodes it for the few that need the records themselves (re-reads, tests).
 *
 * {{{
 *   val batch = reader.next()
 *   batch.segment.foreach(store); batch.lastPosition  // or batch.records
 * }}}
 *
 * @param segment the records, `None` when there are none
 * @param count   how many records
 * @param maxArrivalMillis the latest arrival among them (Kinesis's arrival times may be out of order in a shard)
 * @param bytes   the data bytes of the Kinesis records the call returned (what the shard's read limits count)
 */
final class ShardReadBatch private (
    val segment: Option[java.nio.ByteBuffer],
    val count: Int,
    val firstArrivalMillis: Long,
    val lastArrivalMillis: Long,
    val maxArrivalMillis: Long,
    val lastPosition: Option[ShardPosition.AfterRecord],
    val millisBehindLatest: Long,
    val ended: Boolean,
    val bytes: Long,
    val caughtUp: Boolean) {

  /** The records, decoded from the segment. */
  lazy val records: Vector[KinesisRecord] =
    segment.fold(Vector.empty[KinesisRecord])(RecordBlockCodec.decode(_).toVector)

  override def toString: String = s"ShardReadBatch($count records up to ${lastPosition.getOrElse("-")}, " +
    s"$millisBehindLatest ms behind, ended $ended, $bytes bytes, caught up $caughtUp)"
}

object ShardReadBatch {
  /** The records `written` holds (none, when it holds none). */
  def apply(written: RecordBlockCodec.Writer, millisBehindLatest: Long, ended: Boolean, bytes: Long,
      caughtUp: Boolean): ShardReadBatch =
    if (written.count == 0) empty(millisBehindLatest, ended, bytes, caughtUp)
    else new ShardReadBatch(Some(written.result()), written.count, written.firstArrivalMillis,
      written.lastArrivalMillis, written.maxArrivalMillis, written.lastPosition, millisBehindLatest, ended, bytes,
      caughtUp)

  /** No records. */
  def empty(millisBehindLatest: Long, ended: Boolean, bytes: Long, caughtUp: Boolean): ShardReadBatch =
    new ShardReadBatch(None, 0, Long.MinValue, Long.MinValue, Long.MinValue, None, millisBehindLatest, ended, bytes,
      caughtUp)

  /** A call that was throttled or failed transiently: nothing read, and not caught up. */
  val Throttled: ShardReadBatch = empty(Long.MaxValue, ended = false, 0L, caughtUp = false)
}
