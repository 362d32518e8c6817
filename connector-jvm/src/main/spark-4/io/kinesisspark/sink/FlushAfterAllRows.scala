package io.kinesisspark.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.DataWriter

/**
 * Spark 4 hands a writer task all its rows in one `writeAll` call, reads the task's metrics one last time, then
 * commits: flushing at the end of `writeAll` (everything sent and acknowledged) makes those metrics count every
 * row. Spark 3.5 has no `writeAll`; its build has a file of the same name without it (src/main/spark-3.5).
 */
private[sink] trait FlushAfterAllRows extends DataWriter[InternalRow] {
  /** Sends everything still buffered and returns once Kinesis acknowledged it. */
  protected def flush(): Unit

  override def writeAll(rows: java.util.Iterator[InternalRow]): Unit = {
    while (rows.hasNext) write(rows.next())
    flush()
  }
}
