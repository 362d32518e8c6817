package io.kinesisspark.realtime

/**
 * How a real-time task reaches its batch's book on the driver ([[BatchChildren]], through
 * [[org.apache.spark.kinesisspark.ChildShardChannel]]): to ask which children it may read once it finished a shard,
 * and whether the batch should end early.
 *
 * {{{
 *   BatchLink("kinesis-spark-children-3", batch = 12L)
 * }}}
 *
 * @param endpoint the driver's endpoint of the stream
 * @param batch    which planning of the stream the task belongs to (a task of an earlier batch gets no answer)
 */
final case class BatchLink(endpoint: String, batch: Long)
