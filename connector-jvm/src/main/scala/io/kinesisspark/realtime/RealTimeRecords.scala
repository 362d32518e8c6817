package io.kinesisspark.realtime

import java.time.Clock

import io.kinesisspark.ShardPosition
import io.kinesisspark.ShardPosition.Finished
import io.kinesisspark.blocks.KinesisRecord
import io.kinesisspark.reader.{ShardPoller, ShardReader}

/**
 * A real-time task's records, one at a time, as its shards' readers give them: whichever reader may call soonest is
 * called ([[ShardPoller]]), and its batch is handed out record by record before any reader is called again. Each
 * shard's position moves with the records handed out, not with what its reader fetched, so the offset a task
 * reports when Spark ends it is exactly after the last record Spark got: nothing fetched and not handed out counts as
 * read. A shard whose end was fetched is `Finished` once its last record has been handed out.
 *
 * Resharding within the task's batch: when Spark asks for the next record after a shard's last one (so the task's
 * sink was handed every record of the parent), `childrenOf` is asked for readers of the shard's children that may be
 * read now, and they join the task's readers. Within the task, a key's records from a child therefore come after
 * those from its parent (across tasks the driver orders them, see [[BatchChildren]]).
 *
 * {{{
 *   val records = new RealTimeRecords(Seq(reader0, reader1), Clock.systemUTC())
 *   records.next(deadlineMillis) match {
 *     case Some((reader, record)) => // record of reader's shard, the next after its position
 *     case None                   => // nothing came before the deadline
 *   }
 *   records.progress  // every shard's position and counts, for the task's offset
 * }}}
 *
 * @param sleep      waits the given millis; replaced in tests, with the clock (by default the poller's own wait, which
 *                   a fan-out event ends early)
 * @param childrenOf readers of the children that may be read once the given reader's shard is finished (none by
 *                   default); asked once per finished shard
 */
final class RealTimeRecords(firstReaders: Seq[ShardReader], clock: Clock, sleep: Option[Long => Unit] = None,
    childrenOf: ShardReader => Seq[ShardReader] = _ => Nil) {
  private final class Shard(val reader: ShardReader) {
    var position: ShardPosition = reader.position
    var records = 0L
    var bytes = 0L
    var millisBehindLatest: Option[Long] = None
    var caughtUp = false
    var childrenAsked = false
    val countersAtStart = reader.counters
  }

  private val readers = scala.collection.mutable.ArrayBuffer(firstReaders: _*)
  private val shards = scala.collection.mutable.HashMap(firstReaders.map(r => r -> new Shard(r)): _*)
  private val poller = new ShardPoller(firstReaders, clock, sleep)
  private var pending: Iterator[KinesisRecord] = Iterator.empty
  private var pendingShard: Shard = _
  private var pendingEnds = false
  private var pendingLag = Long.MaxValue
  private var pendingCaughtUp = false

  /**
   * The next record of any shard, with its shard's reader; `None` once `deadlineMillis` (clock millis) passes with
   * nothing new, or when every shard has ended.
   */
  def next(deadlineMillis: Long): Option[(ShardReader, KinesisRecord)] = {
    while (!pending.hasNext) {
      if (pendingShard != null && pendingEnds) {
        pendingShard.position = Finished
        addChildren(pendingShard)
      }
      pendingShard = null
      poller.pollUntil(deadlineMillis) match {
        case None => return None
        case Some((reader, batch)) =>
          val shard = shards(reader)
          if (batch.millisBehindLatest != Long.MaxValue) shard.millisBehindLatest = Some(batch.millisBehindLatest)
          shard.caughtUp = batch.caughtUp
          pending = batch.records.iterator
          pendingShard = shard
          pendingEnds = batch.ended
          pendingLag = batch.millisBehindLatest
          pendingCaughtUp = batch.caughtUp
      }
    }
    val record = pending.next()
    pendingShard.position = record.position
    pendingShard.records += 1
    pendingShard.bytes += record.data.length
    // The shard's last record handed out: it is finished now, not only once another record is asked for.
    if (!pending.hasNext && pendingEnds) pendingShard.position = Finished
    Some(pendingShard.reader -> record)
  }

  private def addChildren(parent: Shard): Unit = if (!parent.childrenAsked) {
    parent.childrenAsked = true
    childrenOf(parent.reader).filterNot(shards.contains).foreach { child =>
      readers += child
      shards(child) = new Shard(child)
      poller.add(child)
    }
  }

  /**
   * The readers, to keep for the next task, once this one is over: a reader whose batch was not all handed out holds
   * the rest ([[LeftoverShardReader]]), so it stands where its shard's progress says. They no longer raise this
   * task's signal ([[ShardPoller.close]]). Called once, at the task's end.
   */
  def readersToKeep(): Seq[ShardReader] = {
    poller.close()
    readers.toSeq.map(keep)
  }

  private def keep(reader: ShardReader): ShardReader = {
    val s = shards(reader)
    if ((s eq pendingShard) && pending.hasNext) {
      LeftoverShardReader(reader, s.position, pending.toVector, pendingEnds, pendingLag, pendingCaughtUp)
    } else reader
  }

  /** Every shard's progress so far in this task, children that joined it included. */
  def progress: Seq[ShardProgress] = readers.toSeq.map { reader =>
    val s = shards(reader)
    ShardProgress(reader.stream, reader.shardId, s.position, s.records, s.bytes, s.millisBehindLatest, s.caughtUp,
      reader.counters - s.countersAtStart)
  }
}
