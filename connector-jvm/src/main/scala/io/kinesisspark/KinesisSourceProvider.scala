package io.kinesisspark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.kinesisspark.aws.KinesisClients

/**
 * `format("kinesis")`. Options are parsed and validated, and every stream is checked to exist, when the table
 * is created, i.e. at `load()`: a mistake fails there with a clear message instead of inside a running query.
 *
 * {{{
 *   spark.readStream.format("kinesis")
 *     .option("streamName", "clicks")
 *     .option("region", "us-east-1")
 *     .option("initialPosition", "trim_horizon")
 *     .load()
 * }}}
 */
class KinesisSourceProvider extends TableProvider with DataSourceRegister {
  override def shortName(): String = "kinesis"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = KinesisRecordSchema.schema

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table = {
    val userOptions = AwslabsOptions.translate(properties.asScala.toMap)
    // Spark adds its own "path" entry for load(path); it is not an option the user set for us.
    UnknownOptions.warnings(userOptions.keySet - "path").foreach(w => KinesisSourceProvider.log.warn(w))
    val options = KinesisSourceOptions.parse(userOptions)
    val api = KinesisClients.api(options.connection)
    options.streams.foreach(api.describeStream)
    new KinesisTable(options)
  }
}

object KinesisSourceProvider {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[KinesisSourceProvider])
}

/**
 * `format("aws-kinesis")`: the awslabs connector's short name, so its users can switch by changing nothing; its
 * `kinesis.*` option names are accepted everywhere (see [[AwslabsOptions]]).
 */
final class AwsKinesisSourceProvider extends KinesisSourceProvider {
  override def shortName(): String = "aws-kinesis"
}
