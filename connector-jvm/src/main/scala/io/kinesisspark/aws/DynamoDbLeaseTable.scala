package io.kinesisspark.aws

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.services.dynamodb.model.{DynamoDbException, ResourceNotFoundException, ScanRequest}

import io.kinesisspark.KinesisErrors
import io.kinesisspark.switching.{KclLease, LeaseTable}

/**
 * A KCL application's lease table in DynamoDB, read with a consistent scan (a lease renewed or checkpointed a moment
 * ago is seen as it is now). Its connection is its own: DynamoDB is never the stream's endpoint, and may be in
 * another region or account.
 *
 * {{{
 *   val table = new DynamoDbLeaseTable("orders-app", AwsConnection("us-east-1", None, AwsCredentialsConfig.DefaultChain))
 *   try table.leases() finally table.close()
 * }}}
 */
final class DynamoDbLeaseTable(val name: String, connection: AwsConnection) extends LeaseTable with AutoCloseable {
  private val dynamoDb = new DynamoDbClients(connection)
  private val client = dynamoDb.client

  override def leases(): Seq[KclLease] =
    try {
      client.scanPaginator(ScanRequest.builder().tableName(name).consistentRead(true).build()).items().asScala
        .flatMap(item => KclLease.fromItem(name, item)).toSeq
    } catch {
      case _: ResourceNotFoundException =>
        throw KinesisErrors.leaseTableNotFound(name, connection.region, connection.endpointDescription)
      case e: DynamoDbException if ErrorClassifier.isAccessDenied(e) =>
        throw KinesisErrors.permissionDenied("Scan", s"DynamoDB table '$name'", "dynamodb:Scan",
          Some(connection.credentials.description), s"${ErrorClassifier.errorCode(e)}: ${ErrorClassifier.errorMessage(e)}", e)
    }

  override def close(): Unit = dynamoDb.close()
}
