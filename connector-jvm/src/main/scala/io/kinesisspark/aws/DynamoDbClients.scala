package io.kinesisspark.aws

import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.dynamodb.DynamoDbClient

/**
 * A DynamoDB client on its own connection (DynamoDB is never the stream's endpoint, and may be in another region or
 * account), closed together with the HTTP client it was built on: the SDK closes only the HTTP clients it built
 * itself.
 *
 * {{{
 *   val dynamoDb = new DynamoDbClients(connection)
 *   try dynamoDb.client.describeTable(...) finally dynamoDb.close()
 * }}}
 */
final class DynamoDbClients(connection: AwsConnection) extends AutoCloseable {
  private val http = HttpClients.sync(connection.tls)

  val client: DynamoDbClient = {
    SdkLogging.capSecretLogging
    val builder = DynamoDbClient.builder()
      .region(Region.of(connection.region))
      .credentialsProvider(CredentialsProviders.get(connection.credentials, connection.tls))
      .httpClient(http)
    connection.endpoint.foreach(builder.endpointOverride)
    builder.build()
  }

  override def close(): Unit = try client.close() finally http.close()
}
