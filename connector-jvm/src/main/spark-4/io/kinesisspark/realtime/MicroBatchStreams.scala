package io.kinesisspark.realtime

import scala.util.Try

import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

import io.kinesisspark.{KinesisMicroBatchStream, KinesisSourceOptions}

/**
 * The stream a scan makes: one that can also run in real-time mode where Spark has it (4.1 and later), the micro-batch
 * stream elsewhere. One jar serves Spark 4.0 to 4.3: on 4.0 the real-time stream's class, whose interfaces do not
 * exist there, is never loaded (it is named only inside [[KinesisRealTimeStream.create]]).
 *
 * {{{
 *   MicroBatchStreams.create(options, checkpointLocation)  // a KinesisRealTimeStream on Spark 4.1+
 * }}}
 */
object MicroBatchStreams {
  /** Whether this Spark has real-time mode's source interfaces. */
  lazy val realTimeAvailable: Boolean =
    Try(Class.forName("org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead", false,
      classOf[MicroBatchStream].getClassLoader)).isSuccess

  def create(options: KinesisSourceOptions, checkpointLocation: String): MicroBatchStream =
    if (realTimeAvailable) KinesisRealTimeStream.create(options, checkpointLocation)
    else new KinesisMicroBatchStream(options, checkpointLocation)
}
