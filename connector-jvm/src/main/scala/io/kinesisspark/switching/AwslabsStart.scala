package io.kinesisspark.switching

import org.apache.hadoop.conf.Configuration
import org.slf4j.LoggerFactory

import io.kinesisspark.{InitialPosition, KinesisErrors, KinesisSourceOptions}
import io.kinesisspark.InitialPosition.{AfterSequenceNumber, AtSequenceNumber, AtTimestamp, ShardEnd, TrimHorizon}
import io.kinesisspark.aws.{DynamoDbAwslabsShardLog, KinesisApi, ShardInfo}
import io.kinesisspark.reader.TransientBackoff

/**
 * Where each shard of a stream starts so that a query continues where an awslabs connector query stopped: from its
 * positions after its last committed batch ([[AwslabsCheckpoint]]).
 *
 * How awslabs positions map to starts:
 *  - `AFTER_SEQUENCE_NUMBER`: just after the record; inside a KPL aggregate (a sub-sequence number that was not the
 *    aggregate's last), just after that user record. `AT_SEQUENCE_NUMBER`: at the record, or after the user record
 *    inside an aggregate (awslabs skips the user records up to it when it starts there).
 *  - `SHARD_END`: read to its end. `TRIM_HORIZON` and `AT_TIMESTAMP`: nothing read yet from there, so the same.
 *  - `LATEST`: nothing read yet. Where the offset log still holds the shard's AT_TIMESTAMP start (the awslabs
 *    default, LATEST, is that at the query's start), [[AwslabsCheckpoint.positionsAfter]] gives that instead;
 *    otherwise where "latest" was is not known: the shard starts at its beginning, so that no record that arrived
 *    after the old query started is skipped; records from before that are read too, and a note says so.
 * Shards related to those start as [[StartPlan.complete]] says; shards the old query never saw start at `default`.
 *
 * {{{
 *   val plan = AwslabsStart.plan("orders", "checkpoint s3://bucket/q1, batch 41", positions, listed, InitialPosition.Latest,
 *     failOnDataLoss = true)
 *   plan.position.shards   // Map((orders, shardId-000000000001) -> AfterSequenceNumber("4959...", Some(2)), ...)
 * }}}
 */
object AwslabsStart {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * The start a query with option `awslabsCheckpointLocation` makes at its first start, and the command line prints
   * ([[PrintStart]]): the old query's last committed batch, its positions after it, the stream's shards, the plan;
   * its notes logged as warnings.
   */
  def read(options: KinesisSourceOptions, awslabs: AwslabsCheckpointOptions, hadoopConf: Configuration,
      api: KinesisApi): StartPlan = {
    val stream = options.streams.head
    val checkpoint = new AwslabsCheckpoint(awslabs.checkpointLocation, hadoopConf)
    val last = checkpoint.lastCommitted(stream)
    val positions = awslabs.dynamoDb match {
      case Some((table, connection)) =>
        val shardLog = new DynamoDbAwslabsShardLog(table, connection)
        try AwslabsCheckpoint.positionsAfter(last, shardLog, awslabs.checkpointLocation) finally shardLog.close()
      case None =>
        val path = awslabs.metadataPath.getOrElse(checkpoint.sourcePath(last.sourceIndex))
        AwslabsCheckpoint.positionsAfter(last, new AwslabsShardFiles(path, hadoopConf), awslabs.checkpointLocation)
    }
    val listed = TransientBackoff.retrying(s"Listing the shards of '$stream'")(
      api.listShards(stream, options.maxShardsPerDescribe))
    val source =
      s"checkpoint '${awslabs.checkpointLocation}' (batch ${last.batchId}, awslabs batch ${last.sourceBatchId})"
    val start = plan(stream, source, positions, listed, options.initialPosition, options.failOnDataLoss)
    start.notes.foreach(log.warn)
    start
  }

  /**
   * @param stream         the stream the query reads
   * @param source         the checkpoint and batch the positions come from, for messages
   * @param positions      the old query's position in each shard after its last committed batch
   * @param listed         the stream's shards, as ListShards gives them
   * @param default        where shards the old query never saw start (a stream-wide position)
   * @param failOnDataLoss whether a position in a shard retention has removed fails the start (or is noted)
   */
  def plan(stream: String, source: String, positions: Seq[AwslabsPosition], listed: Seq[ShardInfo],
      default: InitialPosition, failOnDataLoss: Boolean): StartPlan = {
    val byId = listed.map(s => s.shardId -> s).toMap
    val (present, absent) = positions.partition(p => byId.contains(p.shardId))
    if (present.isEmpty && positions.nonEmpty) {
      throw KinesisErrors.awslabsShardsOfAnotherStream(source, stream, positions.map(_.shardId), listed.map(_.shardId))
    }
    val lost = absent.filter(_.iteratorType != AwslabsPosition.ShardEnd).map(_.shardId).sorted
    if (lost.nonEmpty && failOnDataLoss) throw KinesisErrors.awslabsShardsGone(source, stream, lost)

    val notes = Seq.newBuilder[String]
    if (lost.nonEmpty) {
      notes += s"Shards ${lost.mkString(", ")} of the awslabs $source are no longer in stream '$stream' (retention " +
        "removed them): the records the old query had not read there are lost (failOnDataLoss is false)."
    }
    val named: Map[String, InitialPosition] = present.map { p =>
      val range = byId(p.shardId).sequenceNumberRange
      def checked(seq: String): String = {
        if (!range.forall(_.contains(BigInt(seq)))) {
          throw KinesisErrors.awslabsPositionOutsideShard(source, stream, p.shardId, seq, range.get)
        }
        seq
      }
      p.shardId -> (p.iteratorType match {
        case AwslabsPosition.AfterSequenceNumber =>
          AfterSequenceNumber(checked(p.iteratorPosition), if (p.insideAggregate) Some(p.subSequenceNumber) else None)
        case AwslabsPosition.AtSequenceNumber =>
          if (p.subSequenceNumber < 0) AtSequenceNumber(checked(p.iteratorPosition))
          else AfterSequenceNumber(checked(p.iteratorPosition), if (p.isLast) None else Some(p.subSequenceNumber))
        case AwslabsPosition.ShardEnd    => ShardEnd
        case AwslabsPosition.TrimHorizon => TrimHorizon
        case AwslabsPosition.AtTimestamp => AtTimestamp(p.iteratorPosition.toLong)
        case _                           => TrimHorizon // LATEST, the one type left (fromFields admits no other)
      })
    }.toMap
    val latest = present.filter(_.iteratorType == AwslabsPosition.Latest).map(_.shardId).sorted
    if (latest.nonEmpty) {
      notes += s"Shards ${latest.mkString(", ")} of the awslabs $source had read nothing yet from LATEST, and where " +
        "LATEST was when that query started is not recorded: they start at trim_horizon, so that no record that " +
        "arrived after it started is skipped. Records from before it started are read too."
    }
    StartPlan.complete(stream, named, absent.map(_.shardId), listed, default, notes.result())
  }
}
