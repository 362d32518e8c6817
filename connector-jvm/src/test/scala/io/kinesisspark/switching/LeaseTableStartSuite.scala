package io.kinesisspark.switching

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{KinesisSourceOptions, ShardPosition}
import io.kinesisspark.InitialPosition._
import io.kinesisspark.aws.FakeKinesisApi
import io.kinesisspark.kpl.{KplAggregateBuilder, UserRecord}
import io.kinesisspark.switching.KclCheckpoint.Checkpointed
import io.kinesisspark.switching.KclStart.RecordAt

class LeaseTableStartSuite extends AnyFunSuite {
  private val Shard0 = "shardId-000000000000"
  private val Shard1 = "shardId-000000000001"

  /** A lease table that answers each read with the next of `reads` (the last one from then on). */
  private final class ScriptedTable(reads: Seq[KclLease]*) extends LeaseTable {
    private var n = 0
    val name = "orders-app"
    def leases(): Seq[KclLease] = { n += 1; reads(math.min(n, reads.size) - 1) }
  }

  private def options(extra: (String, String)*) = KinesisSourceOptions.parse(Map("streamName" -> "s",
    "region" -> "us-east-1", "kclLeaseTable" -> "orders-app", "initialPosition" -> "trim_horizon") ++ extra)

  test("what a checkpointed record is, read from the stream: plain, a KPL aggregate, or trimmed away") {
    val api = new FakeKinesisApi()
    api.add(Shard0, 2)
    val aggregate = api.put(Shard0, "k", KplAggregateBuilder.encode(Seq(UserRecord("a", None, Array[Byte](1)),
      UserRecord("b", None, Array[Byte](2)))))
    val plain = api.shards(Shard0).head.sequenceNumber
    val lookup = LeaseTableStart.recordAt(api, "s") _
    assert(lookup(Shard0, plain) == RecordAt.Plain)
    assert(lookup(Shard0, aggregate) == RecordAt.Aggregate)
    api.trimmedBefore(Shard0) = 1
    assert(lookup(Shard0, plain) == RecordAt.Gone)
    api.refuseTrimmed = true
    assert(lookup(Shard0, plain) == RecordAt.Gone)
  }

  test("a record Kinesis keeps answering nothing for, though the shard holds more, fails the start: never a loss") {
    val api = new FakeKinesisApi() {
      override def getRecords(name: String, iterator: String, limit: Int) =
        super.getRecords(name, iterator, limit).copy(records = Nil, millisBehindLatest = 1000L)
    }
    api.add(Shard0, 2)
    val e = intercept[io.kinesisspark.KinesisSparkException](
      LeaseTableStart.recordAt(api, "s")(Shard0, api.shards(Shard0).head.sequenceNumber))
    assert(e.getMessage.contains(s"Kinesis returned no record in 5 GetRecords calls at sequence number"))
  }

  test("the table is read twice, a renewal window apart; leases renewed meanwhile are named in a warning") {
    val api = new FakeKinesisApi()
    api.add(Shard0, 3)
    api.add(Shard1, 3)
    val seq = api.shards(Shard0)(1).sequenceNumber
    val first = Seq(KclLease(Shard0, None, Shard0, Checkpointed(seq, 0L), 10L, Some("worker-a")),
      KclLease(Shard1, None, Shard1, KclCheckpoint.NotYet("TRIM_HORIZON"), 4L, Some("worker-b")))
    // Between the reads worker-a renewed its lease and checkpointed one record further.
    val later = api.shards(Shard0)(2).sequenceNumber
    val second = first.head.copy(checkpoint = Checkpointed(later, 0L), counter = 11L) +: first.tail
    var slept = Seq.empty[Long]
    val start = LeaseTableStart.plan(options(), new ScriptedTable(first, second), api, ms => slept :+= ms)
    assert(slept == Seq(LeaseTableStart.RenewalWindowMs))
    assert(start.position == PerShard(TrimHorizon, Map(("s", Shard0) -> AfterSequenceNumber(later),
      ("s", Shard1) -> TrimHorizon)))
    assert(start.notes.head.startsWith(s"The leases of shards $Shard0 in lease table 'orders-app' were renewed " +
      "while it was read (by worker-a): the KCL application is still running."))
    assert(start.position.shardPositions("s", api.listShards("s", 100), 1L)(Shard0) == ShardPosition.AfterRecord(later))
  }

