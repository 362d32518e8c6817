package io.kinesisspark.switching

/**
 * What a KCL lease's `checkpoint` (with `checkpointSubSequenceNumber`) says of how far its application got in the
 * shard.
 *
 * {{{
 *   KclCheckpoint.Checkpointed("4959...", 2L)   // up to user record 2 of that record's KPL aggregate
 *   KclCheckpoint.NotYet("LATEST")             // the application's initial position: nothing checkpointed
 * }}}
 */
sealed trait KclCheckpoint

object KclCheckpoint {
  /**
   * Every user record up to and including user record `subSequenceNumber` of the record with `sequenceNumber` was
   * processed (KCL numbers a record that is not a KPL aggregate as user record 0).
   */
  final case class Checkpointed(sequenceNumber: String, subSequenceNumber: Long) extends KclCheckpoint

  /** The shard was processed to its end (`SHARD_END`). */
  case object ShardEnd extends KclCheckpoint

  /**
   * Nothing was checkpointed in the shard yet: the lease holds the application's initial position
   * (`TRIM_HORIZON`, `LATEST` or `AT_TIMESTAMP`), so how far it got is not recorded.
   */
  final case class NotYet(sentinel: String) extends KclCheckpoint

  /** The sentinels KCL writes in place of a sequence number (its `SentinelCheckpoint`). */
  val Sentinels: Set[String] = Set("TRIM_HORIZON", "LATEST", "AT_TIMESTAMP")
}
