package io.kinesisspark.switching

import io.kinesisspark.{KinesisErrors, KinesisOptionKeys}
import io.kinesisspark.aws.AwsConnection
import io.kinesisspark.options.OptionSpec

/**
 * Option `awslabsCheckpointLocation`: start where a query of the awslabs connector (spark-sql-kinesis-connector)
 * stopped, from its checkpoint location (Spark's `commits/` and `offsets/` logs there) and its per-shard positions:
 * in `<awslabsMetadataPath, or the checkpoint's sources/<n>>/shard-source/`, or in DynamoDB table
 * `awslabsDynamoDbTable` when the old query kept them there (its `kinesis.metadataCommitterType` `DYNAMODB`), read
 * with [[DynamoDbConnectionOptions]].
 *
 * {{{
 *   AwslabsCheckpointOptions.parse(Map("awslabsCheckpointLocation" -> "s3://bucket/checkpoints/orders").get _, stream)
 *   // Some(AwslabsCheckpointOptions("s3://bucket/checkpoints/orders", None, None))
 * }}}
 *
 * @param checkpointLocation the old query's `checkpointLocation`
 * @param metadataPath       its `kinesis.metadataPath`, where it set one
 * @param dynamoDb           its DynamoDB table (`kinesis.dynamodb.tableName`) and the connection that reads it
 */
final case class AwslabsCheckpointOptions(checkpointLocation: String, metadataPath: Option[String],
    dynamoDb: Option[(String, AwsConnection)])

object AwslabsCheckpointOptions {
  import KinesisOptionKeys._

  /** The options of the start from an awslabs checkpoint. */
  object Spec {
    import io.kinesisspark.options.OptionKind._

    val awslabsCheckpointLocation: OptionSpec[String] = OptionSpec(AwslabsCheckpointLocation, Text(
      "the checkpoint location of the awslabs connector's query to continue from (a path or URI Spark's file " +
        "systems read, such as s3a://bucket/checkpoints/orders)"))
    val awslabsMetadataPath: OptionSpec[String] = OptionSpec(AwslabsMetadataPath, Text(
      s"the old query's 'kinesis.metadataPath', where it set one (with '$AwslabsCheckpointLocation')"))
    val awslabsDynamoDbTable: OptionSpec[String] = OptionSpec(AwslabsDynamoDbTable, Text(TableNames.accepted(
      s"the old query's 'kinesis.dynamodb.tableName' (by default kdsc_<region>_<stream>), where its " +
        s"'kinesis.metadataCommitterType' was DYNAMODB (with '$AwslabsCheckpointLocation')")))

    val all: Seq[OptionSpec[_]] = Seq(awslabsCheckpointLocation, awslabsMetadataPath, awslabsDynamoDbTable)
  }

  /**
   * @param get    an option's value by name (case-insensitive lookup is the caller's)
   * @param stream the stream's connection: DynamoDB's unless a `dynamoDb*` option replaces a part of it
   * @return `None` when `awslabsCheckpointLocation` is not set (then neither of the other two may be)
   */
  def parse(get: String => Option[String], stream: AwsConnection): Option[AwslabsCheckpointOptions] = {
    def text(name: String): Option[String] = get(name).map(_.trim)
    // Each value on its own first, as the Python package checks each when it is set; then the three together.
    for (spec <- Seq(Spec.awslabsCheckpointLocation, Spec.awslabsMetadataPath); value <- text(spec.name)) {
      if (value.isEmpty) throw KinesisErrors.invalidOption(spec.name, value, spec.kind.accepted)
    }
    text(AwslabsDynamoDbTable)
      .foreach(TableNames.check(AwslabsDynamoDbTable, _, Spec.awslabsDynamoDbTable.kind.accepted))
    text(AwslabsCheckpointLocation) match {
      case None =>
        Seq(AwslabsMetadataPath, AwslabsDynamoDbTable).find(get(_).isDefined)
          .foreach(o => throw KinesisErrors.optionRequiresOther(o, AwslabsCheckpointLocation))
        None
      case Some(location) =>
        if (get(AwslabsMetadataPath).isDefined && get(AwslabsDynamoDbTable).isDefined) {
          // The old query kept its positions in one place: files under its metadata path, or DynamoDB.
          throw KinesisErrors.conflictingOptions(AwslabsMetadataPath, AwslabsDynamoDbTable)
        }
        val table = text(AwslabsDynamoDbTable).map(_ -> DynamoDbConnectionOptions.parse(get, stream))
        Some(AwslabsCheckpointOptions(location, text(AwslabsMetadataPath), table))
    }
  }
}
