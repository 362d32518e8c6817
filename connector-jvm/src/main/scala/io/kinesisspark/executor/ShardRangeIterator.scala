package io.kinesisspark.executor

import java.nio.ByteBuffer

import org.apache.spark.kinesisspark.BlockStoreBridge
import org.slf4j.LoggerFactory

import io.kinesisspark.{DataLossPolicy, ShardPosition}
import io.kinesisspark.ShardPosition.{Finished, isAfter, isAtOrBefore, reaches}
import io.kinesisspark.aws.KinesisApi
import io.kinesisspark.blocks.{BlockRef, FetchedRange, KinesisRecord, RecordBlockCodec}
import io.kinesisspark.reader.FetchLimits
import io.kinesisspark.reader.polling.PollingShardReader

/**
 * The records of one shard in (`from`, `to`]: read from the prefetched blocks while they exist, and from
 * Kinesis from the first missing block on (an evicted block, a lost executor, a restarted driver). Because a
 * batch is fully described by (`from`, `to`], both paths return exactly the same records, so replays and
 * speculative tasks are harmless.
 *
 * What it returns is `output`'s: the records themselves ([[ShardRangeIterator.Records]]), or rows made straight
 * from the blocks' bytes (the partition reader's, a view of the block valid only until the next `hasNext`).
 *
 * @param ranges the buffered ranges covering (`from`, `to`] in order, or empty to read everything from Kinesis
 */
final class ShardRangeIterator[T](
    api: => KinesisApi,
    stream: String,
    shardId: String,
    from: ShardPosition,
    to: ShardPosition,
    ranges: Seq[FetchedRange],
    limits: FetchLimits,
    dataLoss: DataLossPolicy,
    output: ShardRangeIterator.Output[T]) extends Iterator[T] {

  require(to != ShardPosition.TrimHorizon && !to.isInstanceOf[ShardPosition.AtTimestamp], s"bad range end $to")

  private var pending: Iterator[T] = Iterator.empty
  private var rangesLeft = ranges.toList
  private var blocksUsable = true
  private var covered: ShardPosition = from // everything up to here has been handed to `pending`
  private var reader: PollingShardReader = _
  private var emptyReadsAtTip = 0
  private var finished = false
  private var lastBlock: Option[((Int, Long), Seq[ByteBuffer])] = None

  override def hasNext: Boolean = {
    while (!pending.hasNext && !finished) advance()
    pending.hasNext
  }

  override def next(): T = {
    if (!hasNext) throw new NoSuchElementException(s"no more records in $shardId up to $to")
    pending.next()
  }

  private def advance(): Unit = rangesLeft match {
    case range :: rest if blocksUsable =>
      if (range.records == 0) { covered = range.to; rangesLeft = rest }
      else range.block.flatMap(segmentOf) match {
        case Some(bytes) =>
          // Batches end between ranges, so a range usually lies wholly in (from, to]: its records need no checking
          // (comparing each record's position was 7 % of the read path's CPU in ReadPathBenchmark), and are
          // returned straight from the block.
          pending = if (reaches(range.from, from) && reaches(to, range.to)) RecordBlockCodec.read(bytes)(output.fromBlock)
            else RecordBlockCodec.decode(bytes).filter(r => isAfter(r.position, from) && isAtOrBefore(r.position, to))
            .map(output.fromRecord)
          covered = range.to
          rangesLeft = rest
        case None =>
          ShardRangeIterator.log.info(s"Prefetched block of $stream/$shardId after $covered is gone; re-reading " +
            s"up to $to from Kinesis")
          output.blockGone()
          blocksUsable = false
      }
    case _ if reaches(covered, to) => finished = true
    case _ => readFromKinesis()
  }

  /**
   * The range's segment of its block; `None` when the block is gone. The ranges of a shard's round share a block,
   * so the block last got is kept: one from another executor arrives whole, and is fetched once, not per range.
   */
  private def segmentOf(block: BlockRef): Option[ByteBuffer] = {
    val chunks = lastBlock.filter(_._1 == (block.streamId -> block.uniqueId)).map(_._2)
      .orElse(BlockStoreBridge.get(block.streamId, block.uniqueId).map { got => output.blockRead(got.local); got.chunks })
    lastBlock = chunks.map((block.streamId -> block.uniqueId) -> _)
    chunks.map(RecordBlockCodec.segment(_, block.offset, block.length))
  }

  private def readFromKinesis(): Unit = {
    if (reader == null) reader = new PollingShardReader(api, stream, shardId, covered, limits, dataLoss = dataLoss)
    val batch = reader.next()
    val (inRange, beyond) = batch.records.span(r => isAtOrBefore(r.position, to))
    pending = inRange.iterator.map(output.fromRecord)
    inRange.lastOption.foreach(r => covered = r.position)
    val reachedEnd = beyond.nonEmpty || reaches(covered, to) || (batch.ended && to == Finished)
    if (reachedEnd) {
      finished = true
    } else if (reader.streamDeleted) {
      finished = true // the reader reported it; what the stream held is gone
    } else if (batch.ended) {
      finished = true
      dataLoss.report(stream, shardId, s"the shard ended at $covered, before the batch end $to")
    } else if (batch.records.isEmpty && batch.caughtUp) {
      // At the tip without having reached a record we buffered before: give propagation a moment, then call it lost.
      emptyReadsAtTip += 1
      if (emptyReadsAtTip >= ShardRangeIterator.MaxEmptyReadsAtTip) {
        finished = true
        dataLoss.report(stream, shardId, s"records after $covered up to $to are no longer readable")
      }
    }
  }
}

object ShardRangeIterator {
  /** What a [[ShardRangeIterator]] makes of each record, whether read from Kinesis or from a block. */
  trait Output[T] {
    def fromRecord(record: KinesisRecord): T
    /** May return a view of `block`'s current record, valid until the iterator's next `hasNext`. */
    def fromBlock(block: RecordBlockCodec.Cursor): T
    /** A block was got, from this executor (`local`) or another one. */
    def blockRead(local: Boolean): Unit = ()
    /** A block was gone: the rest of the range is read from Kinesis. */
    def blockGone(): Unit = ()
  }

  /** The records themselves. */
  object Records extends Output[KinesisRecord] {
    def fromRecord(record: KinesisRecord): KinesisRecord = record
    def fromBlock(block: RecordBlockCodec.Cursor): KinesisRecord = block.record
  }

  private val log = LoggerFactory.getLogger(classOf[ShardRangeIterator[_]])
  private val MaxEmptyReadsAtTip = 10
}
