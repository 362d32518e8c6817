package io.kinesisspark.sink

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.aws.{HashKeyRange, ShardInfo}
import io.kinesisspark.kpl.{KplAggregate, KplDecoded}

class KinesisDataWriterSuite extends AnyFunSuite {
  private val schema = StructType(Seq(StructField("partitionKey", StringType), StructField("data", StringType)))
  private val options = KinesisSinkOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1"))

  private def writer(fake: FakePutRecords, aggregation: Boolean): (KinesisDataWriter, SinkMetrics) = {
    val metrics = new SinkMetrics
    val sender = new PutRecordsSender(fake.put, 4, RetryPolicy(3), preserveKeyOrder = false, metrics, InlineExecutor,
      () => fake.clock(), fake.sleep)
    val oneShard = ShardMap(Seq(ShardInfo("shardId-000000000000", Nil, closed = false,
      Some(HashKeyRange(0, io.kinesisspark.kpl.UserRecord.HashKeySpace - 1)))))
    val aggregator = if (aggregation) Some(new KplAggregator(_ => oneShard, 51200, sender.add)) else None
    val converter = new RowConverter(SinkColumns.resolve(schema, options), options, 0)
    (new KinesisDataWriter(converter, sender, aggregator, metrics), metrics)
  }

  private def rows(n: Int): Iterator[InternalRow] =
    (1 to n).iterator.map(i => InternalRow(UTF8String.fromString(s"k$i"), UTF8String.fromString(s"d$i")))

  private def metric(w: KinesisDataWriter, name: String): Long = w.currentMetricsValues().find(_.name() == name).get.value()

  test("writeAll returns with every row acknowledged, so the metrics Spark reads before commit count them all") {
    val fake = new FakePutRecords
    val (w, _) = writer(fake, aggregation = false)
    w.writeAll(rows(1200).asJava)
    assert(fake.data("s").size == 1200)
    assert(metric(w, SinkMetrics.RecordsWritten) == 1200 && metric(w, SinkMetrics.PutRecordsCalls) == 3)
    val message = w.commit().asInstanceOf[KinesisWriterCommitMessage]
    assert(message.metrics(SinkMetrics.RecordsWritten) == 1200 && fake.calls.size == 3) // nothing left to send
  }

  test("with aggregation the rows arrive packed, and unpack to what was written") {
    val fake = new FakePutRecords
    val (w, metrics) = writer(fake, aggregation = true)
    rows(300).foreach(w.write)
    w.commit()
    val stored = fake.stored("s")
    assert(stored.size == 1 && metrics.aggregatesWritten == 1 && metrics.recordsWritten == 300)
    val KplDecoded.Aggregated(users) = KplAggregate.decode(stored.head.data): @unchecked
    assert(users.map(u => new String(u.data, "UTF-8")) == (1 to 300).map(i => s"d$i"))
  }
}
