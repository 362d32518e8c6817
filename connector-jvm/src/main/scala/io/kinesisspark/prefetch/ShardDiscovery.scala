package io.kinesisspark.prefetch

import java.time.Clock

import scala.collection.mutable
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.kinesisspark.{BufferIndex, DataLossPolicy, KinesisErrors, KinesisSourceOffset, KinesisSourceOptions,
  ShardGraph, ShardListings, ShardPosition, StartReconciler, StreamNotFoundException, TestSettings}
import io.kinesisspark.ShardPosition.{Finished, TrimHorizon, reaches}
import io.kinesisspark.aws.{ErrorClassifier, KinesisApi, ShardInfo}
import io.kinesisspark.executor.ShardFetchOrder
import io.kinesisspark.blocks.BlockRef
import io.kinesisspark.efo.ConsumerRegistrar
import io.kinesisspark.reader.TransientBackoff

/**
 * The driver's shard discovery, and its book of where each shard's fetching starts when nothing is buffered for it.
 * The lister thread lists every `shardFetchInterval` (see [[refreshShards]]); batch starts add their shards
 * ([[addStart]]) and finished batches move starts forward ([[committed]]).
 *
 * It decides where fetching of a shard the batch start does not hold begins: the initial position for the
 * shards of a stream added to `streamName` (at their first listing), TRIM_HORIZON for shards that appear later
 * (resharding) and for every shard of a stream that was deleted and created again. Whether such changes are
 * acceptable (data loss) is decided by [[StartReconciler]], not here; a deleted stream is reported to the data-loss
 * policy once per deletion.
 *
 * Threads and locks: the lister thread runs [[listUntilStopped]]; the query thread calls [[knowsAll]], [[addStart]]
 * and [[committed]] (through the prefetcher) and reads [[starts]] and [[listings]]; the round thread plans and applies
 * its rounds under [[holding]]. `this` guards `graphs`, `created`, `retention`, `addedStreamAt`, `missingStreams` and
 * every write of `published` and `streamDataLossEvents`; the shard listings, the listing time and its back-off are the
 * lister thread's alone. Locks are taken in one order: this one, then the prefetcher's (through `forgetStream`), then
 * the buffer's. The consumer registrar's lock is never taken under this one.
 *
 * {{{
 *   val discovery = new ShardDiscovery(api, options, buffer, blocks => blocks.foreach(remove))
 *   discovery.addStart(start)                                // the shards a batch start holds
 *   new Thread(() => discovery.listUntilStopped(fail)).start()
 *   discovery.starts.get(("clicks", "shardId-000000000000"))  // where its fetching starts
 *   discovery.stop()
 * }}}
 *
 * @param buffer       what is prefetched: where fetching continues, dropped from as starts move or streams are
 *                     created again
 * @param removeBlocks removes the blocks of a stream created again, once dropped from the buffer
 * @param forgetStream called under this lock when a stream was deleted and created again, as its buffer is dropped:
 *                     the caller forgets what it knew of the old stream's shards (their statistics)
 * @param addedAt      when a stream the start does not hold was added, given the time now: the time the checkpoint
 *                     keeps for it ([[io.kinesisspark.AddedStreamStore]]), else now; called outside this lock (it
 *                     may read or write the checkpoint)
 */
