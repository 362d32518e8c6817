package io.kinesisspark

import org.apache.spark.sql.connector.read.{Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType

/** The read side of a [[KinesisTable]]: a micro-batch stream over the configured streams. */
final class KinesisScan(options: KinesisSourceOptions) extends Scan with ScanBuilder {
  override def build(): Scan = this
  override def readSchema(): StructType = options.recordSchema.schema
  override def description(): String = s"KinesisV2[${options.streams.mkString(",")}]"
  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    new KinesisMicroBatchStream(options, checkpointLocation)
}
