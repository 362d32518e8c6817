package io.kinesisspark.switching

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.json4s._
import org.json4s.jackson.JsonMethods

import io.kinesisspark.KinesisErrors

/**
 * An awslabs connector query's checkpoint location, read for where that query stopped: the last batch Spark
 * committed (the highest number in `commits/`), and that batch's source offset in `offsets/<batchId>`, which holds
 * each shard's position at the batch's start. Spark's offset log files are a version line, the batch's metadata, then
 * one line per source; the awslabs offset is a JSON object of shard ids to positions beside
 * `"metadata": {"batchId", "streamName"}`.
 *
 * {{{
 *   val last = new AwslabsCheckpoint("s3a://bucket/checkpoints/orders", hadoopConf).lastCommitted("orders")
 *   last.batchId      // 41
 *   last.sourceIndex  // 0: the default metadata path is <checkpointLocation>/sources/0
 * }}}
 */
final class AwslabsCheckpoint(location: String, hadoopConf: Configuration) {
  import AwslabsCheckpoint._

  private val root = new Path(location)

  /** The last committed batch of the query's source that reads `stream`. */
  def lastCommitted(stream: String): LastBatch = {
    val commits = new Path(root, "commits")
    val fs = commits.getFileSystem(hadoopConf)
    if (!fs.exists(root)) throw KinesisErrors.awslabsCheckpointNotFound(location)
    val batches = try fs.listStatus(commits).toSeq.flatMap(f => Try(f.getPath.getName.toLong).toOption)
      catch { case _: FileNotFoundException => Nil }
    val batchId = batches.maxOption.getOrElse(throw KinesisErrors.awslabsNothingCommitted(location))
    val offsets = new Path(root, s"offsets/$batchId")
    val lines = try {
      val in = fs.open(offsets)
      try new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n").toSeq finally in.close()
    } catch { case _: FileNotFoundException => throw KinesisErrors.awslabsNoOffsets(location, batchId) }
    // Line 0 is the log's version, line 1 the batch's metadata; then one offset per source, in the query's order.
    val sources = lines.drop(2).zipWithIndex.flatMap { case (line, index) =>
      JsonMethods.parseOpt(line) match {
        case Some(JObject(fields)) =>
          val map = fields.toMap
          map.get("metadata") match {
            case Some(JObject(meta)) => meta.toMap.get("streamName").collect { case JString(s) =>
              Source(index, s, map - "metadata")
            }
            case _ => None
          }
        case _ => None
      }
    }
    val ours = sources.filter(_.stream == stream)
    ours match {
      case Seq(source) =>
        val starts = source.shards.toSeq.map {
          case (shardId, JObject(fields)) =>
            AwslabsPosition.fromFields(fields.toMap + ("shardId" -> JString(shardId)), s"$offsets ($shardId)")
          case (shardId, _) => throw KinesisErrors.notAnAwslabsCheckpoint(s"$offsets ($shardId)", "it is not a JSON object")
        }
        LastBatch(batchId, source.index, starts.sortBy(_.shardId))
      case Seq() => throw KinesisErrors.awslabsNoSourceOf(location, batchId, stream, sources.map(_.stream))
      case _     => throw KinesisErrors.awslabsSeveralSourcesOf(location, batchId, stream)
    }
  }

  /** The source's own checkpoint folder: the awslabs connector's default metadata path. */
  def sourcePath(sourceIndex: Int): String = new Path(root, s"sources/$sourceIndex").toString
}

object AwslabsCheckpoint {
  private final case class Source(index: Int, stream: String, shards: Map[String, JValue])

  /**
   * @param batchId     the last batch Spark committed
   * @param sourceIndex the awslabs source's place among the query's sources (its checkpoint folder `sources/<n>`)
   * @param starts      each shard's position at that batch's start (its source offset)
   */
  final case class LastBatch(batchId: Long, sourceIndex: Int, starts: Seq[AwslabsPosition])

  /**
   * Each shard's position after batch `last`: where the batch left it ([[AwslabsShardLog]]), or, for a shard the
   * batch did not read, where the batch started it, as the awslabs connector itself resumes.
   */
  def positionsAfter(last: LastBatch, log: AwslabsShardLog, location: String): Seq[AwslabsPosition] = {
    val ends = log.positions(last.batchId)
    if (ends.isEmpty) throw KinesisErrors.awslabsNoShardPositions(location, log.name, last.batchId)
    val byId = ends.map(p => p.shardId -> p).toMap
    last.starts.map(s => byId.getOrElse(s.shardId, s))
  }
}
