package io.kinesisspark.sink

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.{StringType, StructField, StructType}
import org.scalatest.funsuite.AnyFunSuite

class KinesisForeachWriterSuite extends AnyFunSuite {
  private val schema = StructType(Seq(StructField("data", StringType), StructField("partitionKey", StringType)))
  private val options = KinesisSinkOptions.parse(Map("streamName" -> "out", "region" -> "us-east-1"))

  /** A writer whose tasks put into `fake` (on the caller's thread, or the ticker's), unpaced. */
  private def writer(fake: FakePutRecords): KinesisForeachWriter =
    new KinesisForeachWriter(schema, options, (opts, columns, partition, _) => {
      val metrics = new SinkMetrics
      val sender = new PutRecordsSender(fake.put, 4, RetryPolicy(5), preserveKeyOrder = true, metrics, InlineExecutor)
      new KinesisDataWriter(new RowConverter(columns, opts, partition), sender, None, None, metrics)
    })

  private def eventually(what: String)(condition: => Boolean): Unit = {
    val deadline = System.currentTimeMillis() + 5000
    while (!condition) {
      assert(System.currentTimeMillis() < deadline, s"not so after 5 s: $what")
      Thread.sleep(5)
    }
  }

  test("each row is sent as it comes, not when a call is full or the task closes") {
    val fake = new FakePutRecords
    val w = writer(fake)
    assert(w.open(0, 1))
    w.process(Row("a", "k1"))
    assert(fake.data("out") == Seq("a"))
    w.process(Row("b", "k2"))
    assert(fake.data("out") == Seq("a", "b") && fake.calls.size == 2)
    w.close(null)
  }

  test("a refused row is put again once its back-off ends, with no new row to carry it") {
    val fake = new FakePutRecords
    fake.refuse = (call, _) => if (call == 1) Some("InternalFailure") else None
    val w = writer(fake)
    w.open(0, 1)
    w.process(Row("a", "k1"))
    assert(fake.data("out").isEmpty)
    eventually("the ticker put the row again")(fake.synchronized(fake.data("out")) == Seq("a"))
    w.close(null)
  }

  test("close returns once every row is stored; a failed task's close aborts; a new epoch opens again") {
    val fake = new FakePutRecords
    fake.refuse = (call, _) => if (call <= 2) Some("InternalFailure") else None
    val w = writer(fake)
    w.open(0, 1)
    w.process(Row("a", "k1"))
    w.close(null)
    assert(fake.data("out") == Seq("a"))
    w.open(0, 2)
    fake.refuse = (_, _) => Some("InternalFailure")
    w.process(Row("b", "k2"))
    w.close(new RuntimeException("the task failed"))
    val calls = fake.calls.size
    Thread.sleep(200) // an aborted writer is not ticked into retrying
    assert(fake.calls.size == calls && fake.data("out") == Seq("a"))
  }

  test("a row Kinesis will not store fails the task at its next row or at close") {
    val fake = new FakePutRecords
    fake.failCall = _ => Some(new IllegalStateException("no such stream"))
    val w = writer(fake)
    w.open(0, 1)
    w.process(Row("a", "k1"))
    val error = intercept[Exception](w.close(null))
    assert(error.getMessage.contains("no such stream"))
  }

  test("a missing column is refused where the writer is made") {
    val error = intercept[IllegalArgumentException](
      new KinesisForeachWriter(StructType(Seq(StructField("data", StringType))), options,
        (_, _, _, _) => throw new AssertionError("no task")))
    assert(error.getMessage.contains("partitionKey"))
  }
}
