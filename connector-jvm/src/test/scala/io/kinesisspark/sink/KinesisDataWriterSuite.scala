package io.kinesisspark.sink

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.kpl.{KplAggregate, KplDecoded}

class KinesisDataWriterSuite extends AnyFunSuite {
  import KinesisDataWriterFixture._

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
