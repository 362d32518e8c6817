package io.kinesisspark.switching

import io.kinesisspark.{KinesisErrors, KinesisOptionKeys}
import io.kinesisspark.aws.{AwsConnection, ConnectionOptions}
import io.kinesisspark.options.OptionSpec

/**
 * The connection to DynamoDB of a start where another consumer stopped: a KCL lease table (`kclLeaseTable`) or an
 * awslabs connector's metadata table (`awslabsDynamoDbTable`). DynamoDB is called with the stream's connection
 * options, except where a `dynamoDb*` option replaces one: `dynamoDbRegion` the region, `dynamoDbEndpoint` the
 * endpoint (the stream's `endpoint` never applies to DynamoDB), `dynamoDbAwsAccessKey`, `dynamoDbAwsSecretKey` and
 * `dynamoDbAwsSessionToken` the keys (together), `dynamoDbRoleArn` and `dynamoDbRoleExternalId` the role (together).
 *
 * {{{
 *   DynamoDbConnectionOptions.parse(Map("dynamoDbRegion" -> "eu-west-1").get _, stream)
 *   // AwsConnection("eu-west-1", None, <the stream's credentials>)
 * }}}
 */
object DynamoDbConnectionOptions {
  import KinesisOptionKeys._

  private val DynamoDbUrlExample = "https://dynamodb.us-east-1.amazonaws.com"

  /** The options of DynamoDB's connection. */
  object Spec {
    import io.kinesisspark.options.OptionKind._

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

    val all: Seq[OptionSpec[_]] = Seq(dynamoDbRegion, dynamoDbEndpoint, dynamoDbAwsAccessKey, dynamoDbAwsSecretKey,
      dynamoDbAwsSessionToken, dynamoDbRoleArn, dynamoDbRoleExternalId)
  }

  /** The options that read DynamoDB, one of which must be set for a `dynamoDb*` option to mean anything. */
  val UsedBy: Seq[String] = Seq(KclLeaseTable, AwslabsDynamoDbTable)

  /** Each connection option's DynamoDB counterpart, by the group it replaces its stream counterparts in. */
  private val Keys = Map(AwsAccessKey -> DynamoDbAwsAccessKey, AwsSecretKey -> DynamoDbAwsSecretKey,
    AwsSessionToken -> DynamoDbAwsSessionToken)
  private val Role = Map(RoleArn -> DynamoDbRoleArn, RoleExternalId -> DynamoDbRoleExternalId)
  /** A name no option has: what a stream option DynamoDB does not take reads as. */
  private val NotAnOption = "dynamoDb (no such option)"

  /** Refuses a `dynamoDb*` option when no option that reads DynamoDB is set. */
  def checkUsed(get: String => Option[String]): Unit =
    if (UsedBy.forall(get(_).isEmpty)) {
      Spec.all.map(_.name).find(get(_).isDefined).foreach { o =>
        throw KinesisErrors.optionRequiresOther(o, UsedBy.mkString("' or '"))
      }
    }

  /**
   * @param get    an option's value by name (case-insensitive lookup is the caller's)
   * @param stream the stream's connection: its region is DynamoDB's unless `dynamoDbRegion` is set
   */
  def parse(get: String => Option[String], stream: AwsConnection): AwsConnection = {
    val ownKeys = Keys.values.exists(get(_).isDefined)
    val ownRole = Role.values.exists(get(_).isDefined)
    val name: String => String = {
      case Region   => DynamoDbRegion
      case Endpoint => DynamoDbEndpoint
      case k if ownKeys && Keys.contains(k) => Keys(k)
      // DynamoDB's own keys replace the stream's keys or provider class (the stream's role, if any, still applies).
      case CredentialsProviderClass | CredentialsProviderParam if ownKeys => NotAnOption
      case k if ownRole && Role.contains(k) => Role(k)
      case other => other
    }
    ConnectionOptions.parse(get, Some(stream.region), name, DynamoDbUrlExample)
  }
}
