package io.kinesisspark.sink

import java.nio.charset.StandardCharsets

import io.kinesisspark.aws.PutEntry

/**
 * One Kinesis record the sink puts: a row, or a KPL aggregate of rows, with what it stands for.
 *
 * {{{
 *   SinkEntry("clicks", PutEntry("user-1", None, bytes), orderKey = "user-1", userRecords = 1,
 *     userBytes = bytes.length + 6, predictedShard = Some("shardId-000000000001"), aggregated = false)
 * }}}
 *
 * @param orderKey       entries with the same order key are kept in order under `preserveKeyOrder`: the partition
 *                       key of a row, the shard of an aggregate
 * @param userRecords    rows it holds (1, or the rows of an aggregate)
 * @param userBytes      those rows' data and partition key bytes
 * @param predictedShard the shard its hash key falls in, as the [[ShardMap]] said; `None` when the sink needs no
 *                       shard map (no aggregation, no pacing)
 * @param aggregated     a KPL aggregate of rows (of the predicted shard), not a row put alone
 */
final case class SinkEntry(stream: String, put: PutEntry, orderKey: String, userRecords: Int, userBytes: Long,
    predictedShard: Option[String], aggregated: Boolean = false) {
  /** What Kinesis counts against its limits: data and partition key. */
  val size: Int = put.data.length + SinkEntry.utf8Length(put.partitionKey)
}

object SinkEntry {
  def utf8Length(s: String): Int = s.getBytes(StandardCharsets.UTF_8).length
}

/**
 * A [[SinkEntry]] on its way through the sender: its place in the task's order, how often it was tried, when it
 * may be tried again, and the last error Kinesis gave for it.
 */
final class PendingEntry(val seq: Long, val entry: SinkEntry) {
  /** Times it was sent and refused. */
  var attempts = 0
  /** Of those, the ones that count against `maxPutRetries` (see [[PutRecordsSender]]). */
  var retriesUsed = 0
  var notBeforeMillis = 0L
  /** Paced: when its shard's pacer took it for its latest send, on the pacer's clock. */
  var takenAt = 0L
  var lastErrorCode: String = ""
  var lastErrorMessage: String = ""
}
