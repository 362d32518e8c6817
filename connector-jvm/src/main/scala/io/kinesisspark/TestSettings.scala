package io.kinesisspark

import scala.util.Try

import org.apache.spark.SparkEnv

/**
 * Spark settings that only tests have reason to change: limits that make a fault last minutes in production, which
 * a reliability test wants to see pass in seconds. They are not options (not in the option table, not validated
 * with the source's options); each is read where its limit applies, in whichever JVM of the application that is:
 * Spark passes `spark.*` settings from the driver to the executors.
 *
 * {{{
 *   spark-submit --conf spark.kinesisspark.test.transientMaxFailures=2 ...
 *   val budget = TestSettings.long(TestSettings.TransientMaxFailures).fold(8)(_.toInt)
 * }}}
 */
object TestSettings {
  /** Failures in a row a [[reader.TransientBackoff]] allows (production: 8, about 36 to 72 s of retries). */
  val TransientMaxFailures = "spark.kinesisspark.test.transientMaxFailures"
  /** A stream's retention period in milliseconds, in place of the hours DescribeStreamSummary gives (at least 24
   * on AWS; the limits proxy plays retention in seconds). */
  val RetentionMs = "spark.kinesisspark.test.retentionMs"
  /** Milliseconds the HTTP clients wait for a byte of an answer before they give the call up (production: 30 s for
   * Kinesis and STS calls, 60 s for an enhanced fan-out subscription's next event). */
  val SocketTimeoutMs = "spark.kinesisspark.test.socketTimeoutMs"
  /** Milliseconds a prefetch ticket's executor may go without listing it among those it holds before the ticket is
   * lost (production: [[prefetch.RoundDispatcher.SilenceLimitMillis]], 15 s): the reliability tests pause an executor
   * for seconds. */
  val PrefetchSilenceLimitMs = "spark.kinesisspark.test.prefetchSilenceLimitMs"

  /** The setting's value in this JVM's Spark application, if set (none outside one, as in unit tests). */
  def long(name: String): Option[Long] =
    Option(SparkEnv.get).flatMap(_.conf.getOption(name)).map { value =>
      Try(value.trim.toLong).toOption.filter(_ >= 0).getOrElse(throw new IllegalArgumentException(
        s"Spark setting $name is '$value'; expected a whole number >= 0"))
    }
}
