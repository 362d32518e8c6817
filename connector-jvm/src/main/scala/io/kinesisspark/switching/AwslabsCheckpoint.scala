package io.kinesisspark.switching

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets

import scala.collection.compat._
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
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
    val fs = root.getFileSystem(hadoopConf)
    if (!fs.exists(root)) throw KinesisErrors.awslabsCheckpointNotFound(location)
    val batchId = numbered(fs, "commits").maxOption.getOrElse(throw KinesisErrors.awslabsNothingCommitted(location))
    val offsets = new Path(root, s"offsets/$batchId")
    val sources = try awslabsSources(fs, offsets)
      catch { case _: FileNotFoundException => throw KinesisErrors.awslabsNoOffsets(location, batchId) }
    sources.filter(_.stream == stream) match {
      case Seq(source) =>
        // The awslabs connector numbers its own batches (its offset's metadata.batchId) and files its shard
        // positions under that number: a Spark batch in which its offset did not move does not count one.
        val sourceBatchId = source.batchId.getOrElse(throw KinesisErrors.notAnAwslabsCheckpoint(
          s"$offsets (source ${source.index})", "its metadata has no batchId"))
        LastBatch(batchId, sourceBatchId, source.index, positions(source, offsets), startedAt(fs, source.index, stream))
      case Seq() => throw KinesisErrors.awslabsNoSourceOf(location, batchId, stream, sources.map(_.stream))
      case _     => throw KinesisErrors.awslabsSeveralSourcesOf(location, batchId, stream)
    }
  }

  /** The numbers of the files in a folder of the checkpoint (Spark's logs: `.crc` and temporary files are not). */
  private def numbered(fs: FileSystem, folder: String): Seq[Long] =
    try fs.listStatus(new Path(root, folder)).toSeq.flatMap(f => Try(f.getPath.getName.toLong).toOption)
    catch { case _: FileNotFoundException => Nil }

  /** The awslabs sources' offsets in one file of Spark's offset log. */
  private def awslabsSources(fs: FileSystem, offsets: Path): Seq[Source] = {
    val in = fs.open(offsets)
    val lines = try new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n").toSeq finally in.close()
    // Line 0 is the log's version, line 1 the batch's metadata; then one offset per source, in the query's order.
    lines.drop(2).zipWithIndex.flatMap { case (line, index) =>
      JsonMethods.parseOpt(line) match {
        case Some(JObject(fields)) =>
          val map = fields.toMap
          map.get("metadata") match {
            case Some(JObject(meta)) =>
              val metadata = meta.toMap
              metadata.get("streamName").collect { case JString(s) =>
                val batch = metadata.get("batchId").collect { case JString(b) if Try(b.toLong).isSuccess => b.toLong }
                Source(index, s, batch, map - "metadata")
              }
            case _ => None
          }
        case _ => None
      }
    }
  }

  private def positions(source: Source, offsets: Path): Seq[AwslabsPosition] =
    source.shards.toSeq.map {
      case (shardId, JObject(fields)) =>
        AwslabsPosition.fromFields(fields.toMap + ("shardId" -> JString(shardId)), s"$offsets ($shardId)")
      case (shardId, _) => throw KinesisErrors.notAnAwslabsCheckpoint(s"$offsets ($shardId)", "it is not a JSON object")
    }.sortBy(_.shardId)

  /**
   * Each shard's AT_TIMESTAMP start in any batch the offset log still holds: where the old query started a shard
   * it then read nothing of (the awslabs connector turns its default, LATEST, into AT_TIMESTAMP at the query's
   * start, and writes such a shard back as LATEST once a batch has read nothing there).
   */
  private def startedAt(fs: FileSystem, sourceIndex: Int, stream: String): Map[String, Long] =
    numbered(fs, "offsets").sorted.flatMap { batch =>
      val offsets = new Path(root, s"offsets/$batch")
      // A file Spark removed meanwhile (it keeps the last batches only) holds nothing; any other failure to read
      // one fails the start, rather than the shard falling back to trim_horizon as if nothing were recorded.
      val sources = try awslabsSources(fs, offsets) catch { case _: FileNotFoundException => Nil }
      // The same source, reading the same stream (awslabs keeps a checkpoint whose streamName changed).
      sources.filter(s => s.index == sourceIndex && s.stream == stream).flatMap(positions(_, offsets))
        .collect { case p if p.iteratorType == AwslabsPosition.AtTimestamp => p.shardId -> p.iteratorPosition.toLong }
    }.toMap

  /** The source's own checkpoint folder: the awslabs connector's default metadata path. */
  def sourcePath(sourceIndex: Int): String = new Path(root, s"sources/$sourceIndex").toString
}

object AwslabsCheckpoint {
  private final case class Source(index: Int, stream: String, batchId: Option[Long], shards: Map[String, JValue])

  /**
   * @param batchId       the last batch Spark committed
   * @param sourceBatchId the awslabs connector's own number of that batch (its offset's `metadata.batchId`)
   * @param sourceIndex   the awslabs source's place among the query's sources (its checkpoint folder `sources/<n>`)
   * @param starts        each shard's position at that batch's start (its source offset)
   * @param startedAt     each shard's AT_TIMESTAMP start, in epoch milliseconds, where an earlier batch holds one
   */
  final case class LastBatch(batchId: Long, sourceBatchId: Long, sourceIndex: Int, starts: Seq[AwslabsPosition],
      startedAt: Map[String, Long] = Map.empty)

  /**
   * Each shard's position after batch `last`: where the batch left it ([[AwslabsShardLog]]), or, for a shard the
   * batch did not read, where the batch started it, as the awslabs connector itself resumes. A shard left at LATEST
   * (read nothing since an AT_TIMESTAMP start) is at that timestamp still.
   */
  def positionsAfter(last: LastBatch, log: AwslabsShardLog, location: String): Seq[AwslabsPosition] = {
    val ends = log.positions(last.sourceBatchId)
    if (ends.isEmpty) throw KinesisErrors.awslabsNoShardPositions(location, log.name, last.sourceBatchId)
    val byId = ends.map(p => p.shardId -> p).toMap
    last.starts.map(s => byId.getOrElse(s.shardId, s)).map {
      case p if p.iteratorType == AwslabsPosition.Latest && last.startedAt.contains(p.shardId) =>
        AwslabsPosition(p.shardId, AwslabsPosition.AtTimestamp, last.startedAt(p.shardId).toString, -1L, isLast = true)
      case p => p
    }
  }
}
