package io.kinesisspark.reader

import java.time.Clock

import org.slf4j.LoggerFactory

import io.kinesisspark.ShardPosition
import io.kinesisspark.aws.{FetchedRecord, HashKeyRange}
import io.kinesisspark.kpl.{KplAggregate, KplDecoded}
import io.kinesisspark.blocks.RecordBlockCodec

/**
 * Turns the Kinesis records of one shard into the records the source returns, written into a block segment: a KPL
 * aggregate becomes its user records (sub-sequence numbers 0, 1, ...), anything else stays one record. Only records
 * after a position are written, so reading resumes inside an aggregate at the next user record.
 *
 * Nothing is dropped:
 *  - a user record whose hash key lies outside `hashKeyRange` is returned all the same (the aggregate was stored
 *    in this shard, so no other shard's reader will see it), counted in [[outOfRangeSubRecords]] and reported in
 *    a warning at most once a minute;
 *  - data that starts with the KPL magic bytes but is not a valid aggregate is returned once as it is, as a plain
 *    record, counted in [[corruptAggregates]] and logged with its sequence number (never its data).
 * Counters count returned records only, so re-reading the start of an aggregate to resume inside it adds nothing.
 *
 * {{{
 *   val deaggregator = new Deaggregator("clicks", "shardId-000000000000", Some(HashKeyRange(0, max)))
 *   val written = deaggregator.writerFor(response.records)
 *   val bytes = deaggregator.userRecords(response.records, after = reader.position, written)
 * }}}
 *
 * @param hashKeyRange the shard's hash keys; `None` skips the check (the same records are returned)
 */
final class Deaggregator(stream: String, shardId: String, hashKeyRange: Option[HashKeyRange], clock: Clock = Clock.systemUTC()) {

  import Deaggregator._

  /** User records returned whose hash key lies outside the shard's range, since this deaggregator was made. */
  var outOfRangeSubRecords = 0L
  /** Records returned raw because they looked like aggregates but were not valid ones. */
  var corruptAggregates = 0L

  /** The two counts above, as a part of the shard's reader's counters. */
  def counters: ShardCounters =
    ShardCounters(outOfRangeSubRecords = outOfRangeSubRecords, corruptAggregates = corruptAggregates)

  private var unreportedOutOfRange = 0L
  private var lastOutOfRangeWarning = Long.MinValue

  // Encoded bytes per Kinesis record of the responses so far: sizes the next response's writer, so that it is
  // allocated once and trimmed once, rather than doubled from a guess (records of 1 MB) or far too large (of 10 bytes).
  private var encodedBytesPerRecord = 192.0

  /** A writer for the user records of `fetched`, sized from the responses before it; see [[userRecords]]. */
  def writerFor(fetched: Seq[FetchedRecord]): RecordBlockCodec.Writer =
    new RecordBlockCodec.Writer(math.min(Int.MaxValue - 8L, 64L + (fetched.size * encodedBytesPerRecord * 1.1).toLong)
      .toInt, s"stream '$stream', $shardId")

  /**
   * Writes the records of `fetched` (in shard order) that lie after `after` to `out`, aggregates replaced by their
   * user records; returns the Kinesis records' data bytes, all of them (what the shard's read limits count). One pass
   * over the response: each record is touched once, while it is at hand (see [[RecordBlockCodec.Writer]]).
   */
  def userRecords(fetched: Seq[FetchedRecord], after: ShardPosition, out: RecordBlockCodec.Writer): Long = {
    val it = fetched.iterator
    // A Kinesis record wholly at or before the position need not be decoded: even its last user record is read.
    // A response's records are in sequence order, so once one lies after the position every later one does too:
    // comparing every record's sequence number was 9 % of the fetch threads' CPU in ReadPathBenchmark.
    var reached = false
    var bytes = 0L
    // A loop, not dropWhile and flatMap: their iterator and array per plain record were a tenth of the fetch
    // threads' allocation in ReadPathBenchmark.
    while (it.hasNext) {
      val r = it.next()
      bytes += r.data.length
      if (!reached) reached = ShardPosition.isAfter(ShardPosition.AfterRecord(r.sequenceNumber), after)
      if (reached) split(r, after, out)
    }
    reportOutOfRange()
    if (fetched.nonEmpty && out.count > 0) encodedBytesPerRecord = out.size.toDouble / fetched.size
    bytes
  }

  /** Writes the user records of `r` that lie after `after` to `out`. */
  private def split(r: FetchedRecord, after: ShardPosition, out: RecordBlockCodec.Writer): Unit =
    KplAggregate.decode(r.data) match {
      case KplDecoded.NotAggregated =>
        out.add(r.partitionKey, r.data, r.sequenceNumber, hasSub = false, 0L, r.approximateArrivalMillis)
      case KplDecoded.Corrupt(reason) =>
        corruptAggregates += 1
        log.warn(s"Kinesis record $shardId/${r.sequenceNumber} of stream '$stream' starts like a KPL aggregate but " +
          s"is not a valid one ($reason); returning it once as a plain record with its data unchanged")
        out.add(r.partitionKey, r.data, r.sequenceNumber, hasSub = false, 0L, r.approximateArrivalMillis)
      case KplDecoded.Aggregated(users) =>
        var i = 0L // the user record's index: its sub-sequence number
        users.foreach { u =>
          if (ShardPosition.isAfter(ShardPosition.AfterRecord(r.sequenceNumber, Some(i)), after)) {
            if (hashKeyRange.exists(range => !u.effectiveHashKey.exists(range.contains))) {
              outOfRangeSubRecords += 1
              unreportedOutOfRange += 1
            }
            out.add(u.partitionKey, u.data, r.sequenceNumber, hasSub = true, i, r.approximateArrivalMillis)
          }
          i += 1
        }
    }

  private def reportOutOfRange(): Unit = {
    val now = clock.millis()
    if (unreportedOutOfRange > 0 && (lastOutOfRangeWarning == Long.MinValue || now - lastOutOfRangeWarning >= WarningIntervalMs)) {
      log.warn(s"$unreportedOutOfRange KPL user record(s) in stream '$stream', $shardId have hash keys outside the " +
        s"shard's range ${hashKeyRange.mkString}; returning them anyway, as no other shard holds them " +
        s"($outOfRangeSubRecords so far; metric outOfRangeSubRecords)")
      unreportedOutOfRange = 0
      lastOutOfRangeWarning = now
    }
  }
}

object Deaggregator {
  private val log = LoggerFactory.getLogger(classOf[Deaggregator])
  /** Out-of-range user records are reported at most this often per shard reader. */
  val WarningIntervalMs = 60000L
}
