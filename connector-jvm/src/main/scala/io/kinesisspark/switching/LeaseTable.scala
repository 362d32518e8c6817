package io.kinesisspark.switching

/**
 * A KCL application's lease table, as the start from it reads it: every lease, read consistently. The DynamoDB one
 * is [[io.kinesisspark.aws.DynamoDbLeaseTable]]; tests give their own.
 *
 * {{{
 *   val table: LeaseTable = new io.kinesisspark.aws.DynamoDbLeaseTable("orders-app", connection)
 *   table.leases().map(_.shardId)   // Seq("shardId-000000000000", ...)
 * }}}
 */
trait LeaseTable {
  /** The table's name, for messages. */
  def name: String

  /** Every lease in the table, as it is now. */
  def leases(): Seq[KclLease]
}
