package io.kinesisspark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** One or more Kinesis streams as a Spark table; `name` never includes option values (they may be secrets). */
final class KinesisTable(options: KinesisSourceOptions) extends Table with SupportsRead {
  override def name(): String = s"kinesis:${options.streams.mkString(",")}"
  override def schema(): StructType = KinesisRecordSchema.schema
  override def capabilities(): util.Set[TableCapability] = Set(TableCapability.MICRO_BATCH_READ).asJava
  override def newScanBuilder(ignored: CaseInsensitiveStringMap): ScanBuilder = new KinesisScan(options)
}
