package io.kinesisspark.fetch

import java.time.Clock


import software.amazon.awssdk.services.kinesis.model.ExpiredIteratorException

import io.kinesisspark.ShardPosition
import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.aws.KinesisApi

/**
 * Reads one shard forward from a position, one GetRecords call per [[next]], never faster than one call per
 * `minFetchPeriodMs`. Used both to prefetch and to re-read a range whose blocks are gone, so both see exactly the
 * same records.
 *
 * It keeps its own position, so an expired iterator is replaced from the last record read, and records at or
 * before the start position (sub-records of an aggregate already read) are skipped.
 *
 * {{{
 *   val reader = new ShardReader(api, "clicks", "shardId-000000000000", ShardPosition.TrimHorizon, limits)
 *   val batch = reader.next()  // batch.records, batch.millisBehindLatest; reader.ended after SHARD_END
 * }}}
 */
final class ShardReader(
    api: KinesisApi,
    val stream: String,
    val shardId: String,
    start: ShardPosition,
    limits: FetchLimits,
    clock: Clock = Clock.systemUTC(),
    sleep: Long => Unit = Thread.sleep) {

  require(start != Finished, s"shard $shardId is finished")

  private var iterator: Option[String] = None
  private var lastCallMillis = Long.MinValue
  private var _position: ShardPosition = start
  private var _ended = false

  /** The last record returned, or the start position if none yet. */
  def position: ShardPosition = _position

  /** Whether the shard is closed and fully read (GetRecords returned no next iterator). */
  def ended: Boolean = _ended

  /** One GetRecords call (after waiting out `minFetchPeriodMs`). */
  def next(): ShardReadBatch = {
    require(!_ended, s"shard $shardId of stream '$stream' was already read to its end")
    val wait = lastCallMillis + limits.minFetchPeriodMs - clock.millis()
    if (lastCallMillis != Long.MinValue && wait > 0) sleep(wait)
    lastCallMillis = clock.millis()

    val result =
      try api.getRecords(stream, currentIterator(), limits.maxRecordsPerFetch)
      catch {
        case _: ExpiredIteratorException =>
          iterator = None // iterators live 5 minutes; start a new one from where we are
          api.getRecords(stream, currentIterator(), limits.maxRecordsPerFetch)
      }
    val records = result.records.iterator
      .map(r => KinesisRecord(r.partitionKey, r.data, r.sequenceNumber, None, r.approximateArrivalMillis))
      .filter(r => ShardPosition.isAfter(r.position, _position))
      .toVector
    records.lastOption.foreach(r => _position = r.position)
    iterator = result.nextIterator
    _ended = result.nextIterator.isEmpty
    ShardReadBatch(records, result.millisBehindLatest, _ended)
  }

  private def currentIterator(): String = iterator.getOrElse {
    val it = api.shardIterator(stream, shardId, _position)
    iterator = Some(it)
    it
  }
}

/** What one GetRecords call gave: records after the reader's previous position, lag, and whether the shard ended. */
final case class ShardReadBatch(records: Vector[KinesisRecord], millisBehindLatest: Long, ended: Boolean) {
  def caughtUp: Boolean = ended || millisBehindLatest == 0L
}
