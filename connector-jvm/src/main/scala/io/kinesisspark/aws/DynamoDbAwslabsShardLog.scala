package io.kinesisspark.aws

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.services.dynamodb.model.{AttributeValue, DynamoDbException, QueryRequest,
  ResourceNotFoundException}

import io.kinesisspark.KinesisErrors
import io.kinesisspark.switching.{AwslabsPosition, AwslabsShardLog}

/**
 * The awslabs connector's shard positions in DynamoDB (its `kinesis.metadataCommitterType` `DYNAMODB`): one item per
 * batch and shard, keyed by `metadataKey` (the batch id, a string) and `metadataSortKey` (the shard id), holding the
 * `ShardInfo` JSON in `metadataValue`. Read with a consistent query of the batch's key. Its connection is its own:
 * DynamoDB is never the stream's endpoint.
 *
 * {{{
 *   val log = new DynamoDbAwslabsShardLog("kdsc_us-east-1_orders", connection)
 *   try log.positions(41) finally log.close()
 * }}}
 */
final class DynamoDbAwslabsShardLog(table: String, connection: AwsConnection)
    extends AwslabsShardLog with AutoCloseable {
  private val dynamoDb = new DynamoDbClients(connection)
  private val client = dynamoDb.client

  override def name: String = s"DynamoDB table '$table'"

  override def positions(batchId: Long): Seq[AwslabsPosition] =
    try {
      val request = QueryRequest.builder().tableName(table).consistentRead(true)
        .keyConditionExpression("metadataKey = :batch")
        .expressionAttributeValues(Map(":batch" -> AttributeValue.fromS(batchId.toString)).asJava).build()
      client.queryPaginator(request).items().asScala.toSeq.map { item =>
        val shard = Option(item.get("metadataSortKey")).flatMap(v => Option(v.s())).getOrElse("?")
        val where = s"item ($batchId, $shard) of DynamoDB table '$table'"
        val value = Option(item.get("metadataValue")).flatMap(v => Option(v.s()))
          .getOrElse(throw KinesisErrors.notAnAwslabsCheckpoint(where, "it has no string 'metadataValue'"))
        AwslabsPosition.fromJson(value, where)
      }.sortBy(_.shardId)
    } catch {
      case _: ResourceNotFoundException =>
        throw KinesisErrors.awslabsTableNotFound(table, connection.region, connection.endpointDescription)
      case e: DynamoDbException if ErrorClassifier.isAccessDenied(e) =>
        throw KinesisErrors.permissionDenied("Query", s"DynamoDB table '$table'", "dynamodb:Query",
          Some(connection.credentials.description),
          s"${ErrorClassifier.errorCode(e)}: ${ErrorClassifier.errorMessage(e)}", e)
    }

  override def close(): Unit = dynamoDb.close()
}