private[kinesisspark] final class ShardDiscovery(
    api: KinesisApi,
    options: KinesisSourceOptions,
    buffer: BufferIndex,
    removeBlocks: Seq[BlockRef] => Unit,
    clock: Clock = Clock.systemUTC(),
    consumers: Option[ConsumerRegistrar] = None,
    forgetStream: String => Unit = _ => (),
    addedAt: (String, Long) => Long = (_, now) => now) {

  import ShardDiscovery._

  // Written under `this`; read without it. The listings and the starts as one immutable value in a volatile field, so
  // the query thread reads them (every shard's start in each plan) without waiting for the lock, which the lister
  // holds for tens of milliseconds at 10,000 shards: the query thread waited 50 to 100 ms at a time for it.
  @volatile private var published = View(ListedStreams(Map.empty, Map.empty, Map.empty), Map.empty)
  // Guarded by `this`.
  private val graphs = mutable.Map.empty[String, ShardGraph]
  private val created = mutable.Map.empty[String, Long]
  // Each stream's retention period as last described (orders carry it: see PollingShardReader's retention edge).
  private val retention = mutable.Map.empty[String, Long]
  // Streams the batch start did not hold (added to `streamName`): when they were added (their first listed shards
  // start at the initial position as of then).
  private val addedStreamAt = mutable.Map.empty[String, Long]
  private val missingStreams = mutable.Set.empty[String]
  @volatile private var streamDataLossEvents = 0L // written under `this`, read without it
  private val dataLoss = DataLossPolicy(options.failOnDataLoss)
  // The lister thread's alone.
  private val shardListings = new ShardListings
  private var lastListMillis = Long.MinValue
  private val listingBackoff = new TransientBackoff()
  @volatile private var stopped = false
  /** The start, starts and listing [[knowsAll]] last found the start known in (the query thread's, as `start`). */
  @volatile private var knownFrom: Option[(KinesisSourceOffset, Map[(String, String), ShardPosition], ListedStreams)] =
    None

  /** The listings as they stand now, from the maps under `this`. */
  private def listedNow: ListedStreams = ListedStreams(graphs.toMap, created.toMap, retention.toMap)

  /** Each stream as last listed (streams not listed yet are absent). */
  def listings: Map[String, StartReconciler.Listing] = published.listed.listings

  /** Each stream's graph and creation time as last listed, and its retention period as last described. */
  def listed: ListedStreams = published.listed

  /** Where fetching of every shard known began or continues from when nothing is buffered for it. */
  def starts: Map[(String, String), ShardPosition] = published.starts

  /** Data-loss events the driver saw (deleted streams). */
  def dataLossEvents: Long = streamDataLossEvents

  /**
   * Runs `f` on the view as it stands, with `this` held: no listing, start or commit changes the starts, or drops
   * from the buffer, until it returns. A round plans from one such view, and checks its results against the starts
   * and appends them to the buffer as one step (a listing that dropped a stream created again in between would
   * otherwise see the old stream's records appended after it).
   */
  def holding[T](f: View => T): T = synchronized(f(published))

  /**
   * Whether [[addStart]] would change nothing: checked without the lock, as the query thread calls it every plan and
   * the lister holds the lock for tens of milliseconds at 10,000 shards.
   */
  def knowsAll(start: KinesisSourceOffset): Boolean = {
    val view = published
    val (known, listed) = (view.starts, view.listed)
    // The same start, starts and listing as when it last held: it holds (Spark passes the same start on every
    // trigger until a batch has data, and walking 10,000 shards each time showed in profiles).
    if (knownFrom.exists { case (s, k, l) => (s eq start) && (k eq known) && (l eq listed) }) return true
    val holds = start.created.keys.forall(listed.created.contains) &&
      options.streams.forall(s => start.streams.contains(s) || listed.graphs.contains(s)) &&
      start.streams.forall { case (stream, shards) =>
        !options.streams.contains(stream) || shards.keys.forall(shard => known.contains((stream, shard)))
      }
    if (holds) knownFrom = Some((start, known, listed))
    holds
  }

  /**
   * Takes the shards of a batch start it does not know yet, with their positions and their streams' creation times,
   * and notes when each stream the start does not hold was added (its shards start at the initial position).
   */
  def addStart(start: KinesisSourceOffset): Unit = {
    // Asked outside the lock: the checkpoint's time of a stream new to the query may be read or written.
    val newStreams = options.streams.filterNot(start.streams.contains)
      .filterNot(s => synchronized(graphs.contains(s) || addedStreamAt.contains(s)))
      .map(s => s -> addedAt(s, clock.millis()))
    synchronized {
      val view = published
      val added = for ((stream, shards) <- start.streams if options.streams.contains(stream); (shard, pos) <- shards
                       if !view.starts.contains((stream, shard))) yield (stream, shard) -> pos
      start.created.foreach { case (stream, ms) => created.getOrElseUpdate(stream, ms) }
      val listed = if (start.created.keys.exists(s => !view.listed.created.contains(s))) listedNow else view.listed
      if (added.nonEmpty || (listed ne view.listed)) {
        published = View(listed, if (added.nonEmpty) view.starts ++ added else view.starts)
      }
      newStreams.foreach { case (stream, at) => if (!graphs.contains(stream)) addedStreamAt.getOrElseUpdate(stream, at) }
    }
  }

  /**
   * A batch through `end` has run: fetching continues from there for shards with nothing buffered, and the buffer
   * forgets what the batch read. A batch of a stream since deleted and created again (one replayed from the offset log
   * after a restart, planned before the listing that found the new stream) moves nothing of the new stream: its
   * positions belong to the old one, and would skip the new stream's records or drop them from the buffer. Returns
   * the blocks the buffer no longer needs and the bytes it no longer holds, for removal.
   */
  def committed(end: KinesisSourceOffset): (Seq[BlockRef], Long) = synchronized {
    val current = end.copy(streams = end.streams.filter { case (stream, _) =>
      end.created.get(stream).forall(c => created.get(stream).forall(_ == c))
    })
    // Only forwards: with asynchronous progress tracking Spark commits an older batch after the stream has already
    // released a later one (see KinesisMicroBatchStream.latestOffsetOf), and moving back would fetch again what
    // was read, or reopen a finished parent.
    val view = published
    val moved = for ((stream, shards) <- current.streams; (shard, pos) <- shards
                     if view.starts.get((stream, shard)).forall(reaches(pos, _))) yield (stream, shard) -> pos
    if (moved.nonEmpty) published = view.copy(starts = view.starts ++ moved)
    val held = buffer.bufferedBytes
    val dropped = buffer.dropThrough(current)
    (dropped, held - buffer.bufferedBytes)
  }

  /** Ends [[listUntilStopped]]; a listing under way ends at its next call (the caller interrupts the lister). */
  def stop(): Unit = synchronized {
    stopped = true
    notifyAll()
  }

  /**
   * The lister thread: lists every `shardFetchInterval` (sooner after a failure's back-off) until stopped. A failure
   * that is not the stop's doing is logged and handed to `onFailure` (the query fails with it).
   */
  def listUntilStopped(onFailure: Throwable => Unit): Unit =
    try {
      while (!stopped) {
        refreshShards()
        // Never back to back, whatever shardFetchInterval says: each listing is several control-plane calls.
        val dueInMs = math.max(MinListingGapMs, lastListMillis + options.shardFetchIntervalMs - clock.millis())
        synchronized(if (!stopped) wait(dueInMs))
      }
    } catch {
      case _: InterruptedException if stopped => ()
      case NonFatal(e) if stopped => log.debug("shard listing ended by stop", e)
      case NonFatal(e) =>
        log.error(s"Listing Kinesis shards failed: ${e.getMessage}", e)
        onFailure(e)
    }

  /**
   * Lists shards every `shardFetchInterval`, most times only those after the highest id known (see
   * [[ShardListings.listAfter]]), and describes a stream, for its creation time, when it is first listed or a full
   * listing shows it was created again (see [[ShardListings.needsDescribe]]), and for its retention period at least
   * once (a restarted query has the creation time from its start, not the retention period). Shards that
   * appear start at TRIM_HORIZON, or at the initial position when their stream was just added, or finished when
   * their children were read already (they had left the offset); what a listing must show before shards are
   * forgotten is [[ShardListings]]'s call; a stream whose creation time changed is fetched afresh from TRIM_HORIZON.
   *
   * @param force lists now, however recent the last listing (a real-time batch's finished shard whose children it
   *              does not show); still not while a failed listing's back-off runs
   */
  private[kinesisspark] def refreshShards(force: Boolean = false): Unit = {
    val due = lastListMillis == Long.MinValue || clock.millis() - lastListMillis >= options.shardFetchIntervalMs
    if (!due && !(force && listingBackoff.failuresInARow == 0)) return
    val listed =
      try options.streams.flatMap { s =>
        try {
          val knownCreated = synchronized(created.get(s))
          val listing = shardListings.listAfter(s).filter(_ => knownCreated.isDefined) match {
            case Some(lastShardId) => // only the shards a reshard added since
              shardListings.updateAfter(s, api.listShards(s, options.maxShardsPerDescribe, Some(lastShardId)))
                .map(graph => (knownCreated.get, graph))
            case None =>
              val shards = api.listShards(s, options.maxShardsPerDescribe)
              // The creation time tells a stream created again; ListShards shows when it must be asked for.
              // Described at least once per stream by this driver, for its retention period.
              val createdMillis = knownCreated.filterNot(_ => shardListings.needsDescribe(s, shards))
                .filter(_ => synchronized(retention.contains(s)))
                .getOrElse {
                  val summary = api.describeStream(s)
                  val retentionMillis = TestSettings.long(TestSettings.RetentionMs)
                    .getOrElse(summary.retentionHours * MillisPerHour)
                  synchronized(retention(s) = retentionMillis)
                  summary.createdMillis
                }
              shardListings.update(s, createdMillis, shards).map(graph => (createdMillis, graph))
          }
          listing match {
            case Right((createdMillis, graph)) => Some((s, createdMillis, graph))
            case Left(why) => log.warn(why); None
          }
        } catch { case e: StreamNotFoundException => streamMissing(s, e); None }
      } catch {
        // A stop interrupts the call under way (the SDK answers AbortedException): no failure, and nothing to retry.
        case NonFatal(e) if stopped && ErrorClassifier.isTransient(e) =>
          log.debug(s"Listing Kinesis shards ended by stop (${e.getClass.getSimpleName}: ${e.getMessage})")
          return
        // Kinesis unreachable for a while: keep reading the shards known, and list again after a back-off.
        case NonFatal(e) if ErrorClassifier.isTransient(e) =>
          val delayMs = listingBackoff.failed().getOrElse(throw KinesisErrors.unavailable(
            s"Listing the shards of ${options.streams.map(s => s"'$s'").mkString(", ")}", listingBackoff.budget + 1, e))
          log.warn(s"Listing Kinesis shards failed (${e.getClass.getSimpleName}: ${e.getMessage}); reading the shards " +
            s"known, listing again in about ${delayMs}ms (retry ${listingBackoff.failuresInARow} of ${listingBackoff.budget})")
          lastListMillis = clock.millis() - options.shardFetchIntervalMs + delayMs
          return
      }
    listingBackoff.succeeded()
    lastListMillis = clock.millis()
    val recreatedStreams = synchronized(listed.collect { case (s, ms, _) if created.get(s).exists(_ != ms) => s })
    // Outside this lock: the registrar's is held while a consumer is being registered.
    recreatedStreams.foreach(s => consumers.foreach(_.invalidate(s))) // the stream's consumers were deleted with it
    val dropped = synchronized {
      missingStreams --= listed.map(_._1)
      // The new starts are made aside and published with the listing, at once: the query thread reads both without
      // the lock, and a shard it sees listed must have its start (a finished parent's Finished, without which the
      // plan would read it again from TRIM_HORIZON), as a recreated stream's shards must not have their old ones.
      var starts = published.starts
      val blocks = listed.flatMap { case (stream, createdMillis, graph) =>
        val recreated = created.get(stream).exists(_ != createdMillis)
        val droppedBlocks = if (recreated) {
          log.warn(s"Kinesis stream '$stream' was deleted and created again; fetching its new shards from TRIM_HORIZON")
          starts = starts.filterNot(_._1._1 == stream)
          forgetStream(stream)
          buffer.dropStream(stream)
        } else Nil
        // Decided before this listing is recorded below: a stream listed before only gets new shards (resharding).
        val listedBefore = graphs.contains(stream) || recreated
        lazy val known = buffer.furthest(starts).collect { case ((s, shard), pos) if s == stream => shard -> pos }
        // A stream added to the query starts as the initial position says, per shard and for their relatives.
        lazy val addedStarts =
          addedStreamAt.get(stream).map(options.initialPosition.shardPositions(stream, graph.shards, _))
        def newShardStart(shardId: String): ShardPosition =
          // Listed again, or absent from the checkpoint because its children had moved on (StartReconciler).
          if (!recreated && graph.endedByDescendants(shardId, known)) Finished
          else if (listedBefore) TrimHorizon
          else addedStarts.fold[ShardPosition](TrimHorizon)(_(shardId))
        created(stream) = createdMillis
        graphs(stream) = graph
        // Most listings change nothing: the starts are made again only when a shard came or went (at 10,000 shards,
        // making them again on every listing was most of the lister's CPU).
        if (starts.keysIterator.exists { case (s, shard) => s == stream && !graph.lists(shard) })
          starts = starts.filterNot { case ((s, shard), _) => s == stream && !graph.lists(shard) }
        val added = graph.shards.filterNot(s => starts.contains((stream, s.shardId)))
        if (added.nonEmpty) starts = starts ++ added.map(s => (stream, s.shardId) -> newShardStart(s.shardId))
        droppedBlocks
      }
      published = View(listedNow, starts)
      blocks
    }
    if (dropped.nonEmpty) removeBlocks(dropped)
  }

  /**
   * A stream the query reads was deleted. Nothing of it is fetched until it exists again (as a new stream,
   * read from TRIM_HORIZON). Whether that is acceptable is the data-loss policy's call, made once per deletion.
   */
  private def streamMissing(stream: String, e: StreamNotFoundException): Unit = {
    val first = synchronized {
      graphs.remove(stream)
      published = published.copy(listed = listedNow)
      shardListings.forget(stream)
      missingStreams.add(stream)
    }
    if (first) {
      dataLoss.report(stream, "every shard", s"the stream was deleted while the query read it (${e.getMessage}); " +
        "records not yet read are gone")
      synchronized(streamDataLossEvents += 1)
    }
  }
}

