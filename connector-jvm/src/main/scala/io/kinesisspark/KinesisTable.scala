package io.kinesisspark

import java.util
import java.util.Locale
import java.util.concurrent.atomic.AtomicBoolean

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, Table, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.kinesisspark.aws.KinesisClients
import io.kinesisspark.sink.{KinesisSinkOptions, KinesisWriteBuilder, SinkColumns, SinkFlavour, SinkTotals}

/**
 * One or more Kinesis streams as a Spark table, to read (`readStream.format("kinesis")`) or to write
 * (`writeStream` / `write`). Spark does not say which when it makes the table, so each side's options are parsed
 * by the side that uses them: the provider parses the source's at `load()` ([[KinesisTable.readSetup]]), and the
 * sink's when the write is set up ([[sinkOptions]]). `name` never includes option values (they may be secrets).
 *
 * {{{
 *   val table = new KinesisTable(Map("streamName" -> "clicks", "region" -> "us-east-1"),
 *     KinesisRecordSchema.Databricks, SinkFlavour.Kinesis, readOptions = None)
 *   table.newWriteBuilder(info).build()   // checks the DataFrame's columns against the sink's
 * }}}
 *
 * @param userOptions  the options, awslabs names translated
 * @param recordSchema the columns of the rows read (of the parsed read options when there are some)
 * @param sinkFlavour  the sink's behaviour where `format("kinesis")` and `format("aws-kinesis")` differ
 * @param readOptions  the source's options when the provider already parsed them for a read
 */
final class KinesisTable(userOptions: Map[String, String], recordSchema: KinesisRecordSchema, sinkFlavour: SinkFlavour,
    readOptions: Option[KinesisSourceOptions]) extends Table with SupportsRead with SupportsWrite with ReportsSinkMetrics {

  private lazy val source: KinesisSourceOptions =
    readOptions.getOrElse(KinesisTable.readSetup(userOptions, recordSchema.layout).copy(recordSchema = recordSchema))
  private lazy val sink: KinesisSinkOptions = KinesisTable.writeSetup(userOptions, sinkFlavour)
  private val totals = new SinkTotals
  private val columnsWarned = new AtomicBoolean(false)

  /**
   * Where the sink finds its columns in rows of `schema`; the sink's options are parsed (and the stream checked to
   * exist) on first use. Fails naming a missing or mistyped column.
   */
  def sinkColumns(schema: StructType): SinkColumns = {
    val columns = SinkColumns.resolve(schema, sink)
    // A streaming query builds a write per epoch: say it once.
    if (!columnsWarned.getAndSet(true)) columns.ignoredWarning.foreach(w => KinesisTable.log.warn(w))
    columns
  }

  override def name(): String = readOptions.map(_.streams.mkString(",")).orElse(KinesisTable.option(userOptions,
    KinesisOptionKeys.StreamName)).map(s => s"kinesis:$s").getOrElse("kinesis:<streamName column>")
  override def schema(): StructType = recordSchema.schema
  override def capabilities(): util.Set[TableCapability] = Set(TableCapability.MICRO_BATCH_READ,
    TableCapability.BATCH_WRITE, TableCapability.STREAMING_WRITE,
    // The sink reads its own columns by name and ignores others: Spark must not match them to schema().
    TableCapability.ACCEPT_ANY_SCHEMA).asJava
  override def newScanBuilder(ignored: CaseInsensitiveStringMap): ScanBuilder = new KinesisScan(source)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new KinesisWriteBuilder(sink, sinkColumns(info.schema()), totals)

  /** The sink metrics of every epoch committed since the query started (a streaming progress's `sink.metrics`). */
  override def metrics(): util.Map[String, String] = totals.asJava
}

object KinesisTable {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[KinesisTable])

  /** Options Spark itself passes along with the user's: not ours, and not worth a warning. */
  private val SparkOptions = Set("path", "checkpointlocation")

  private def option(options: Map[String, String], key: String): Option[String] =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase(key) && v != null => v }

  private def unknownWarnings(options: Map[String, String], known: Seq[String]): Unit =
    UnknownOptions.warnings(options.keySet.filterNot(k => SparkOptions(k.toLowerCase(Locale.ROOT))), known)
      .foreach(w => log.warn(w))

  /** The source's options, parsed, with every stream checked to exist; rows in `layout`'s columns. */
  def readSetup(userOptions: Map[String, String], layout: RecordLayout): KinesisSourceOptions = {
    unknownWarnings(userOptions, KinesisOptionKeys.All)
    val parsed = KinesisSourceOptions.parse(userOptions)
    val options = parsed.copy(recordSchema = parsed.recordSchema.copy(layout = layout))
    val api = KinesisClients.api(options.connection)
    options.streams.foreach(api.describeStream)
    options
  }

  /** The sink's options, parsed, with the `streamName` option's stream (if set) checked to exist. */
  def writeSetup(userOptions: Map[String, String], flavour: SinkFlavour): KinesisSinkOptions = {
    unknownWarnings(userOptions, KinesisOptionKeys.SinkAll)
    val options = KinesisSinkOptions.parse(userOptions, flavour)
    options.stream.foreach(KinesisClients.api(options.connection).describeStream)
    options
  }
}
