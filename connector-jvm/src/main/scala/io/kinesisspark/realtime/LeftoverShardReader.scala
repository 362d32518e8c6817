package io.kinesisspark.realtime

import io.kinesisspark.ShardPosition
import io.kinesisspark.blocks.{KinesisRecord, RecordBlockCodec}
import io.kinesisspark.reader.{ReadySignal, ShardCounters, ShardReadBatch, ShardReader}

/**
 * A shard's reader with the records it fetched that a real-time task had not handed out when Spark ended the task
 * (Spark stops asking once the batch's time is up, which may fall inside a response). Kept with the reader in the
 * executor's cache, they are the next task's first batch: the reader's iterator or subscription goes on where it was,
 * instead of being replaced by one from the position the task reported (a new enhanced fan-out subscription to a shard
 * is refused within 5 seconds of the last one).
 *
 * {{{
 *   val kept = LeftoverShardReader(reader, handedOut = lastGivenToSpark, rest, endsShard = false, lag, caughtUp)
 *   kept.position == lastGivenToSpark   // what the next task asks the cache for
 *   kept.next()                                  // `rest`, then what `reader` reads
 * }}}
 */
final class LeftoverShardReader private (
    val underlying: ShardReader,
    handedOut: ShardPosition,
    leftover: ShardReadBatch) extends ShardReader {
  private var pending: Option[ShardReadBatch] = Some(leftover)

  override def stream: String = underlying.stream
  override def shardId: String = underlying.shardId
  override def position: ShardPosition = if (pending.isDefined) handedOut else underlying.position
  override def ended: Boolean = pending.isEmpty && underlying.ended
  override def readyAt: Long = if (pending.isDefined) Long.MinValue else underlying.readyAt

  override def next(): ShardReadBatch = pending match {
    case Some(batch) => pending = None; batch
    case None        => underlying.next()
  }

  override def consumerArn: Option[String] = underlying.consumerArn
  override def roundStarted(atMillis: Long): Unit = underlying.roundStarted(atMillis)
  override def shardClosed(closed: Boolean): Unit = underlying.shardClosed(closed)
  override def consumerMissing: Boolean = underlying.consumerMissing
  override def wakeOn(signal: Option[ReadySignal]): Unit = underlying.wakeOn(signal)
  override def close(): Unit = underlying.close()
  override def counters: ShardCounters = underlying.counters
}

object LeftoverShardReader {
  /**
   * `reader` (itself, when nothing is left over), holding `leftover`: the records after `handedOut` it fetched, the
   * shard's end after them when `endsShard`.
   */
  def apply(reader: ShardReader, handedOut: ShardPosition, leftover: Seq[KinesisRecord], endsShard: Boolean,
      millisBehindLatest: Long, caughtUp: Boolean): ShardReader =
    if (leftover.isEmpty && !endsShard) reader
    else {
      val writer = new RecordBlockCodec.Writer(64 + leftover.map(r => 64 + r.data.length).sum,
        s"stream '${reader.stream}', ${reader.shardId}")
      leftover.foreach { r =>
        writer.add(r.partitionKey, r.data, r.sequenceNumber, r.subSequenceNumber.isDefined,
          r.subSequenceNumber.getOrElse(0L), r.approximateArrivalMillis)
      }
      // The bytes were counted against the shard's read limit when fetched: none now.
      val batch = ShardReadBatch(writer, millisBehindLatest, endsShard, 0L, caughtUp)
      val base = reader match {
        case kept: LeftoverShardReader => kept.underlying // its own leftover was handed out: this one is newer
        case other                     => other
      }
      new LeftoverShardReader(base, handedOut, batch)
    }
}
