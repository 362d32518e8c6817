package io.kinesisspark.realtime

import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

import io.kinesisspark.{KinesisMicroBatchStream, KinesisSourceOptions}

/**
 * The stream a scan makes. Spark 3.5 has no real-time mode: always the micro-batch stream (the Spark 4 build has a
 * file of the same name, src/main/spark-4, that makes a real-time capable one where Spark has the interfaces).
 */
object MicroBatchStreams {
  val realTimeAvailable: Boolean = false

  def create(options: KinesisSourceOptions, checkpointLocation: String): MicroBatchStream =
    new KinesisMicroBatchStream(options, checkpointLocation)
}
