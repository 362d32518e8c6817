package io.kinesisspark.reader

import io.kinesisspark.ShardPosition

/**
 * One shard read forward from a position, a batch at a time: by polling
 * ([[io.kinesisspark.reader.polling.PollingShardReader]], one GetRecords call per batch) or by enhanced fan-out
 * ([[io.kinesisspark.reader.fanout.FanOutShardReader]], one subscription event per batch), the two side by side in
 * this package's `polling` and `fanout`. The prefetch task ([[io.kinesisspark.executor.ShardFetcher]]) drives either
 * the same way, and both leave the same positions behind, so a checkpoint written in one mode is read on in the other.
 *
 * {{{
 *   val reader: ShardReader =
 *     new PollingShardReader(api, "clicks", "shardId-000000000000", ShardPosition.TrimHorizon, limits)
 *   while (!reader.ended) { val batch = reader.next(); ... }
 * }}}
 */
trait ShardReader {
  def stream: String
  def shardId: String

  /** The last record returned, or the start position if none yet. */
  def position: ShardPosition

  /** Whether the shard is closed and fully read. */
  def ended: Boolean

  /** The earliest time (clock millis) [[next]] can give something; sources with the earliest go first. */
  def readyAt: Long

  /** The next batch after [[position]]; an empty batch when nothing came (throttled, or nothing new yet). */
  def next(): ShardReadBatch

  /** With enhanced fan-out, the consumer this source subscribes with; `None` when polling. */
  def consumerArn: Option[String] = None

  /**
   * A prefetch round begins at `atMillis`: a batch is caught up only on what was learnt from Kinesis since (a round
   * that started after Trigger.AvailableNow's start must have seen the shard's tip after it).
   */
  def roundStarted(atMillis: Long): Unit = ()

  /** What ListShards said last: whether the shard is closed (has an ending sequence number). */
  def shardClosed(closed: Boolean): Unit = ()

  /** Whether Kinesis answered that the consumer does not exist (deregistered, or gone with its stream). */
  def consumerMissing: Boolean = false

  /**
   * From now on, raise `signal` whenever this source can give something without waiting (`None`: stop). A source that
   * is pushed to (enhanced fan-out) then no longer waits inside [[next]] for an event: whoever polls many sources waits
   * on the signal instead, until the soonest [[readyAt]]. Sources that call Kinesis themselves (polling) ignore it:
   * their [[readyAt]] already says when they can give something.
   */
  def wakeOn(signal: Option[ReadySignal]): Unit = ()

  /** Releases what the source holds open (a subscription); it is not used afterwards. */
  def close(): Unit = ()

  /** What the source counted since it was made; the fetcher reports a task's part for metrics. */
  def counters: ShardCounters
}
