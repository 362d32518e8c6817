package org.apache.spark.kinesisspark

import com.codahale.metrics.{Gauge, MetricRegistry}
import org.apache.spark.SparkEnv
import org.apache.spark.metrics.source.Source

/**
 * The connector's way into Spark's metrics system (whose `Source` is Spark-private): gauges registered here are
 * carried by every sink the application configures (PrometheusServlet, JMX, CSV, Graphite, ...), named
 * `<app id>.driver.<name>.<gauge>` on the driver.
 *
 * {{{
 *   val registered = MetricsBridge.register("kinesis.source.clicks", Seq("maxMsBehindLatest" -> (() => lag)))
 *   registered.foreach(_.remove())   // when the query stops
 * }}}
 */
object MetricsBridge {

  /** Gauges under `name` in this JVM's metrics system; `None` without a running SparkEnv. */
  def register(name: String, gauges: Seq[(String, () => Double)]): Option[Registered] =
    Option(SparkEnv.get).map { env =>
      val registry = new MetricRegistry
      gauges.foreach { case (gauge, value) =>
        registry.register(gauge, new Gauge[Double] { override def getValue: Double = value() })
      }
      val source = new Source {
        override val sourceName: String = name
        override val metricRegistry: MetricRegistry = registry
      }
      env.metricsSystem.registerSource(source)
      new Registered(env, source)
    }

  /** Gauges registered together; [[remove]] takes them out of the metrics system. */
  final class Registered private[MetricsBridge] (env: SparkEnv, source: Source) {
    def remove(): Unit = env.metricsSystem.removeSource(source)
  }
}
