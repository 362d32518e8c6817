package io.kinesisspark.executor

import java.time.Clock

import scala.util.control.NonFatal

import org.apache.spark.kinesisspark.BlockStoreBridge
import org.slf4j.LoggerFactory

import io.kinesisspark.ShardPosition
import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.KinesisApi
import io.kinesisspark.blocks.{BlockRef, FetchedRange, RecordBlockCodec}
import io.kinesisspark.reader.{FetchLimits, ShardCounters, ShardReadBatch, ShardReader}

/**
 * Runs on an executor, in its [[FetchService]]: reads the shards of one prefetch task, interleaved (always the shard
 * whose reader may call soonest), until each is caught up with its tip, has ended, or has read `maxRoundBytes`, or
 * the round has run `maxRoundMillis`, or the task has read its share of the buffer's free room. What a shard returns
 * in a round (GetRecords responses or, with enhanced fan-out, subscription events) becomes one block in the local
 * BlockManager, each response a segment of it and a range of its own: storing a block reports it to the driver's
 * block manager master, one RPC, and a backlogged shard answers up to 50 calls a round. A shard stores its block
 * early once it holds [[BlockTargetBytes]], and a task its largest once all its shards hold [[TaskPendingBytes]], so
 * what a task holds outside Spark's memory manager stays bounded.
 *
 * An error does not escape: it is returned in a result ([[FetchFailure]]) and fails the query on the driver.
 */
object ShardFetcher {
  private val log = LoggerFactory.getLogger(getClass)
  /**
   * A shard's responses are stored once they hold this many encoded bytes (and at the end of its round). Larger
   * blocks mean fewer RPCs, but a batch that reads one range of a block held by another executor (or spilled to
   * disk) gets the whole block.
   */
  val BlockTargetBytes: Long = 4L * 1024 * 1024
  /** What a task holds unstored, over all its shards, at most (plus one response): past it, the largest is stored. */
  val TaskPendingBytes: Long = 16L * 1024 * 1024

  /** Thrown inside a fetch whose query stopped; [[fetch]] removes what it stored and returns nothing. */
  private final class Cancelled extends RuntimeException("prefetch cancelled", null, false, false)

  /**
   * Fetches `task`; nothing (and no block left behind) once `cancelled` says so. The blocks a result points at are
   * the caller's to remove if the driver refuses the result.
   *
   * @param attempt which dispatch of the task this is (block ids carry it, so two copies never store under one id)
   */
  def fetch(task: ShardFetchTask, api: KinesisApi, attempt: Int, cancelled: () => Boolean = () => false,
      clock: Clock = Clock.systemUTC()): Seq[ShardFetchResult] = {
    val stored = new java.util.concurrent.ConcurrentLinkedQueue[Long]()
    def removeStored(): Unit = {
      // Telling the master of a removal waits on an RPC, which an interrupted thread gives up at once: the block
      // would go but the master would keep listing it. Remove with the flag cleared, then restore it.
      val interrupted = Thread.interrupted()
      try stored.forEach(id => try BlockStoreBridge.removeLocal(task.streamId, id) catch { case NonFatal(_) => () })
      finally if (interrupted) Thread.currentThread().interrupt()
    }
    try read(task, api, clock, cancelled, attempt, stored)
    catch {
      case _: Cancelled | _: InterruptedException =>
        removeStored()
        log.debug(s"A prefetch of ${task.orders.size} shard(s) stopped: its query stopped")
        Nil
      case NonFatal(e) =>
        removeStored()
        failed(task, e)
    }
  }

  /** The result of a task that failed with `e`: the driver fails the query with it. */
  def failed(task: ShardFetchTask, e: Throwable): Seq[ShardFetchResult] = {
    val order = task.orders.head
    Seq(ShardFetchResult(order.stream, order.shardId, Nil, caughtUp = false, None, ShardCounters.Zero,
      BlockStoreBridge.location, failure = Some(FetchFailure.portable(e))))
  }

  private def read(task: ShardFetchTask, api: KinesisApi, clock: Clock, cancelled: () => Boolean, attempt: Int,
      stored: java.util.Queue[Long]): Seq[ShardFetchResult] = {
    val started = clock.millis()
    val states = task.orders.map { order =>
      new ShardState(order, ShardReaders.acquire(task, order, api, clock, started), task, attempt, stored)
    }
    try {
      val deadline = started + task.limits.maxRoundMillis
      var active = states
      // A shard whose next call may only come after the deadline (spacing, byte budget, throttling back-off)
      // waits for the next round instead of holding this one up.
      while (active.nonEmpty && active.exists(_.reader.readyAt < deadline) && states.map(_.bytesRead).sum < task.maxBytes) {
        // A stopped query's fetch ends at once instead of fetching on.
        if (cancelled()) throw new Cancelled
        val state = active.minBy(_.reader.readyAt)
        val batch = state.reader.next()
        state.record(batch)
        if (states.iterator.map(_.pendingBytes).sum > TaskPendingBytes) states.maxBy(_.pendingBytes).storePending()
        active = active.filterNot(_.done(task.limits))
      }
    } finally states.foreach(s => ShardReaderCache.release(task.streamId, s.reader))
    states.foreach(_.storePending())
    val location = BlockStoreBridge.location
    states.map(_.result(location))
  }

