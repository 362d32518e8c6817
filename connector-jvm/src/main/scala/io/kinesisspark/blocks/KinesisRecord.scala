package io.kinesisspark.blocks

import io.kinesisspark.ShardPosition.AfterRecord

/**
 * One user record as the source returns it. For a KPL-aggregated Kinesis record there is one of these per
 * sub-record, all sharing the Kinesis sequence number and told apart by `subSequenceNumber`.
 */
final case class KinesisRecord(
    partitionKey: String,
    data: Array[Byte],
    sequenceNumber: String,
    subSequenceNumber: Option[Long],
    approximateArrivalMillis: Long) {

  def position: AfterRecord = AfterRecord(sequenceNumber, subSequenceNumber)
}
