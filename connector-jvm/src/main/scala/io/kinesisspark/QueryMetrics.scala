package io.kinesisspark

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.kinesisspark.MetricsBridge
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.StreamingQueryListener

/**
 * The connector's metrics of a streaming query in Spark's metrics system, so that the sinks operators scrape
 * (PrometheusServlet, JMX, CSV, Graphite) carry them, not only the progress JSON: the source's under
 * `kinesis.source.<query>`, the sink's under `kinesis.sink.<query>`, where `<query>` is the query's name, or its id
 * (stable across restarts from a checkpoint) when it has none. A gauge reads a snapshot of the metrics taken at most
 * once per [[SnapshotMs]], so a scrape of many gauges computes them once. A query's metrics leave the metrics system
 * when it terminates; registering a query's again (a restart) replaces them.
 *
 * {{{
 *   QueryMetrics.register("source", spark, queryId, Seq("maxMsBehindLatest"), () => stream.metricsMap)
 *   // Prometheus: metrics_<app id>_driver_kinesis_source_<query>_maxMsBehindLatest_Value
 * }}}
 */
object QueryMetrics {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  val SnapshotMs = 1000L
  /** Spark's StreamExecution.QUERY_ID_KEY (its package moved between Spark versions, the key did not): the id of
   *  the streaming query a thread runs, set on the query's own thread. */
  val QueryIdProperty = "sql.streaming.queryId"

  /** The id of the streaming query the calling thread runs, if any. */
  def currentQueryId(spark: SparkSession): Option[String] =
    Option(spark.sparkContext.getLocalProperty(QueryIdProperty))

  private val registered = new ConcurrentHashMap[(String, String), MetricsBridge.Registered]()
  private val listening = java.util.Collections.newSetFromMap(
    new java.util.WeakHashMap[SparkSession, java.lang.Boolean]())

  /**
   * @param kind     `source` or `sink`
   * @param names    the gauges, keys of `snapshot`; a gauge whose key is absent reads NaN (unknown, e.g. no lag yet)
   * @param snapshot the metrics now, as the progress JSON reports them
   */
  def register(kind: String, spark: SparkSession, queryId: String, names: Seq[String],
      snapshot: () => Map[String, String], clock: () => Long = () => System.currentTimeMillis()): Unit = {
    // A query runs on a clone of the session it was started from, whose query manager is the one that knows it
    // (its name, and its listeners).
    val sessions = Seq(spark) ++ SparkSession.getDefaultSession.toSeq ++ SparkSession.getActiveSession.toSeq
    val owner = sessions.find(s => s.streams.get(queryId) != null)
    val query = owner.flatMap(s => Option(s.streams.get(queryId).name)).getOrElse(queryId)
    val cached = new Snapshot(snapshot, clock)
    val gauges = names.map(n => n -> (() => cached.get.get(n).flatMap(v => scala.util.Try(v.toDouble).toOption)
      .getOrElse(Double.NaN)))
    // Spark removes a source's gauges by name: the old ones go before the new ones come.
    registered.synchronized {
      remove(kind, queryId)
      MetricsBridge.register(s"kinesis.$kind.${sanitize(query)}", gauges).foreach { r =>
        registered.put((kind, queryId), r)
        removeOnTermination(owner.getOrElse(spark))
      }
    }
  }

  /** Takes a query's metrics (of `kind`) out of the metrics system. */
  def remove(kind: String, queryId: String): Unit = Option(registered.remove((kind, queryId))).foreach(_.remove())

  /** Metric names keep to letters, digits, '_' and '-' (sinks split names on '.'). */
  private def sanitize(name: String): String = name.replaceAll("[^A-Za-z0-9_-]", "_")

  private def removeOnTermination(spark: SparkSession): Unit = listening.synchronized {
    if (listening.add(spark)) spark.streams.addListener(new StreamingQueryListener {
      override def onQueryStarted(event: StreamingQueryListener.QueryStartedEvent): Unit = ()
      override def onQueryProgress(event: StreamingQueryListener.QueryProgressEvent): Unit = ()
      override def onQueryTerminated(event: StreamingQueryListener.QueryTerminatedEvent): Unit = {
        remove("source", event.id.toString)
        remove("sink", event.id.toString)
      }
    })
  }

  private final class Snapshot(compute: () => Map[String, String], clock: () => Long) {
    @volatile private var taken: Option[(Long, Map[String, String])] = None
    def get: Map[String, String] = {
      val now = clock()
      taken.collect { case (at, values) if now - at < SnapshotMs => values }.getOrElse(synchronized {
        val fresh = try compute() catch {
          case scala.util.control.NonFatal(e) =>
            log.debug("Metrics snapshot failed; its gauges read NaN until the next one", e)
            Map.empty[String, String]
        }
        taken = Some((now, fresh))
        fresh
      })
    }
  }
}