  /**
   * One shard's part of a task.
   *
   * @param stored where the ids of blocks stored go (so a failed task can remove them)
   */
  private final class ShardState(order: ShardFetchOrder, val reader: ShardReader, task: ShardFetchTask, attempt: Int,
      stored: java.util.Queue[Long]) {
    // The reader's counters run since it was made (it may come from the cache): the result reports this task's part.
    private val counters0 = reader.counters
    private val ranges = Vector.newBuilder[FetchedRange]
    private var position = order.from
    private var bytes = 0L
    private var caughtUp = false
    private var lag: Option[Long] = None
    private var blocks = 0
    private var pastCut = false
    // Responses read but not stored yet: a range and an encoded segment each, to be stored as one block.
    private val pending = scala.collection.mutable.ArrayBuffer.empty[(FetchedRange, java.nio.ByteBuffer)]
    private var unstored = 0L
    /** Encoded bytes read and not stored yet. */
    def pendingBytes: Long = unstored

    /** Adds what a call returned to the shard's ranges and pending block. */
    def record(batch: ShardReadBatch): Unit = {
      if (batch ne ShardReadBatch.Throttled) {
        caughtUp = batch.caughtUp
        lag = Some(batch.millisBehindLatest)
      }
      val to = if (batch.ended) Finished else reader.position
      batch.segment match {
        case None =>
          if (batch.ended) {
            storePending()
            ranges += FetchedRange(order.stream, order.shardId, position, Finished, None, 0, 0L)
            position = Finished
          }
        case Some(segment) if !straddlesCut(batch) =>
          add(segment, batch.count, batch.firstArrivalMillis, batch.lastArrivalMillis, to)
        case Some(_) =>
          // Records of a shard arrive in order: those up to the cut, then those after it, each a range of their own.
          // Only the one response that straddles Trigger.AvailableNow's target is decoded and encoded again.
          val (upToCut, afterCut) = batch.records.span(_.approximateArrivalMillis <= task.arrivalCut.get)
          Seq(upToCut -> upToCut.last.position, afterCut -> to).foreach { case (records, end) =>
            val segment = RecordBlockCodec.encode(records, s"stream '${order.stream}', ${order.shardId}")
            add(segment, records.size, records.head.approximateArrivalMillis, records.last.approximateArrivalMillis, end)
          }
      }
      if (task.arrivalCut.exists(cut => batch.count > 0 && batch.lastArrivalMillis > cut)) pastCut = true
    }

    /**
     * Whether the batch must be split at Trigger.AvailableNow's target: its first record arrived by then and a later
     * one after it (then the records up to the first of those, and the rest, are two ranges; both hold records).
     */
    private def straddlesCut(batch: ShardReadBatch): Boolean =
      task.arrivalCut.exists(cut => batch.firstArrivalMillis <= cut && cut < batch.maxArrivalMillis)

    /**
     * Records of a response (after `position`, up to `to`, encoded as `segment`) as a range of their own, whose
     * segment waits to be stored. Ranges stay one per response: a batch takes whole ranges, so they are what
     * `maxRecordsPerTrigger` and the other read limits count in.
     */
    private def add(segment: java.nio.ByteBuffer, count: Int, firstArrivalMillis: Long, lastArrivalMillis: Long,
        to: ShardPosition): Unit = {
      // What the records take in the block is what the buffer holds of them (and one more pass over a response's
      // records, to estimate it from their fields, was 7 % of the fetch threads' CPU in ReadPathBenchmark).
      val recordBytes = segment.remaining().toLong
      pending += FetchedRange(order.stream, order.shardId, position, to, None, count, recordBytes, firstArrivalMillis,
        lastArrivalMillis) -> segment
      unstored += segment.remaining()
      bytes += recordBytes
      position = to
      if (unstored >= BlockTargetBytes) storePending()
    }

    /** Stores the pending segments as one block, each pending range pointing at its own. */
    def storePending(): Unit = if (pending.nonEmpty) {
      // Attempt and counter in the id: a retried task never reuses a block id holding other records.
      val uniqueId = (order.orderId << 24) | (attempt.toLong << 20) | blocks
      blocks += 1
      val location = BlockStoreBridge.put(task.streamId, uniqueId, pending.map(_._2).toSeq)
      location.foreach(_ => stored.add(uniqueId))
      var offset = 0
      pending.zipWithIndex.foreach { case ((range, segment), i) =>
        val length = segment.remaining()
        ranges += range.copy(block = location.map(BlockRef(task.streamId, uniqueId, _, offset, length, last = i == pending.size - 1)))
        offset += length
      }
      pending.clear()
      unstored = 0L
    }

    def bytesRead: Long = bytes

    def done(limits: FetchLimits): Boolean = reader.ended || caughtUp || pastCut || bytes >= limits.maxRoundBytes

    def result(location: String): ShardFetchResult = ShardFetchResult(
      order.stream, order.shardId, ranges.result(), caughtUp || reader.ended, lag, reader.counters - counters0,
      location, reader.consumerMissing)
  }
}
