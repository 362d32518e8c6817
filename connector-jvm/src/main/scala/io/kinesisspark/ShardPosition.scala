package io.kinesisspark

/**
 * Where reading of one shard continues. Offsets are made of these, one per shard.
 *
 * A record's place in a shard is its sequence number plus, for records produced with KPL aggregation, the index
 * of the user record inside the aggregate (its sub-sequence number): all sub-records share one sequence number,
 * and a batch may end in the middle of an aggregate.
 */
sealed trait ShardPosition

object ShardPosition {
  /** Nothing read yet; start at the oldest record in the shard. */
  case object TrimHorizon extends ShardPosition

  /** Nothing read yet; start at the first record that arrived at or after `epochMillis`. */
  final case class AtTimestamp(epochMillis: Long) extends ShardPosition

  /**
   * Everything up to and including this record has been read.
   *
   * @param subSequenceNumber `None` when the whole record with `sequenceNumber` has been read; `Some(i)` when
   *                          sub-records 0..i of an aggregated record have been read (more may follow).
   */
  final case class AfterRecord(sequenceNumber: String, subSequenceNumber: Option[Long] = None) extends ShardPosition

  /**
   * Reading from record `sequenceNumber` itself (AT_SEQUENCE_NUMBER), all of it: an aggregate's sub-records are
   * numbered from 0, so "after sub-record -1" is the whole record.
   */
  def atRecord(sequenceNumber: String): AfterRecord = AfterRecord(sequenceNumber, Some(-1L))

  /** The shard was read to its end (GetRecords returned no next iterator). Nothing more will ever come. */
  case object Finished extends ShardPosition

  /**
   * Order of record positions within one shard: by sequence number, then sub-sequence number, a whole record
   * (`None`) counting as its last sub-record.
   */
  def compareRecords(a: AfterRecord, b: AfterRecord): Int = {
    val bySequence = compareSequenceNumbers(a.sequenceNumber, b.sequenceNumber)
    if (bySequence != 0) bySequence
    else java.lang.Long.compare(lastSubRecord(a.subSequenceNumber), lastSubRecord(b.subSequenceNumber))
  }

  // Not getOrElse(Long.MaxValue): that boxes the default on every call.
  private def lastSubRecord(sub: Option[Long]): Long = if (sub.isEmpty) Long.MaxValue else sub.get

  /**
   * Two sequence numbers (decimal integers of up to 128 digits) in numeric order, without parsing them: leading zeros
   * aside, the one with more digits is larger, and numbers of as many digits compare digit by digit. Every record
   * read is compared with positions this way; parsing each number into a BigInt took over a third of the read
   * path's CPU (`ReadPathBenchmark`).
   */
  def compareSequenceNumbers(a: String, b: String): Int = {
    // As many digits and no leading zero (every sequence number Kinesis gives): String order is numeric order, and
    // String.compareTo is one vectorised intrinsic, where the loops below took a third of the driver's CPU per batch
    // at 1,000 shards (JFR of DriverScaleBenchmark: the buffer index compares every shard's positions each batch).
    if (a.length == b.length && a.nonEmpty && a.charAt(0) != '0' && b.charAt(0) != '0') return a.compareTo(b)
    var i = 0
    while (i < a.length - 1 && a.charAt(i) == '0') i += 1
    var j = 0
    while (j < b.length - 1 && b.charAt(j) == '0') j += 1
    val byLength = Integer.compare(a.length - i, b.length - j)
    if (byLength != 0) byLength
    else {
      while (i < a.length && a.charAt(i) == b.charAt(j)) { i += 1; j += 1 }
      if (i == a.length) 0 else Character.compare(a.charAt(i), b.charAt(j))
    }
  }

  /** Whether the record at `record` lies after `position` (a record is after every not-yet-read position). */
  def isAfter(record: AfterRecord, position: ShardPosition): Boolean = position match {
    case TrimHorizon | AtTimestamp(_) => true
    case p: AfterRecord               => compareRecords(record, p) > 0
    case Finished                     => false
  }

  /**
   * Whether reading has got at least as far as `b` when it is at `a` (both positions in the same shard).
   * The two not-yet-read starts (trim horizon, a timestamp) only reach themselves.
   */
  def reaches(a: ShardPosition, b: ShardPosition): Boolean = (a, b) match {
    case (Finished, _)                    => true
    case (_, Finished)                    => false
    case (x: AfterRecord, y: AfterRecord) => compareRecords(x, y) >= 0
    case (_: AfterRecord, _)              => true
    case (x, y)                           => x == y
  }

  /** Whether the record at `record` lies at or before `position`. */
  def isAtOrBefore(record: AfterRecord, position: ShardPosition): Boolean = !isAfter(record, position)
}
