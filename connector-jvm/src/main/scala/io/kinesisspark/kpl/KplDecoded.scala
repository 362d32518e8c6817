package io.kinesisspark.kpl

/**
 * What [[KplAggregate.decode]] made of one Kinesis record's data.
 *
 * {{{
 *   KplAggregate.decode(bytes) match {
 *     case KplDecoded.Aggregated(records) => records.zipWithIndex  // index = sub-sequence number
 *     case KplDecoded.NotAggregated       => // a plain record: use the data as it is
 *     case KplDecoded.Corrupt(reason)     => // starts like an aggregate but is not a valid one
 *   }
 * }}}
 */
sealed trait KplDecoded

object KplDecoded {
  /** The data does not start with the KPL magic bytes: a plain record. */
  case object NotAggregated extends KplDecoded

  /** A valid aggregate holding these user records, in order (at least one). */
  final case class Aggregated(records: IndexedSeq[UserRecord]) extends KplDecoded

  /** The data starts with the KPL magic bytes but is not a valid aggregate, for the reason given. */
  final case class Corrupt(reason: String) extends KplDecoded
}
