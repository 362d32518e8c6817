package io.kinesisspark.reader

import org.slf4j.LoggerFactory

import io.kinesisspark.{DataLossPolicy, ShardPosition}
import io.kinesisspark.ShardPosition.{AfterRecord, TrimHorizon}
import io.kinesisspark.aws.FetchedRecord

/**
 * Tells whether the record a reader resumes after is still in its shard, from the records Kinesis returns rather
 * than from the wording of an error.
 *
 * Why: an iterator for a sequence number that retention trimmed is not an error Kinesis documents (the
 * GetShardIterator API reference lists none for it, unlike DynamoDB Streams' TrimmedDataAccessException; for an
 * AT_TIMESTAMP older than the trim horizon it says "the iterator returned is for the oldest untrimmed data record
 * (TRIM_HORIZON)"), so a reader resuming AFTER a trimmed record would go on from the oldest record left, and the
 * records between would be lost without a word. A reader therefore asks for its iterator (or subscription) AT the
 * record it resumes after: the first record Kinesis returns must be that record. A higher sequence number means the
 * record is gone and records after it may have expired unread. An iterator Kinesis or an emulator refuses for the
 * sequence number is replaced by one at TRIM_HORIZON, judged the same way (records up to the position are skipped
 * as read, whatever the iterator).
 *
 * An empty response at the shard's tip means nothing from the record on is left: it is gone. Whether records came
 * after it is what the reader knew when it asked: a reader whose last response said more followed (it was full, or
 * behind the tip) has lost them, and that is reported; otherwise it is unknowable (a stream idle for longer than
 * its retention looks the same), so that case is [[Outcome.GoneNothingLeft]], logged without counting a loss.
 *
 * {{{
 *   val check = new ResumeCheck("clicks", "shardId-000000000000", DataLossPolicy(failOnDataLoss = true))
 *   val it = api.shardIterator(stream, shardId, check.iteratorPosition(position, recordsFollowed = false))
 *   val response = api.getRecords(stream, it, limit)
 *   check.lossReported(response.records, atTip = response.millisBehindLatest == 0L, position)  // fails after trimming
 * }}}
 *
 * @param beforeLoss called before a loss is reported: may throw instead (the stream was created again, say)
 */
final class ResumeCheck(stream: String, shardId: String, dataLoss: DataLossPolicy, beforeLoss: () => Unit = () => ()) {
  import ResumeCheck._

  private var expected: Option[AfterRecord] = None
  private var followed = false

  /** Whether the next records returned are still to be judged. */
  def pending: Boolean = expected.isDefined

  /**
   * The position to ask Kinesis for when reading on from `position`: AT the record it is after (checked from then
   * on), or `position` itself when nothing was read yet. `recordsFollowed`: the reader's last response said records
   * came after `position` (it was full, or behind the tip), so finding nothing left from the record on is a loss.
   */
  def iteratorPosition(position: ShardPosition, recordsFollowed: Boolean): ShardPosition = position match {
    case p: AfterRecord =>
      expected = Some(p)
      followed = recordsFollowed
      ShardPosition.atRecord(p.sequenceNumber)
    case other =>
      expected = None
      other
  }

  /** Kinesis refused the iterator AT the record: read from the oldest record left, and judge there. */
  def refused(): ShardPosition = TrimHorizon

  /**
   * Judges the records of a response; a loss goes to the data-loss policy (which may fail). Returns whether a loss
   * was reported, to be counted.
   */
  def lossReported(records: Seq[FetchedRecord], atTip: Boolean, position: ShardPosition): Boolean = {
    val judged = expected
    if (judged.isEmpty) false
    else judge(records, atTip) match {
      case Outcome.Gone(firstLeft) =>
        report(judged, s"the record at $position, where reading resumes, is no longer in the shard (the oldest " +
          s"record left after it is $firstLeft); records between them expired unread")
      case Outcome.GoneNothingLeft if followed =>
        report(judged, s"the record at $position, where reading resumes, is no longer in the shard and nothing " +
          "after it is left, though records followed it when it was last read; they expired unread")
      case Outcome.GoneNothingLeft =>
        log.warn(s"The record at $position of stream '$stream', $shardId, where reading resumes, is no longer in " +
          "the shard and nothing after it is left (retention trimmed it). If records were put after it while the " +
          "query was stopped for longer than the stream's retention period, they expired unread.")
        false
      case _ => false
    }
  }

  private def report(judged: Option[AfterRecord], what: String): Boolean = {
    // Judged again if this fails in passing (the caller reads the same response again): never lost unreported.
    try beforeLoss() catch { case e: Throwable => expected = judged; throw e }
    dataLoss.report(stream, shardId, what)
    true
  }

  /** Judges the first response after [[iteratorPosition]]; [[Outcome.Unknown]] while nothing has been returned. */
  def judge(records: Seq[FetchedRecord], atTip: Boolean): Outcome = expected match {
    case None => Outcome.Unknown
    case Some(p) =>
      records.headOption match {
        case Some(first) =>
          expected = None
          if (ShardPosition.compareSequenceNumbers(first.sequenceNumber, p.sequenceNumber) <= 0) Outcome.Present
          else Outcome.Gone(first.sequenceNumber)
        case None if atTip =>
          expected = None
          Outcome.GoneNothingLeft
        case None => Outcome.Unknown // Kinesis may answer empty before reaching the records: ask again
      }
  }
}

object ResumeCheck {
  private val log = LoggerFactory.getLogger(classOf[ResumeCheck])

  sealed trait Outcome

  object Outcome {
    /** Nothing returned yet (or nothing to check). */
    case object Unknown extends Outcome
    /** The record is there: nothing was lost. */
    case object Present extends Outcome
    /** The record is gone; the oldest record after it that is left is `firstLeft`: those between may be lost. */
    final case class Gone(firstLeft: String) extends Outcome
    /** The record is gone and nothing after it is left. */
    case object GoneNothingLeft extends Outcome
  }
}