  test("a single-stream application's table cannot serve a query of several streams") {
    val table = new ScriptedTable(Seq(KclLease(Shard0, None, Shard0, KclCheckpoint.ShardEnd, 1L, None)))
    val e = intercept[IllegalArgumentException](
      LeaseTableStart.plan(options("streamName" -> "s,t"), table, new FakeKinesisApi(), _ => ()))
    assert(e.getMessage.contains("Lease table 'orders-app' (option 'kclLeaseTable') is a single-stream KCL"))
  }

  test("the lease table's options: DynamoDB's own region, endpoint and credentials, the stream's otherwise") {
    val plain = options("awsAccessKey" -> "AKIDSTREAM", "awsSecretKey" -> "stream-secret").kclLeaseTable.get
    assert(plain.table == "orders-app")
    assert(plain.connection.region == "us-east-1" && plain.connection.endpoint.isEmpty)
    assert(plain.connection.credentials == options("awsAccessKey" -> "AKIDSTREAM",
      "awsSecretKey" -> "stream-secret").connection.credentials)
    val own = options("endpoint" -> "http://127.0.0.1:4567", "dynamoDbRegion" -> "eu-west-1",
      "dynamoDbEndpoint" -> "http://127.0.0.1:5000", "awsAccessKey" -> "AKIDSTREAM", "awsSecretKey" -> "stream-secret",
      "dynamoDbAwsAccessKey" -> "AKIDTABLE", "dynamoDbAwsSecretKey" -> "table-secret").kclLeaseTable.get
    assert(own.connection.region == "eu-west-1")
    assert(own.connection.endpoint.map(_.toString).contains("http://127.0.0.1:5000"))
    assert(own.connection.credentials ==
      io.kinesisspark.aws.AwsCredentialsConfig.StaticKeys("AKIDTABLE", "table-secret", None))
    // The stream's endpoint is never DynamoDB's.
    assert(options("endpoint" -> "http://127.0.0.1:4567").kclLeaseTable.get.connection.endpoint.isEmpty)
    val half = intercept[IllegalArgumentException](options("dynamoDbAwsAccessKey" -> "AKIDTABLE"))
    assert(half.getMessage == "Option 'dynamoDbAwsAccessKey' is set but 'dynamoDbAwsSecretKey' is not: set both or neither.")
    val url = intercept[IllegalArgumentException](options("dynamoDbEndpoint" -> "localhost:5000"))
    assert(url.getMessage.contains("'dynamoDbEndpoint'") && url.getMessage.contains("https://dynamodb.us-east-1"))
    val alone = intercept[IllegalArgumentException](KinesisSourceOptions.parse(Map("streamName" -> "s",
      "region" -> "us-east-1", "dynamoDbRegion" -> "eu-west-1")))
    assert(alone.getMessage ==
      "Option 'dynamoDbRegion' is set but 'kclLeaseTable' or 'awslabsDynamoDbTable' is not: set both or neither.")
    val perShard = intercept[IllegalArgumentException](options("initialPosition" ->
      s"""{"shards": {"$Shard0": "trim_horizon"}}"""))
    assert(perShard.getMessage.contains("Options 'kclLeaseTable' and 'initialPosition' cannot be used together"))
    val name = intercept[IllegalArgumentException](options("kclLeaseTable" -> "a b"))
    assert(name.getMessage.contains("Invalid value 'a b' for option 'kclLeaseTable'"))
  }
}
