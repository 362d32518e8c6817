package io.kinesisspark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.kinesisspark.sink.SinkFlavour

/**
 * `format("kinesis")`, to read and to write. Options are parsed and validated, and streams are checked to exist,
 * when the table is created: at `load()` for a read, at `start()` / `save()` for a write (together with the
 * DataFrame's columns), so a mistake fails there with a clear message instead of inside a running query.
 *
 * {{{
 *   spark.readStream.format("kinesis")
 *     .option("streamName", "clicks")
 *     .option("region", "us-east-1")
 *     .option("initialPosition", "trim_horizon")
 *     .load()
 *
 *   df.selectExpr("CAST(userId AS STRING) AS partitionKey", "to_json(struct(*)) AS data")
 *     .writeStream.format("kinesis").option("streamName", "clicks").option("region", "us-east-1")
 *     .option("checkpointLocation", "/checkpoints/to-kinesis").start()
 * }}}
 */
class KinesisSourceProvider extends TableProvider with DataSourceRegister {
  override def shortName(): String = "kinesis"

  /** The columns this format's users expect. */
  protected def recordLayout: RecordLayout = RecordLayout.Databricks

  /** How the sink of this format behaves where the two connectors differ. */
  protected def sinkFlavour: SinkFlavour = SinkFlavour.Kinesis

  // Spark asks a provider for its schema only to read without a schema of the user's; a write hands over its
  // DataFrame's schema instead (supportsExternalMetadata). That is how getTable tells a read from a write. The
  // schema depends on an option (includeSubSequenceNumber), so the read's options are parsed here, once, for both.
  @volatile private var readOptions: Option[KinesisSourceOptions] = None

  override def supportsExternalMetadata(): Boolean = true

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    val parsed = KinesisTable.readSetup(AwslabsOptions.translate(options.asCaseSensitiveMap().asScala.toMap), recordLayout)
    readOptions = Some(parsed)
    parsed.recordSchema.schema
  }

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table = {
    AwslabsOptions.notNeededWarnings(properties.asScala.keys).foreach(w => KinesisSourceProvider.log.warn(w))
    val userOptions = AwslabsOptions.translate(properties.asScala.toMap)
    readOptions match {
      case Some(read) => new KinesisTable(userOptions, read.recordSchema, sinkFlavour, Some(read))
      case None =>
        // A read given its schema by the user: the rows are what it asked for, if the source can return that.
        val asked = KinesisRecordSchema.All.find(s => s.layout == recordLayout && KinesisSourceProvider.sameColumns(s, schema))
        val table = new KinesisTable(userOptions, asked.getOrElse(KinesisRecordSchema(recordLayout)), sinkFlavour, None)
        // A DataFrame with the source's own columns may be a read given its schema, or rows read from Kinesis
        // being written back: each side checks its options when used. Any other schema is a write's: check now.
        if (!KinesisRecordSchema.All.exists(KinesisSourceProvider.sameColumns(_, schema))) table.sinkColumns(schema)
        table
    }
  }
}

object KinesisSourceProvider {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[KinesisSourceProvider])

  private def columns(schema: StructType): Seq[(String, DataType)] = schema.fields.toSeq.map(f => (f.name, f.dataType))

  private def sameColumns(records: KinesisRecordSchema, schema: StructType): Boolean =
    columns(records.schema) == columns(schema)
}

/**
 * `format("aws-kinesis")`: the awslabs connector's short name, so its users can switch by changing nothing; its
 * `kinesis.*` option names are accepted everywhere (see [[AwslabsOptions]]), its rows have the awslabs columns
 * ([[RecordLayout.Awslabs]]), and its sink behaves like the awslabs sink ([[SinkFlavour.Awslabs]]).
 */
final class AwsKinesisSourceProvider extends KinesisSourceProvider {
  override def shortName(): String = "aws-kinesis"
  override protected def recordLayout: RecordLayout = RecordLayout.Awslabs
  override protected def sinkFlavour: SinkFlavour = SinkFlavour.Awslabs
}
