package io.kinesisspark.sink

/**
 * Where the sink of `format("aws-kinesis")` follows the awslabs connector's sink rather than ours, so that a job
 * moved from it writes what it wrote before.
 *
 * {{{
 *   KinesisSinkOptions.parse(options, SinkFlavour.Awslabs).aggregation  // true unless 'aggregation' says otherwise
 * }}}
 *
 * @param defaultAggregation      `aggregation` when not set: the awslabs sink aggregates by default
 * @param routesByStreamNameColumn whether a `streamName` column names each row's stream. Not for the alias: rows
 *                                read with `format("aws-kinesis")` have a `streamName` column naming the stream they
 *                                came from, which the awslabs sink ignores; routing by it would write them back there.
 */
sealed abstract class SinkFlavour(val defaultAggregation: Boolean, val routesByStreamNameColumn: Boolean)

object SinkFlavour {
  /** `format("kinesis")`. */
  case object Kinesis extends SinkFlavour(defaultAggregation = false, routesByStreamNameColumn = true)
  /** `format("aws-kinesis")`. */
  case object Awslabs extends SinkFlavour(defaultAggregation = true, routesByStreamNameColumn = false)
}
