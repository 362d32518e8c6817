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
 * read. A shard whose end was fetched is `Finished` once its last record has been handed out; then `childrenOf` may
 * give readers of its children, which join the task's shards at once (a child's records come after all of its
 * parents', as each parent finished before the child's reader was made).
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
 * @param childrenOf given a shard just finished and the positions of the task's shards of its stream, readers of the
 *                   children the task may read now ([[ChildShards]])
 * @param sleep      waits the given millis; replaced in tests, with the clock
 */
final class RealTimeRecords(
    initial: Seq[ShardReader],
    clock: Clock,
    childrenOf: (ShardReader, Map[String, ShardPosition]) => Seq[ShardReader] = (_, _) => Nil,
    sleep: Long => Unit = ms => Thread.sleep(ms)) {
  private final class Shard(val reader: ShardReader) {
    var position: ShardPosition = reader.position
    var records = 0L
    var bytes = 0L
    var millisBehindLatest: Option[Long] = None
    var caughtUp = false
    val countersAtStart = reader.counters
  }

  private val readers = scala.collection.mutable.ArrayBuffer.empty[ShardReader]
  private val shards = scala.collection.mutable.HashMap.empty[ShardReader, Shard]
  private var poller: ShardPoller = _
  initial.foreach(add)

  private def add(reader: ShardReader): Unit = {
    readers += reader
    shards(reader) = new Shard(reader)
    poller = new ShardPoller(readers.toVector, clock, sleep)
  }

  /** Marks `shard` read to its end (once), and takes in the children its end lets the task read. */
  private def finish(shard: Shard): Unit = if (shard.position != Finished) {
    shard.position = Finished
    val positions = shards.values.filter(_.reader.stream == shard.reader.stream)
      .map(s => s.reader.shardId -> s.position).toMap
    childrenOf(shard.reader, positions).foreach(add)
  }
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
      if (pendingShard != null && pendingEnds) finish(pendingShard)
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
    if (!pending.hasNext && pendingEnds) finish(pendingShard)
    Some(pendingShard.reader -> record)
  }

  /**
   * The readers, to keep for the next task, once this one is over: a reader whose batch was not all handed out holds
   * the rest ([[LeftoverShardReader]]), so it stands where its shard's progress says. Called once, at the task's end.
   */
  def readersToKeep(): Seq[ShardReader] = readers.toVector.map { reader =>
    val s = shards(reader)
    if ((s eq pendingShard) && pending.hasNext) {
      LeftoverShardReader(reader, s.position, pending.toVector, pendingEnds, pendingLag, pendingCaughtUp)
    } else reader
  }

  /** Every shard's progress so far in this task. */
  def progress: Seq[ShardProgress] = readers.toVector.map { reader =>
    val s = shards(reader)
    ShardProgress(reader.stream, reader.shardId, s.position, s.records, s.bytes, s.millisBehindLatest, s.caughtUp,
      reader.counters - s.countersAtStart)
  }
}
