package io.kinesisspark.reader

import java.time.Clock

/**
 * Polls a set of shards synchronously, in the calling thread, until one of them gives records or ends, or a deadline
 * passes: the way a task that reads its shards itself (rather than from blocks a prefetch round stored) waits for
 * the next records. Readers of either mode go in; each keeps its own pacing (a polling reader's spacing, 5 calls per
 * second and throttling back-off; a fan-out reader's subscription), and the poller always calls the one that may call
 * soonest, as a prefetch task does.
 *
 * No call starts at or after the deadline: when the soonest reader may only call later, the poller sleeps until the
 * deadline and returns nothing. A call already started is not cut short, so a poll can end after its deadline by one
 * call (a GetRecords call, or a fan-out reader's wait for an event, at most its `pollWaitMs`).
 *
 * {{{
 *   val poller = new ShardPoller(Seq(readerOfShard0, readerOfShard1), Clock.systemUTC())
 *   poller.pollUntil(clock.millis() + 500) match {
 *     case Some((reader, batch)) => // batch.records are reader's shard's next records (or batch.ended)
 *     case None                  => // nothing came within 500 ms
 *   }
 * }}}
 *
 * @param sleep waits the given millis; replaced in tests, with the clock
 */
final class ShardPoller(readers: Seq[ShardReader], clock: Clock, sleep: Long => Unit = ms => Thread.sleep(ms)) {

  /**
   * Calls readers, soonest first, until one returns records or its shard's end, and returns that reader and its
   * batch; `None` once `deadlineMillis` (clock millis) is reached with nothing, or when every shard has ended.
   */
  def pollUntil(deadlineMillis: Long): Option[(ShardReader, ShardReadBatch)] = {
    var found: Option[(ShardReader, ShardReadBatch)] = None
    var open = readers.filterNot(_.ended)
    while (found.isEmpty && open.nonEmpty && clock.millis() < deadlineMillis) {
      val reader = open.minBy(_.readyAt)
      // Compared before subtracting: a reader that never called is ready at Long.MinValue, and that less the clock
      // would overflow into a wait of centuries.
      val until = math.min(reader.readyAt, deadlineMillis)
      val now = clock.millis() // read once: a clock that moved between the check and the sleep could make it negative
      if (until > now) sleep(until - now)
      if (reader.readyAt < deadlineMillis && clock.millis() < deadlineMillis) {
        val batch = reader.next()
        if (batch.count > 0 || batch.ended) found = Some(reader -> batch)
        open = open.filterNot(_.ended)
      }
    }
    found
  }
}
