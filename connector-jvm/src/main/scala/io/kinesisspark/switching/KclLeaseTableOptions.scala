package io.kinesisspark.switching

import io.kinesisspark.{KinesisErrors, KinesisOptionKeys}
import io.kinesisspark.aws.{AwsConnection, ConnectionOptions}
import io.kinesisspark.options.OptionSpec

/**
 * Option `kclLeaseTable`: start where a KCL application stopped, from its lease table, and the connection to
 * DynamoDB that reads it. The table is read with the stream's connection options, except where a `dynamoDb*` option
 * replaces one: `dynamoDbRegion` the region, `dynamoDbEndpoint` the endpoint (the stream's `endpoint` never applies
 * to DynamoDB), `dynamoDbAwsAccessKey`, `dynamoDbAwsSecretKey` and `dynamoDbAwsSessionToken` the keys (together),
 * `dynamoDbRoleArn` and `dynamoDbRoleExternalId` the role (together).
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

  // DynamoDB table names: 3 to 255 characters from a-z, A-Z, 0-9, '_', '-' and '.' (DynamoDB's naming rules).
  private val TableName = "[a-zA-Z0-9_.-]{3,255}".r
  private val DynamoDbUrlExample = "https://dynamodb.us-east-1.amazonaws.com"
  private val TableAccepted = "a DynamoDB table name (3 to 255 characters from a-z, A-Z, 0-9, '_', '-' and '.'): " +
    "the lease table of the KCL application to continue from, named after the application"

  /** The options of the start from a lease table. */
  object Spec {
    import io.kinesisspark.options.OptionKind._

    val kclLeaseTable: OptionSpec[String] = OptionSpec(KclLeaseTable, Text(TableAccepted))
    val dynamoDbRegion: OptionSpec[String] = OptionSpec(DynamoDbRegion, Text(ConnectionOptions.RegionAccepted))
    val dynamoDbEndpoint: OptionSpec[String] =
      OptionSpec(DynamoDbEndpoint, Text(ConnectionOptions.urlAccepted(DynamoDbUrlExample)))
    val dynamoDbAwsAccessKey: OptionSpec[String] =
      OptionSpec(DynamoDbAwsAccessKey, Text(s"an access key id, with '$DynamoDbAwsSecretKey'"))
    val dynamoDbAwsSecretKey: OptionSpec[String] =
      OptionSpec(DynamoDbAwsSecretKey, Text(s"a secret access key, with '$DynamoDbAwsAccessKey'"))
    val dynamoDbAwsSessionToken: OptionSpec[String] =
      OptionSpec(DynamoDbAwsSessionToken, Text(s"the session token of temporary keys, with '$DynamoDbAwsAccessKey'"))
    val dynamoDbRoleArn: OptionSpec[String] = OptionSpec(DynamoDbRoleArn, Text(ConnectionOptions.RoleArnAccepted))
    val dynamoDbRoleExternalId: OptionSpec[String] =
      OptionSpec(DynamoDbRoleExternalId, Text(ConnectionOptions.ExternalIdAccepted))

    val all: Seq[OptionSpec[_]] = Seq(kclLeaseTable, dynamoDbRegion, dynamoDbEndpoint, dynamoDbAwsAccessKey,
      dynamoDbAwsSecretKey, dynamoDbAwsSessionToken, dynamoDbRoleArn, dynamoDbRoleExternalId)
  }

  /** Each connection option's DynamoDB counterpart, by the group it replaces its stream counterparts in. */
  private val Keys = Map(AwsAccessKey -> DynamoDbAwsAccessKey, AwsSecretKey -> DynamoDbAwsSecretKey,
    AwsSessionToken -> DynamoDbAwsSessionToken)
  private val Role = Map(RoleArn -> DynamoDbRoleArn, RoleExternalId -> DynamoDbRoleExternalId)

  /**
   * @param get    an option's value by name (case-insensitive lookup is the caller's)
   * @param stream the stream's connection: its region is DynamoDB's unless `dynamoDbRegion` is set
   * @return `None` when `kclLeaseTable` is not set (then no `dynamoDb*` option may be)
   */
  def parse(get: String => Option[String], stream: AwsConnection): Option[KclLeaseTableOptions] =
    get(KclLeaseTable).map(_.trim) match {
      case None =>
        Spec.all.map(_.name).find(get(_).isDefined).foreach(o => throw KinesisErrors.optionRequiresOther(o, KclLeaseTable))
        None
      case Some(table) =>
        if (!TableName.pattern.matcher(table).matches()) throw KinesisErrors.invalidOption(KclLeaseTable, table, TableAccepted)
        val ownKeys = Keys.values.exists(get(_).isDefined)
        val ownRole = Role.values.exists(get(_).isDefined)
        val name: String => String = {
          case Region   => DynamoDbRegion
          case Endpoint => DynamoDbEndpoint
          case k if ownKeys && Keys.contains(k) => Keys(k)
          case k if ownRole && Role.contains(k) => Role(k)
          case other => other
        }
        Some(KclLeaseTableOptions(table, ConnectionOptions.parse(get, Some(stream.region), name, DynamoDbUrlExample)))
    }
}
