package io.kinesisspark.sink

import java.util.concurrent.{Executors, ScheduledFuture, TimeUnit}
import java.util.concurrent.locks.ReentrantLock

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.sql.{ForeachWriter, Row}
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder
import org.apache.spark.sql.types.StructType

import io.kinesisspark.{KinesisErrors, KinesisOptionKeys, KinesisTable}

/**
 * Writes a streaming query's rows to Kinesis through `writeStream.foreach`: the way to write to Kinesis from a
 * real-time query (`Trigger.RealTime`), whose sinks Spark limits to console, foreach and Kafka. It takes the
 * sink's options and columns (`data`, `partitionKey`, `explicitHashKey`, `streamName`) and writes as the sink does,
 * with its pacing, retries and key order ([[PutRecordsSender]]), but sends each row as it comes instead of waiting
 * for a full call: a call starts as soon as one of the task's `maxInflightRequests` is free (paced, a stream's calls
 * go out every [[PutRecordsSender.PacedCallIntervalMs]] unless full), and a refused row is put again after its
 * back-off even while no new row comes. `close` returns once Kinesis has stored every row of the task, so a batch
 * that commits is written; a failed task's rows may be written again by its retry (at-least-once, as the sink).
 *
 * The options and columns are checked where the writer is made, on the driver: a missing column or a bad option
 * fails before the query starts. KPL aggregation (option `aggregation`) is refused: an aggregate waits for rows to
 * fill it, which is the latency real-time mode is for avoiding.
 *
 * {{{
 *   val writer = new KinesisForeachWriter(df.schema, Map("streamName" -> "alerts", "region" -> "eu-west-1"))
 *   df.writeStream.foreach(writer).outputMode("update").trigger(Trigger.RealTime("5 minutes"))
 *     .option("checkpointLocation", "/checkpoints/alerts").start()
 * }}}
 *
 * Made with the schema of the rows the query writes (`df.schema`) and the sink's options, as `format("kinesis")`
 * takes them (a Scala or a Java map).
 *
 * @param newWriter makes each task's writer (the sink's; another in tests)
 */
final class KinesisForeachWriter private[sink] (
    schema: StructType,
    sinkOptions: KinesisSinkOptions,
    newWriter: KinesisForeachWriter.WriterMaker) extends ForeachWriter[Row] {
  import KinesisForeachWriter._

  def this(schema: StructType, options: Map[String, String]) =
    this(schema, KinesisForeachWriter.setup(options), KinesisForeachWriter.SinkWriters)

  /** For Java and PySpark (py4j) callers. */
  def this(schema: StructType, options: java.util.Map[String, String]) = this(schema, options.asScala.toMap)

  private val columns = SinkColumns.resolve(schema, sinkOptions)
  columns.ignoredWarning.foreach(w => log.warn(w))

  // Made on the executor, per task (open to close): the sender's state belongs to the thread holding `lock`.
  @transient private var toInternal: Row => org.apache.spark.sql.catalyst.InternalRow = _
  @transient private var writer: KinesisDataWriter = _
  @transient private var ticks: ScheduledFuture[_] = _
  @transient private var lock: ReentrantLock = _
  // The first error a tick met is logged; the task's next row, or close, throws it.
  @transient @volatile private var warned = false

  override def open(partitionId: Long, epochId: Long): Boolean = {
    val serializer = ExpressionEncoder(schema).createSerializer()
    toInternal = row => serializer(row)
    val made = newWriter(sinkOptions, columns, partitionId.toInt, epochId)
    val held = new ReentrantLock()
    writer = made
    lock = held
    ticks = Ticker.scheduleWithFixedDelay(() => {
      // Skipped while the task's thread holds the writer (it is sending, or waiting for room): the one ticker thread
      // serves every writer of the JVM and must not wait for any.
      if (held.tryLock()) {
        try made.sendReady() catch {
          case NonFatal(e) => if (!warned) { warned = true; log.warn(s"Kinesis writer of partition $partitionId: $e") }
        } finally held.unlock()
      }
    }, TickMs, TickMs, TimeUnit.MILLISECONDS)
    true
  }

  override def process(row: Row): Unit = locked {
    writer.write(toInternal(row))
    writer.sendReady()
  }

  override def close(errorOrNull: Throwable): Unit = {
    if (ticks != null) ticks.cancel(false)
    if (writer != null) locked {
      if (errorOrNull == null) writer.commit() else writer.abort()
    }
  }

  private def locked[T](body: => T): T = {
    lock.lock()
    try body finally lock.unlock()
  }
}

object KinesisForeachWriter {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[KinesisForeachWriter])

  /** Makes a task's writer: the options, the columns, the partition and the epoch. */
  private[sink] type WriterMaker = (KinesisSinkOptions, SinkColumns, Int, Long) => KinesisDataWriter

  /** The sink's own writers ([[KinesisDataWriterFactory]]). */
  private object SinkWriters extends WriterMaker with Serializable {
    override def apply(options: KinesisSinkOptions, columns: SinkColumns, partitionId: Int, epochId: Long) =
      new KinesisDataWriterFactory(options, columns).createWriter(partitionId, epochId)
  }

  /** The options parsed, the stream checked to exist, and `aggregation` refused (see the class's comment). */
  private def setup(options: Map[String, String]): KinesisSinkOptions = {
    val parsed = KinesisTable.writeSetup(options, SinkFlavour.Kinesis)
    if (parsed.aggregation) {
      val value = options.collectFirst { case (k, v) if k.equalsIgnoreCase(KinesisOptionKeys.Aggregation) => v }
      throw KinesisErrors.invalidOption(KinesisOptionKeys.Aggregation, value.getOrElse("true"),
        "'false' for a KinesisForeachWriter (it sends each row as it comes; an aggregate would hold rows until it " +
          "is full)")
    }
    parsed
  }

  /**
   * How often an open writer looks at its calls without a new row: a call that ended frees room for rows queued
   * behind it, and a refused row's back-off may be over.
   */
  val TickMs = 10L

  /** One thread for every open writer of the JVM: a tick only starts calls, it never waits for one. */
  private lazy val Ticker = Executors.newSingleThreadScheduledExecutor { (r: Runnable) =>
    val t = new Thread(r, "kinesis-foreach-writer-ticks")
    t.setDaemon(true)
    t
  }
}