private[kinesisspark] object ShardDiscovery {
  private val log = LoggerFactory.getLogger(classOf[ShardDiscovery])
  private val MinListingGapMs = 100L
  private val MillisPerHour = 3600L * 1000

  /**
   * Each stream's shard graph and creation time, as one immutable value, and its retention period in milliseconds
   * as last described (published with the listing that described it; fetch orders carry it).
   *
   * {{{
   *   discovery.listed.graphs.get("clicks").map(_.readable(positions))
   * }}}
   */
  final case class ListedStreams(graphs: Map[String, ShardGraph], created: Map[String, Long],
      retention: Map[String, Long]) {
    /** As [[ShardDiscovery.listings]] gives them: one map per listing, so a plan can tell nothing was listed since. */
    lazy val listings: Map[String, StartReconciler.Listing] =
      graphs.map { case (s, graph) => s -> StartReconciler.Listing(created(s), graph) }

    /** An order to fetch `shard` of `stream` from `from`, carrying what this listing knows of the shard and stream. */
    def order(stream: String, shard: ShardInfo, from: ShardPosition, orderId: Long,
        consumerArn: Option[String]): ShardFetchOrder =
      ShardFetchOrder(stream, shard.shardId, from, orderId, created.get(stream), shard.hashKeyRange, consumerArn,
        shard.closed, retention.get(stream))
  }

  /**
   * What discovery last published: the listings, and where each known shard's fetching starts. A shard listed here
   * has its start here (see [[ShardDiscovery.refreshShards]]).
   *
   * {{{
   *   discovery.holding(view => view.starts.get(("clicks", "shardId-000000000000")))
   * }}}
   */
  final case class View(listed: ListedStreams, starts: Map[(String, String), ShardPosition])
}
