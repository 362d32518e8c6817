package io.kinesisspark.switching

import io.kinesisspark.{InitialPosition, KinesisErrors}
import io.kinesisspark.InitialPosition.{AfterSequenceNumber, ShardEnd, TrimHorizon}
import io.kinesisspark.aws.ShardInfo
import io.kinesisspark.switching.KclCheckpoint.{Checkpointed, NotYet}

/**
 * Where each shard of a stream starts so that a query continues where a KCL application stopped, from the leases
 * of its lease table: the per-shard start (option `initialPosition`'s JSON form) and what the user should know of it.
 *
 * Each shard with a checkpoint starts just after it, inside a KPL aggregate where the application stopped inside
 * one; a `SHARD_END` shard counts as read. A shard whose lease has no checkpoint yet (the application's initial
 * position, a sentinel) starts at its beginning: the application may have processed records it never checkpointed,
 * and no record that arrived after it started may be skipped, so those are read again. Every listed shard related
 * to a leased one is named too, so the start reads the same when printed and given back as `initialPosition`:
 * its descendants start at their beginning (they hold later records), its ancestors count as read (KCL processes a
 * child only after its parents, and a shard closed before the application started is not its to read). Shards
 * the application never saw start at `default`.
 *
 * {{{
 *   val plan = KclStart.plan("orders", "orders-app", leases, listed, InitialPosition.Latest, records, failOnDataLoss = true)
 *   plan.position.toString   // PerShard(Latest, Map((orders,shardId-000000000000) -> AfterSequenceNumber(4959..., None), ...))
 *   plan.notes               // what a user should read before relying on it: shards with no checkpoint, trimmed ones
 * }}}
 */
object KclStart {
  /** What a checkpointed record turned out to be, read from the stream (a KCL checkpoint alone does not say). */
  sealed trait RecordAt
  object RecordAt {
    /** The record is a KPL aggregate: the checkpoint's sub-sequence number is a user record in it. */
    case object Aggregate extends RecordAt
    /** A plain record: KCL numbers it user record 0, and the checkpoint means the whole record. */
    case object Plain extends RecordAt
    /** The record is no longer in the shard (retention trimmed it): what followed it up to the trim is lost. */
    case object Gone extends RecordAt
  }

  /**
   * @param stream         the stream the query reads
   * @param table          the lease table's name (for messages)
   * @param leases         every lease in the table
   * @param listed         the stream's shards, as ListShards gives them
   * @param default        where shards the application never saw start (a stream-wide position)
   * @param recordAt       reads what the record with a sequence number in a shard is; asked only for checkpoints at
   *                       user record 0, where a plain record and an aggregate's first user record look alike
   * @param failOnDataLoss whether a checkpoint retention has already trimmed fails the start (or starts that shard at
   *                       its beginning, with a note)
   */
  def plan(stream: String, table: String, leases: Seq[KclLease], listed: Seq[ShardInfo], default: InitialPosition,
      recordAt: (String, String) => RecordAt, failOnDataLoss: Boolean): StartPlan = {
    val ours = leasesOf(stream, table, leases)
    val byId = listed.map(s => s.shardId -> s).toMap
    val (present, absent) = ours.partition(l => byId.contains(l.shardId))
    if (present.isEmpty) {
      throw KinesisErrors.leasesOfAnotherStream(table, stream, ours.map(_.shardId), listed.map(_.shardId))
    }
    // A shard retention has removed since: one the application finished is of no account; in any other, the records
    // between its checkpoint and the shard's end are gone.
    val lost = absent.filter(_.checkpoint != KclCheckpoint.ShardEnd).map(_.shardId).sorted
    if (lost.nonEmpty && failOnDataLoss) throw KinesisErrors.leasedShardsGone(table, stream, lost)

    val notes = Seq.newBuilder[String]
    if (lost.nonEmpty) {
      notes += s"Shards ${lost.mkString(", ")} of lease table '$table' are no longer in stream '$stream' (retention " +
        "removed them): the records their application had not checkpointed there are lost (failOnDataLoss is false)."
    }
    val trimmed = Seq.newBuilder[String]
    val named: Map[String, InitialPosition] = present.map { lease =>
      val shard = byId(lease.shardId)
      lease.shardId -> (lease.checkpoint match {
        case KclCheckpoint.ShardEnd => ShardEnd
        case NotYet(_)              => TrimHorizon
        case Checkpointed(seq, sub) =>
          if (!shard.sequenceNumberRange.forall(_.contains(BigInt(seq)))) {
            throw KinesisErrors.checkpointOutsideShard(table, stream, lease.shardId, seq, shard.sequenceNumberRange.get)
          }
          if (sub > 0) AfterSequenceNumber(seq, Some(sub))
          else recordAt(lease.shardId, seq) match {
            case RecordAt.Aggregate => AfterSequenceNumber(seq, Some(0L))
            case RecordAt.Plain     => AfterSequenceNumber(seq)
            case RecordAt.Gone      =>
              if (failOnDataLoss) throw KinesisErrors.checkpointTrimmed(table, stream, lease.shardId, seq)
              trimmed += lease.shardId
              TrimHorizon
          }
      })
    }.toMap
    val notYet = present.collect { case l @ KclLease(_, _, _, NotYet(s), _, _) => s"${l.shardId} ($s)" }.sorted
    if (notYet.nonEmpty) {
      notes += s"Shards ${notYet.mkString(", ")} of lease table '$table' hold no checkpoint yet, only the " +
        "application's initial position: they start at trim_horizon, as the application may have processed records " +
        "there without checkpointing them, and none that arrived after it started may be skipped. Records it had " +
        "processed are read again."
    }
    val trimmedShards = trimmed.result().sorted
    if (trimmedShards.nonEmpty) {
      notes += s"The checkpoints of shards ${trimmedShards.mkString(", ")} in lease table '$table' were trimmed by " +
        "retention: those shards start at trim_horizon, and the records between each checkpoint and the trim are " +
        "lost (failOnDataLoss is false)."
    }
    // Children of leased shards retention has removed count too: they hold the records that came after.
    StartPlan.complete(stream, named, absent.map(_.shardId), listed, default, notes.result())
  }

  /**
   * The leases of `stream` in the table: every lease of a single-stream application's table (its keys name no
   * stream), or those whose key names `stream` in a multi-stream one's.
   */
  private def leasesOf(stream: String, table: String, leases: Seq[KclLease]): Seq[KclLease] = {
    if (leases.isEmpty) throw KinesisErrors.noLeases(table)
    val (multi, single) = leases.partition(_.stream.isDefined)
    if (multi.isEmpty) single
    else {
      val ours = multi.filter(_.stream.contains(stream))
      if (ours.isEmpty) throw KinesisErrors.leasesOfOtherStreams(table, stream, multi.flatMap(_.stream).distinct.sorted)
      // KCL keeps a deleted stream's leases: a stream created again under its name (or one of another account) has
      // its own creation epoch in the key, and which lease is the stream's cannot be told from the shard id alone.
      ours.groupBy(_.shardId).collectFirst { case (_, same) if same.size > 1 =>
        throw KinesisErrors.leasesOfSeveralStreams(table, stream, same.map(_.key).sorted)
      }
      ours
    }
  }
}
