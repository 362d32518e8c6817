package io.kinesisspark.sink

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** `DataWriter.writeAll` exists from Spark 4 on (see FlushAfterAllRows); so does this suite. */
class KinesisDataWriterWriteAllSuite extends AnyFunSuite {
  import KinesisDataWriterFixture._

  test("writeAll returns with every row acknowledged, so the metrics Spark reads before commit count them all") {
    val fake = new FakePutRecords
    val (w, _) = writer(fake, aggregation = false)
    w.writeAll(rows(1200).asJava)
    assert(fake.data("s").size == 1200)
    assert(metric(w, SinkMetrics.RecordsWritten) == 1200 && metric(w, SinkMetrics.PutRecordsCalls) == 3)
    val message = w.commit().asInstanceOf[KinesisWriterCommitMessage]
    assert(message.metrics(SinkMetrics.RecordsWritten) == 1200 && fake.calls.size == 3) // nothing left to send
  }
}
