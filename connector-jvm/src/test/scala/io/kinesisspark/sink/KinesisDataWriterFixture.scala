package io.kinesisspark.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.aws.{HashKeyRange, ShardInfo}

/** A [[KinesisDataWriter]] over a [[FakePutRecords]], for the writer suites of both Spark lines. */
object KinesisDataWriterFixture {
  private val schema = StructType(Seq(StructField("partitionKey", StringType), StructField("data", StringType)))
  private val options = KinesisSinkOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1"))

  def writer(fake: FakePutRecords, aggregation: Boolean): (KinesisDataWriter, SinkMetrics) = {
    val metrics = new SinkMetrics
    val sender = new PutRecordsSender(fake.put, 4, RetryPolicy(3), preserveKeyOrder = false, metrics, InlineExecutor,
      () => fake.clock(), fake.sleep)
    val oneShard = ShardMap(Seq(ShardInfo("shardId-000000000000", Nil, closed = false,
      Some(HashKeyRange(0, io.kinesisspark.kpl.UserRecord.HashKeySpace - 1)))))
    val aggregator = if (aggregation) Some(new KplAggregator(_ => oneShard, AggregateFill.fixed(51200), sender.add)) else None
    val converter = new RowConverter(SinkColumns.resolve(schema, options), options, 0)
    (new KinesisDataWriter(converter, sender, aggregator, shardMap = None, metrics), metrics)
  }

  def rows(n: Int): Iterator[InternalRow] =
    (1 to n).iterator.map(i => InternalRow(UTF8String.fromString(s"k$i"), UTF8String.fromString(s"d$i")))

  def metric(w: KinesisDataWriter, name: String): Long = w.currentMetricsValues().find(_.name() == name).get.value()
}
