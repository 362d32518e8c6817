package io.kinesisspark.switching

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * The awslabs connector's shard positions in files (its default, `kinesis.metadataCommitterType` `HDFS`): one JSON
 * `ShardInfo` per shard, in `<metadata path>/shard-source/<batchId>/<shardId>`, read through Hadoop's file systems
 * (HDFS, S3A, the local disk) as the old query wrote them.
 *
 * {{{
 *   new AwslabsShardFiles("s3a://bucket/checkpoints/orders/sources/0", hadoopConf).positions(41)
 * }}}
 *
 * @param metadataPath the old query's `kinesis.metadataPath`, or by default its source's checkpoint folder
 *                     (`<checkpointLocation>/sources/<n>`)
 */
final class AwslabsShardFiles(metadataPath: String, hadoopConf: Configuration) extends AwslabsShardLog {
  private val root = new Path(metadataPath, "shard-source")

  override def name: String = root.toString

  override def positions(batchId: Long): Seq[AwslabsPosition] = {
    val dir = new Path(root, batchId.toString)
    val fs = dir.getFileSystem(hadoopConf)
    val files = try fs.listStatus(dir).toSeq catch { case _: FileNotFoundException => Nil }
    // Hadoop's local file system leaves .<name>.crc files beside the ones it writes.
    files.filter(f => f.isFile && !f.getPath.getName.startsWith(".")).map { f =>
      val in = fs.open(f.getPath)
      val text = try new String(in.readAllBytes(), StandardCharsets.UTF_8) finally in.close()
      AwslabsPosition.fromJson(text, f.getPath.toString)
    }.sortBy(_.shardId)
  }
}
