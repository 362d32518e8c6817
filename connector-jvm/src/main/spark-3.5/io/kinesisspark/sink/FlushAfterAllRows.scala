package io.kinesisspark.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.DataWriter

/**
 * Spark 3.5 has no `DataWriter.writeAll` (Spark 4 added it; see src/main/spark-4): it calls `write` row by row,
 * reads the task's metrics, then commits, and `commit` flushes. So the last task metrics Spark 3.5 reads (the SQL
 * UI's write node) can miss the rows of the task's final PutRecords calls; each task's commit message, and so the
 * streaming query progress's `sink.metrics`, still counts them all.
 */
private[sink] trait FlushAfterAllRows extends DataWriter[InternalRow] {
  /** Sends everything still buffered and returns once Kinesis acknowledged it. */
  protected def flush(): Unit
}
