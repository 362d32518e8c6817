package io.kinesisspark

import org.apache.spark.sql.connector.read.{Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType

/**
 * The read side of a [[KinesisTable]]: a micro-batch stream over the configured streams, which can also run in
 * real-time mode where Spark has it ([[io.kinesisspark.realtime.MicroBatchStreams]]).
 */
final class KinesisScan(options: KinesisSourceOptions) extends Scan with ScanBuilder {
  override def build(): Scan = this
  override def readSchema(): StructType = options.recordSchema.schema
  override def description(): String = s"KinesisV2[${options.streams.mkString(",")}]"
  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    io.kinesisspark.realtime.MicroBatchStreams.create(options, checkpointLocation)
}
