package io.kinesisspark

import org.apache.hadoop.conf.Configuration

/**
 * Keeps the query's starting offset in its checkpoint (`<checkpoint>/sources/<n>/kinesis-initial-offset.json`),
 * written once at the first start. `initialPosition = latest` is pinned there as "at the first start time", so a
 * query that dies before its first batch commits restarts from the same point and skips nothing.
 */
final class InitialOffsetStore(checkpointLocation: String, hadoopConf: Configuration) {
  private val file =
    new CheckpointFile(checkpointLocation, "kinesis-initial-offset.json", hadoopConf, "the initial Kinesis offset")

  def getOrCreate(create: => KinesisSourceOffset): KinesisSourceOffset =
    file.read().map(KinesisSourceOffset.fromJson).getOrElse {
      val offset = create
      // Not created: another attempt of the same query won the race, so its offset is the start.
      if (file.create(offset.json())) offset else getOrCreate(create)
    }
}
