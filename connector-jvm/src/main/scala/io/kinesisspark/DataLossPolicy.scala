package io.kinesisspark

import org.slf4j.LoggerFactory

/**
 * The one place that decides what happens when records the query still needs are gone from Kinesis:
 * with `failOnDataLoss` (the default) the query fails with a message naming stream, shard and what was lost;
 * otherwise the loss is logged and reading continues from the oldest record still available.
 */
final case class DataLossPolicy(failOnDataLoss: Boolean) {
  def report(stream: String, shardId: String, what: String): Unit = {
    if (failOnDataLoss) throw KinesisErrors.dataLoss(stream, shardId, what)
    DataLossPolicy.log.warn(s"Data loss in Kinesis stream '$stream', shard $shardId: $what. Continuing because " +
      "option 'failOnDataLoss' is false.")
  }
}

object DataLossPolicy {
  private val log = LoggerFactory.getLogger(classOf[DataLossPolicy])
}
