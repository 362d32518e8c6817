package io.kinesisspark.reader

import java.time.Clock

/**
 * Polls a set of shards synchronously, in the calling thread, until one of them gives records or ends, or a deadline
 * passes: the way a task that reads its shards itself (rather than from blocks a prefetch round stored) waits for
 * the next records. Readers of either mode go in; each keeps its own pacing (a polling reader's spacing, 5 calls per
 * second and throttling back-off; a fan-out reader's subscription), and the poller always calls the one that may call
 * soonest, as a prefetch task does.
 *
 * Between calls the poller waits until the soonest reader may call, or until a fan-out reader's subscription raises
 * the poller's [[ReadySignal]] with an event: fan-out readers are handed the signal ([[ShardReader.wakeOn]]), so none
 * of them waits inside its call for its own shard's event while another shard's event is queued.
 *
 * No call starts at or after the deadline: when the soonest reader may only call later and nothing arrives, the
 * poller waits until the deadline and returns nothing. A call already started is not cut short, so a poll can end
 * after its deadline by one call: a GetRecords call, which after throttling first waits out its back-off (a fan-out
 * reader makes one too, to confirm a closed shard's end). [[close]] takes the signal back from the readers, which
 * outlive the poller (a real-time task's readers are kept for the next task). [[add]] takes in a reader between polls
 * (a child shard a real-time task may read once its parent ended).
 *
 * {{{
 *   val poller = new ShardPoller(Seq(readerOfShard0, readerOfShard1), Clock.systemUTC())
 *   poller.pollUntil(clock.millis() + 500) match {
 *     case Some((reader, batch)) => // batch.records are reader's shard's next records (or batch.ended)
 *     case None                  => // nothing came within 500 ms
 *   }
 * }}}
 *
 * @param sleep waits the given millis; replaced in tests, with the clock. By default (`None`) the poller waits on its
 *              signal, which an event raises.
 */
final class ShardPoller(readers: Seq[ShardReader], clock: Clock, sleep: Option[Long => Unit] = None) {
  private val signal = new ReadySignal
  private val waitFor: Long => Unit = sleep.getOrElse(ms => signal.await(ms))
  readers.foreach(_.wakeOn(Some(signal)))

  private val all = scala.collection.mutable.ArrayBuffer(readers: _*)
  // Readers ready alike (fan-out readers with events queued are all ready at Long.MinValue) are called in turn,
  // starting after the one called last: a shard whose queue never empties (catching up) does not starve the others.
  private var after = 0

  /**
   * Calls readers, soonest first, until one returns records or its shard's end, and returns that reader and its
   * batch; `None` once `deadlineMillis` (clock millis) is reached with nothing, or when every shard has ended.
   */
  def pollUntil(deadlineMillis: Long): Option[(ShardReader, ShardReadBatch)] = {
    var found: Option[(ShardReader, ShardReadBatch)] = None
    var i = soonest()
    while (found.isEmpty && i >= 0 && clock.millis() < deadlineMillis) {
      val reader = all(i)
      // Compared before subtracting: a reader that never called is ready at Long.MinValue, and that less the clock
      // would overflow into a wait of centuries.
      val until = math.min(reader.readyAt, deadlineMillis)
      val now = clock.millis() // read once: a clock that moved between the check and the wait could make it negative
      if (until > now) waitFor(until - now) // then look again: an event may have made another reader the soonest
      else {
        val batch = reader.next()
        after = i + 1
        if (batch.count > 0 || batch.ended) found = Some(reader -> batch)
      }
      if (found.isEmpty) i = soonest()
    }
    found
  }

  /** The index of the open reader ready soonest, the first after the one called last among equals; -1 if none. */
  private def soonest(): Int = {
    var best = -1
    var bestAt = Long.MaxValue
    var k = 0
    while (k < all.size) {
      val i = (after + k) % all.size
      val reader = all(i)
      if (!reader.ended) {
        val at = reader.readyAt
        if (best < 0 || at < bestAt) { best = i; bestAt = at }
      }
      k += 1
    }
    best
  }

  /** Polls `reader` too from the next poll on. */
  def add(reader: ShardReader): Unit = {
    reader.wakeOn(Some(signal))
    all += reader
  }

  /** The readers stop raising this poller's signal: they go on to another poller, or are closed. */
  def close(): Unit = all.foreach(_.wakeOn(None))
}
