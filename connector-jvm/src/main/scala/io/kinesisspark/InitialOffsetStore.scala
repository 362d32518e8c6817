package io.kinesisspark

import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * Keeps the query's starting offset in its checkpoint (`<checkpoint>/sources/<n>/kinesis-initial-offset.json`),
 * written once at the first start. `initialPosition = latest` is pinned there as "at the first start time", so a
 * query that dies before its first batch commits restarts from the same point and skips nothing.
 */
final class InitialOffsetStore(checkpointLocation: String, hadoopConf: Configuration) {
  private val path = new Path(checkpointLocation, "kinesis-initial-offset.json")

  def getOrCreate(create: => KinesisSourceOffset): KinesisSourceOffset = {
    val fs = path.getFileSystem(hadoopConf)
    if (fs.exists(path)) {
      val in = fs.open(path)
      try KinesisSourceOffset.fromJson(new String(in.readAllBytes(), StandardCharsets.UTF_8))
      finally in.close()
    } else {
      val offset = create
      // Write aside, then rename: a crash mid-write never leaves a half-written start offset behind.
      val tmp = new Path(checkpointLocation, s".kinesis-initial-offset.${java.util.UUID.randomUUID()}.tmp")
      val out = fs.create(tmp, true)
      try out.write(offset.json().getBytes(StandardCharsets.UTF_8)) finally out.close()
      if (!fs.rename(tmp, path)) {
        fs.delete(tmp, false)
        if (!fs.exists(path)) throw new KinesisSparkException(s"Cannot write the initial Kinesis offset to $path")
        return getOrCreate(create) // another attempt of the same query won the race: use its offset
      }
      offset
    }
  }
}
