package io.kinesisspark.switching

import io.kinesisspark.KinesisOptionKeys
import io.kinesisspark.aws.AwsConnection
import io.kinesisspark.options.OptionSpec

/**
 * Option `kclLeaseTable`: start where a KCL application stopped, from its lease table, and the connection to
 * DynamoDB that reads it ([[DynamoDbConnectionOptions]]).
 *
 * {{{
 *   KclLeaseTableOptions.parse(Map("kclLeaseTable" -> "orders-app", "dynamoDbRegion" -> "eu-west-1").get _, stream)
 *   // Some(KclLeaseTableOptions("orders-app", AwsConnection("eu-west-1", None, <the stream's credentials>)))
 * }}}
 *
 * @param table      the lease table's name (a KCL application's is the application's name)
 * @param connection where and how DynamoDB is called
 */
final case class KclLeaseTableOptions(table: String, connection: AwsConnection)

object KclLeaseTableOptions {
  import KinesisOptionKeys._

  /** The options of the start from a lease table (DynamoDB's connection is [[DynamoDbConnectionOptions.Spec]]). */
  object Spec {
    import io.kinesisspark.options.OptionKind._

    val kclLeaseTable: OptionSpec[String] = OptionSpec(KclLeaseTable, Text(TableNames.accepted(
      "the lease table of the KCL application to continue from, named after the application")))

    val all: Seq[OptionSpec[_]] = Seq(kclLeaseTable)
  }

  /**
   * @param get    an option's value by name (case-insensitive lookup is the caller's)
   * @param stream the stream's connection: its region is DynamoDB's unless `dynamoDbRegion` is set
   * @return `None` when `kclLeaseTable` is not set
   */
  def parse(get: String => Option[String], stream: AwsConnection): Option[KclLeaseTableOptions] =
    table(get).map(KclLeaseTableOptions(_, DynamoDbConnectionOptions.parse(get, stream)))

  /** The lease table's name, when `kclLeaseTable` is set: checked on its own, before the options as a whole. */
  def table(get: String => Option[String]): Option[String] =
    get(KclLeaseTable).map(_.trim).map { table =>
      TableNames.check(KclLeaseTable, table, Spec.kclLeaseTable.kind.accepted)
      table
    }
}
