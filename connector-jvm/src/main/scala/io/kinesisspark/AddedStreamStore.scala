package io.kinesisspark

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.json4s._
import org.json4s.jackson.JsonMethods

/**
 * Keeps, in the query's checkpoint (`<checkpoint>/sources/<n>/kinesis-added-streams.json`), when each stream added to
 * `streamName` after the query's first start was added, and under which `initialPosition`: its shards start at that
 * position as of that time (`latest` is "at that time"), and a batch that read them from there is read again from
 * there.
 *
 * A micro-batch's offset log pins that start itself: the batch that brings a stream in is logged before it runs, its
 * end holding the stream's initial positions. A real-time batch is logged when it ends, its end already past the
 * records it read; its start does not hold the stream. Without the time, a restart before the batch was logged would
 * start a `latest` stream later than its first attempt did, and a replay of the logged batch (one not committed) would
 * not know where the stream's reading began.
 *
 * A stream the query no longer reads, and that the batch start no longer holds (its removal was accepted), is
 * forgotten: added again, it starts anew.
 *
 * {{{
 *   val added = new AddedStreamStore(checkpointLocation, hadoopConf, options.streams, options.initialPosition)
 *   added.addedAt("orders", now = clock.millis())   // kept: the same on every later call, and after a restart
 *   added.get("orders")                             // that time, while `initialPosition` is the one it was kept under
 *   added.forgetRemoved(start.streams.keySet)       // each batch: streams neither read nor held leave
 * }}}
 */
final class AddedStreamStore(checkpointLocation: String, hadoopConf: Configuration, streams: Seq[String],
    initialPosition: InitialPosition) {
  import AddedStreamStore.Added

  private val file = new CheckpointFile(checkpointLocation, "kinesis-added-streams.json", hadoopConf,
    "the times streams were added to the query's streamName")
  // What the file holds, once read (only this store writes it: one driver per query).
  private var kept: Option[Map[String, Added]] = None

  /** When `stream` was added: as kept, else `now`, kept from then on. */
  def addedAt(stream: String, now: Long): Long = synchronized {
    val known = load()
    known.get(stream).map(_.atMillis).getOrElse {
      write(known.updated(stream, Added(now, positionOf(stream))))
      now
    }
  }

  /**
   * When `stream` was added, if it was since the query's first start and under the `initialPosition` the query has
   * now: a time kept under another position says nothing of where the stream's reading began.
   */
  def get(stream: String): Option[Long] =
    synchronized(load().get(stream)).filter(_.initialPosition == positionOf(stream)).map(_.atMillis)

  /** Forgets the streams the query no longer reads that `held` (the batch start's streams) does not hold either. */
  def forgetRemoved(held: collection.Set[String]): Unit = synchronized {
    val known = load()
    val current = known.filter { case (stream, _) => streams.contains(stream) || held.contains(stream) }
    if (current.size != known.size) write(current)
  }

  private def positionOf(stream: String): String = initialPosition.json(Seq(stream))

  private def load(): Map[String, Added] = kept.getOrElse {
    val read = file.read().fold(Map.empty[String, Added]) { json =>
      try JsonMethods.parse(json) match {
        case JObject(fields) => fields.map {
          case (stream, JObject(entry)) =>
            (entry.toMap.get("at"), entry.toMap.get("initialPosition")) match {
              case (Some(JInt(ms)), Some(JString(position))) => stream -> Added(ms.toLong, position)
              case _ => throw new IllegalArgumentException(s"'$stream' has no time and position: ${JObject(entry)}")
            }
          case (stream, other) => throw new IllegalArgumentException(s"'$stream' holds $other")
        }.toMap
        case other => throw new IllegalArgumentException(s"not a JSON object: $other")
      } catch {
        case NonFatal(e) => throw new KinesisSparkException(s"Cannot read ${file.path} (${e.getMessage}): it holds " +
          "when streams were added to the query's streamName. Restore it from a backup of the checkpoint, or delete " +
          "it: streams added since the query's first start then start at their initial position as of the next start",
          e)
      }
    }
    kept = Some(read)
    read
  }

  // Where the file system cannot replace a file at once, a crash mid-write loses the times: those streams start anew.
  private def write(entries: Map[String, Added]): Unit = {
    file.replace(JsonMethods.compact(JObject(entries.toList.sortBy(_._1).map { case (stream, a) =>
      stream -> JObject("at" -> JInt(a.atMillis), "initialPosition" -> JString(a.initialPosition))
    })))
    kept = Some(entries)
  }
}

object AddedStreamStore {
  /** A stream's time of addition and the `initialPosition` (as the option's text for it) it started under then. */
  final case class Added(atMillis: Long, initialPosition: String)
}
