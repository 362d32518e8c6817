package io.kinesisspark

import java.time.Instant

import io.kinesisspark.ShardPosition.Finished

/**
 * Brings a batch start (from Spark's offset log) in line with the streams as they are now, before the batch end
 * is planned. Everything that changes the set of shards an offset holds happens here, on the driver:
 *
 *  - streams added to `streamName` since the checkpoint: their shards enter the offset at their starting position;
 *  - streams removed from `streamName`: refused, unless `allowStreamRemoval` lets them leave the offset;
 *  - shards that appeared (resharding): they enter the offset at their starting position (TRIM_HORIZON);
 *  - finished shards no longer listed (aged out of the stream): they leave the offset; an unfinished one is data
 *    loss (its unread records expired);
 *  - finished shards whose children have all moved on ([[ShardGraph.movedOn]]): they leave the offset too, which
 *    would otherwise carry every shard closed by resharding for the stream's whole retention period; listed again
 *    (after a restart), such a shard starts `Finished` (the prefetcher tells from its descendants);
 *  - a stream deleted and created again under the same name (its creation time changed): data loss for everything
 *    the checkpoint still needed; the new stream's shards enter at TRIM_HORIZON.
 *
 * A shard that enters the offset contributes no records to the batch that brings it in (it is `fresh`); its
 * records come from the next batch on, whose start holds it. So a batch is always (start, end] for every shard
 * it reads, and replaying it from the offset log reads the same records.
 *
 * {{{
 *   val r = StartReconciler.reconcile(start, Seq("clicks"), prefetcher.listings, prefetcher.startingPosition,
 *     allowStreamRemoval = false)
 *   r.lost.foreach(l => DataLossPolicy(failOnDataLoss = true).report(l.stream, l.shard, l.what)) // fails the query
 *   BatchEndPlanner.plan(r.base, r.fresh, ...)
 * }}}
 */
object StartReconciler {

  /** One stream as last listed: its creation time and its shards. */
  final case class Listing(createdMillis: Long, graph: ShardGraph)

  /** Records the start still needed that are gone; the caller hands each to its [[DataLossPolicy]]. */
  final case class Loss(stream: String, shard: String, what: String)

  /**
   * @param base  the positions to plan the batch from (what is lost left out), with `created` for the end offset
   * @param fresh shards that enter the offset with this batch and contribute no records to it
   * @param lost  what the start still needed that is gone
   */
  final case class Reconciled(base: KinesisSourceOffset, fresh: Set[(String, String)], lost: Seq[Loss])

  /**
   * @param streams          the streams the query reads now (option `streamName`)
   * @param listings         the streams as last listed; a stream not listed yet keeps the start's positions
   * @param startingPosition where reading of a shard the start does not hold begins (the prefetcher's choice:
   *                         the initial position for shards of a newly added stream, else TRIM_HORIZON)
   */
  def reconcile(
      start: KinesisSourceOffset,
      streams: Seq[String],
      listings: Map[String, Listing],
      startingPosition: (String, String) => Option[ShardPosition],
      allowStreamRemoval: Boolean): Reconciled = {

    val removed = start.streams.keySet.diff(streams.toSet)
    if (removed.nonEmpty && !allowStreamRemoval) throw KinesisErrors.streamsRemoved(removed.toSeq.sorted, streams)

    val lost = Seq.newBuilder[Loss]
    val fresh = Set.newBuilder[(String, String)]
    def report(stream: String, shard: String, what: String): Unit = lost += Loss(stream, shard, what)

    val reconciled: Seq[(String, Map[String, ShardPosition], Option[Long])] = streams.map { stream =>
      val known = start.streams.getOrElse(stream, Map.empty)
      listings.get(stream) match {
        case None => (stream, known, start.created.get(stream))
        case Some(listing) =>
          val recreated = start.created.get(stream).exists(_ != listing.createdMillis)
          if (recreated) {
            report(stream, "every shard", s"the stream was deleted and created again (now created at " +
              s"${Instant.ofEpochMilli(listing.createdMillis)}, the checkpoint's at " +
              s"${Instant.ofEpochMilli(start.created(stream))}); records of the old stream not yet read are gone")
          }
          val graph = listing.graph
          val kept = if (recreated) Map.empty[String, ShardPosition] else known
          kept.foreach { case (shard, pos) =>
            if (!graph.lists(shard) && pos != Finished) {
              report(stream, shard, s"the shard is no longer in the stream (it expired by retention) and had been " +
                s"read only up to $pos")
            }
          }
          // Most plans find every shard of the start listed, and none entering or finished: the start's own map is
          // kept then, rather than built again shard by shard on every plan.
          val entering = graph.shards.iterator.map(_.shardId).filterNot(kept.contains)
            .flatMap(shard => startingPosition(stream, shard).map(shard -> _)).toVector
          val listedKept = if (kept.keysIterator.forall(graph.lists)) kept else kept.filter { case (s, _) => graph.lists(s) }
          val positions = if (entering.isEmpty) listedKept else listedKept ++ entering
          val held = if (!positions.valuesIterator.contains(Finished)) positions
            else positions.filterNot { case (shard, pos) => pos == Finished && graph.movedOn(shard, positions) }
          entering.foreach { case (shard, _) => if (held.contains(shard)) fresh += stream -> shard }
          (stream, held, Some(listing.createdMillis))
      }
    }
    val base = KinesisSourceOffset(
      reconciled.collect { case (stream, shards, _) if shards.nonEmpty => stream -> shards }.toMap,
      reconciled.collect { case (stream, _, Some(created)) => stream -> created }.toMap)
    Reconciled(base, fresh.result(), lost.result())
  }
}
