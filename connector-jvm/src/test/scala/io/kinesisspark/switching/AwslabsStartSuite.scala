package io.kinesisspark.switching

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{InitialPosition, KinesisSourceOptions, KinesisSparkException}
import io.kinesisspark.InitialPosition._
import io.kinesisspark.aws.{SequenceNumberRange, ShardInfo}

class AwslabsStartSuite extends AnyFunSuite {
  private val Stream = "orders"
  private val Source = "checkpoint '/tmp/q' (batch 7)"

  private def id(n: Int) = f"shardId-$n%012d"

  /** Shard `n` with its parents, holding sequence numbers from n * 1000 (to n * 1000 + 999 once closed). */
  private def shard(n: Int, parents: Int*)(closed: Boolean = false): ShardInfo =
    ShardInfo(id(n), parents.map(id), closed,
      sequenceNumberRange = Some(SequenceNumberRange(BigInt(n * 1000), if (closed) Some(BigInt(n * 1000 + 999)) else None)))

  private def after(n: Int, seq: Int, sub: Long = -1L, last: Boolean = true) =
    AwslabsPosition(id(n), AwslabsPosition.AfterSequenceNumber, seq.toString, sub, last)
  private def sentinel(n: Int, kind: String, position: String = "") = AwslabsPosition(id(n), kind, position, -1L, true)

  private def plan(positions: Seq[AwslabsPosition], listed: Seq[ShardInfo], failOnDataLoss: Boolean = true,
      default: InitialPosition = Latest): StartPlan =
    AwslabsStart.plan(Stream, Source, positions, listed, default, failOnDataLoss)

  test("each shard starts just after its position: a plain record whole, inside an aggregate after the user record") {
    val listed = Seq(shard(1)(), shard(2)(), shard(3)(), shard(4)(), shard(5)())
    val p = plan(Seq(after(1, 1005), after(2, 2007, sub = 3L, last = false), after(3, 3009, sub = 4L, last = true),
      AwslabsPosition(id(4), AwslabsPosition.AtSequenceNumber, "4002", -1L, true)), listed)
    assert(p.position == PerShard(Latest, Map(
      (Stream, id(1)) -> AfterSequenceNumber("1005"),
      // User record 3 of an aggregate that has more: the rest of it is still to read.
      (Stream, id(2)) -> AfterSequenceNumber("2007", Some(3L)),
      // The aggregate's last user record: the whole record was read.
      (Stream, id(3)) -> AfterSequenceNumber("3009"),
      (Stream, id(4)) -> AtSequenceNumber("4002"))))
    assert(p.notes.isEmpty)
  }

  test("sentinels: nothing read yet starts where the old query would; LATEST at the beginning, with a note") {
    val listed = Seq(shard(1)(), shard(2)(), shard(3)())
    val p = plan(Seq(sentinel(1, "TRIM_HORIZON"), sentinel(2, "AT_TIMESTAMP", "1700000000000"), sentinel(3, "LATEST")),
      listed)
    assert(p.position.shards == Map((Stream, id(1)) -> TrimHorizon, (Stream, id(2)) -> AtTimestamp(1700000000000L),
      (Stream, id(3)) -> TrimHorizon))
    assert(p.notes.size == 1 && p.notes.head.contains(id(3)) && p.notes.head.contains("trim_horizon"))
  }

  test("SHARD_END counts as read; children start at their beginning, ancestors count as read, others the default") {
    // 0 split into 1 and 2; 1 finished by the old query and split into 3 and 4; 2 still being read; 9 unrelated.
    val listed = Seq(shard(0)(closed = true), shard(1, 0)(closed = true), shard(2, 0)(), shard(3, 1)(), shard(4, 1)(),
      shard(9)())
    val p = plan(Seq(sentinel(1, "SHARD_END"), after(2, 2050)), listed)
    assert(p.position.shards == Map(
      (Stream, id(0)) -> ShardEnd, (Stream, id(1)) -> ShardEnd, (Stream, id(2)) -> AfterSequenceNumber("2050"),
      (Stream, id(3)) -> TrimHorizon, (Stream, id(4)) -> TrimHorizon))
    assert(p.position.default == Latest)
  }

  test("positions in shards retention removed: data loss, unless failOnDataLoss is false; their children count") {
    val listed = Seq(shard(3, 1)(), shard(4, 1)(), shard(2)())
    val positions = Seq(after(1, 1500), after(2, 2001))
    val e = intercept[KinesisSparkException](plan(positions, listed))
    assert(e.getMessage.contains(id(1)) && e.getMessage.contains("awslabs checkpoint '/tmp/q' (batch 7)"))
    val p = plan(positions, listed, failOnDataLoss = false)
    assert(p.position.shards == Map((Stream, id(2)) -> AfterSequenceNumber("2001"), (Stream, id(3)) -> TrimHorizon,
      (Stream, id(4)) -> TrimHorizon))
    assert(p.notes.exists(n => n.contains(id(1)) && n.contains("lost")))
    // A finished shard that is gone lost nothing.
    assert(plan(Seq(sentinel(1, "SHARD_END"), after(2, 2001)), listed).notes.isEmpty)
  }

  test("positions of another stream, or outside their shard, are refused naming the checkpoint") {
    val other = intercept[IllegalArgumentException](plan(Seq(after(7, 7001)), Seq(shard(1)())))
    assert(other.getMessage.contains("none of which stream 'orders' has"))
    val outside = intercept[IllegalArgumentException](plan(Seq(after(1, 500)), Seq(shard(1)())))
    assert(outside.getMessage.contains("at sequence number 500, outside the shard's sequence numbers"))
  }

  test("a ShardInfo parses as the awslabs connector writes it, and a broken one is refused naming where it is") {
    val json = s"""{"shardId":"${id(1)}","iteratorType":"after_sequence_number","iteratorPosition":"1005",""" +
      """"subSequenceNumber":2,"isLast":false}"""
    assert(AwslabsPosition.fromJson(json, "f") == after(1, 1005, 2L, last = false))
    val bad = intercept[IllegalArgumentException](AwslabsPosition.fromJson(json.replace("1005", "x"), "file f"))
    assert(bad.getMessage.startsWith("file f is not an awslabs connector shard position: its iteratorPosition 'x'"))
    val kind = intercept[IllegalArgumentException](AwslabsPosition.fromJson(json.replace("after_", "before_"), "f"))
    assert(kind.getMessage.contains("its iteratorType is 'BEFORE_SEQUENCE_NUMBER'"))
  }

  /** A checkpoint location as Spark and the awslabs connector write it (one awslabs source, its shard files). */
  private def checkpoint(committed: Seq[Long], offsets: Map[Long, String], shardFiles: Map[(Long, String), String])
      : Path = {
    val root = Files.createTempDirectory("awslabs-checkpoint")
    def write(rel: String, text: String): Unit = {
      val f = root.resolve(rel)
      Files.createDirectories(f.getParent)
      Files.write(f, text.getBytes(StandardCharsets.UTF_8))
    }
    committed.foreach(b => write(s"commits/$b", "v1\n{\"nextBatchWatermarkMs\":0}"))
    offsets.foreach { case (b, line) => write(s"offsets/$b", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n" + line) }
    shardFiles.foreach { case ((b, shard), text) => write(s"sources/0/shard-source/$b/$shard", text) }
    root
  }

  private def offsetLine(batch: Long, stream: String, shards: (String, String, Long, Boolean)*): String =
    "{" + (s""""metadata":{"streamName":"$stream","batchId":"$batch"}""" +: shards.map { case (shard, seq, sub, last) =>
      s""""$shard":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"$seq","subSequenceNumber":"$sub",""" +
        s""""isLast":"$last"}"""
    }).mkString(",") + "}"

  private def shardFile(shard: String, seq: String, sub: Long, last: Boolean) =
    s"""{"shardId":"$shard","iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"$seq",""" +
      s""""subSequenceNumber":$sub,"isLast":$last}"""

  test("the checkpoint: the last committed batch's offsets, overridden by where that batch left each shard it read") {
    val root: Path = checkpoint(Seq(0L, 1L),
      Map(1L -> offsetLine(1, Stream, (id(1), "1001", -1L, true), (id(2), "2001", -1L, true)),
        // Batch 2 was planned but never committed: its positions must not count.
        2L -> offsetLine(2, Stream, (id(1), "1009", -1L, true), (id(2), "2009", -1L, true))),
      Map((1L, id(1)) -> shardFile(id(1), "1004", 1L, last = false), (2L, id(1)) -> shardFile(id(1), "1009", -1L, true)))
    val conf = new Configuration()
    val reader = new AwslabsCheckpoint(root.toString, conf)
    val last = reader.lastCommitted(Stream)
    assert(last.batchId == 1L && last.sourceIndex == 0)
    val log = new AwslabsShardFiles(reader.sourcePath(last.sourceIndex), conf)
    // Shard 2 was not read in batch 1 (no file): it stays where batch 1 started it.
    assert(AwslabsCheckpoint.positionsAfter(last, log, root.toString) ==
      Seq(after(1, 1004, 1L, last = false), after(2, 2001)))
    val stream = intercept[IllegalArgumentException](reader.lastCommitted("payments"))
    assert(stream.getMessage.contains("hold no awslabs connector source of stream 'payments' (its awslabs sources " +
      "read 'orders')"))
    val empty = intercept[IllegalArgumentException](
      new AwslabsCheckpoint(Files.createTempDirectory("empty").toString, conf).lastCommitted(Stream))
    assert(empty.getMessage.contains("holds no committed batch"))
    val missing = intercept[IllegalArgumentException](
      new AwslabsCheckpoint(root.resolve("nowhere").toString, conf).lastCommitted(Stream))
    assert(missing.getMessage.contains(s"Checkpoint location '${root.resolve("nowhere")}'") &&
      missing.getMessage.contains("does not exist"))
    val noFiles = intercept[IllegalArgumentException](AwslabsCheckpoint.positionsAfter(last,
      new AwslabsShardFiles(root.resolve("elsewhere").toString, conf), root.toString))
    assert(noFiles.getMessage.contains("holds no shard position for awslabs batch 1") &&
      noFiles.getMessage.contains("'awslabsMetadataPath'"))
  }

  test("shard positions are filed under the awslabs connector's own batch number; LATEST keeps its timestamp") {
    // Spark batch 1 ran for another reason while this source's offset stayed: Spark's batch 2 is awslabs batch 1.
    // Shard 2 was started at AT_TIMESTAMP (the awslabs default, LATEST, at the query's start) and never read.
    def at(batch: Long) = s"""{"metadata":{"streamName":"$Stream","batchId":"$batch"},""" +
      s""""${id(1)}":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"1001","subSequenceNumber":"-1",""" +
      s""""isLast":"true"},"${id(2)}":{"iteratorType":"AT_TIMESTAMP","iteratorPosition":"1700000000000",""" +
      s""""subSequenceNumber":"-1","isLast":"true"}}"""
    val latest = s"""{"shardId":"${id(2)}","iteratorType":"LATEST","iteratorPosition":"","subSequenceNumber":-1,""" +
      """"isLast":true}"""
    val root: Path = checkpoint(Seq(0L, 1L, 2L), Map(0L -> at(0), 1L -> at(0), 2L -> at(1), 3L -> at(2)),
      Map((1L, id(1)) -> shardFile(id(1), "1007", -1L, last = true), (1L, id(2)) -> latest,
        // Awslabs batch 2 (Spark's 3) read but never committed.
        (2L, id(1)) -> shardFile(id(1), "1009", -1L, last = true)))
    val conf = new Configuration()
    val reader = new AwslabsCheckpoint(root.toString, conf)
    val last = reader.lastCommitted(Stream)
    assert(last.batchId == 2L && last.sourceBatchId == 1L)
    val positions = AwslabsCheckpoint.positionsAfter(last, new AwslabsShardFiles(reader.sourcePath(0), conf), "q")
    assert(positions == Seq(after(1, 1007), sentinel(2, "AT_TIMESTAMP", "1700000000000")))
    assert(AwslabsStart.plan(Stream, Source, positions, Seq(shard(1)(), shard(2)()), Latest, failOnDataLoss = true)
      .position.shards((Stream, id(2))) == AtTimestamp(1700000000000L))
  }

  test("the options: a checkpoint location, with a metadata path or a DynamoDB table, one stream, no per-shard start") {
    def options(extra: (String, String)*) = KinesisSourceOptions.parse(Map("streamName" -> Stream,
      "region" -> "us-east-1") ++ extra)
    val plain = options("awslabsCheckpointLocation" -> " s3a://b/q ").awslabsCheckpoint.get
    assert(plain == AwslabsCheckpointOptions("s3a://b/q", None, None))
    val table = options("awslabsCheckpointLocation" -> "/q", "awslabsDynamoDbTable" -> "kdsc_us-east-1_orders",
      "dynamoDbEndpoint" -> "http://127.0.0.1:5000").awslabsCheckpoint.get
    assert(table.dynamoDb.map(_._1).contains("kdsc_us-east-1_orders"))
    assert(table.dynamoDb.get._2.endpoint.map(_.toString).contains("http://127.0.0.1:5000"))
    // DynamoDB's own keys replace the stream's credentials, a provider class among them.
    val own = options("credentialsProviderClass" -> "com.example.Creds", "awslabsCheckpointLocation" -> "/q",
      "awslabsDynamoDbTable" -> "table", "dynamoDbAwsAccessKey" -> "AKIDTABLE", "dynamoDbAwsSecretKey" -> "s")
    assert(own.awslabsCheckpoint.get.dynamoDb.get._2.credentials ==
      io.kinesisspark.aws.AwsCredentialsConfig.StaticKeys("AKIDTABLE", "s", None))
    // Each value on its own before the options together, as Python checks them.
    assert(refused("awslabsDynamoDbTable" -> "ab").contains("Invalid value 'ab' for option 'awslabsDynamoDbTable'"))
    assert(refused("kclLeaseTable" -> "a b", "awslabsMetadataPath" -> "/m")
      .contains("Invalid value 'a b' for option 'kclLeaseTable'"))
    assert(refused("kclLeaseTable" -> "app", "dynamoDbAwsAccessKey" -> "A", "awslabsMetadataPath" -> "/m") ==
      "Option 'awslabsMetadataPath' is set but 'awslabsCheckpointLocation' is not: set both or neither.")
    def refused(extra: (String, String)*) = intercept[IllegalArgumentException](options(extra: _*)).getMessage
    assert(refused("awslabsMetadataPath" -> "/m") ==
      "Option 'awslabsMetadataPath' is set but 'awslabsCheckpointLocation' is not: set both or neither.")
    assert(refused("awslabsCheckpointLocation" -> "/q", "awslabsMetadataPath" -> "/m", "awslabsDynamoDbTable" -> "t12")
      .contains("Options 'awslabsMetadataPath' and 'awslabsDynamoDbTable' cannot be used together"))
    assert(refused("awslabsCheckpointLocation" -> "/q", "kclLeaseTable" -> "app")
      .contains("Options 'kclLeaseTable' and 'awslabsCheckpointLocation' cannot be used together"))
    assert(refused("awslabsCheckpointLocation" -> "/q", "initialPosition" -> s"""{"shards": {"${id(1)}": "latest"}}""")
      .contains("Options 'awslabsCheckpointLocation' and 'initialPosition' cannot be used together"))
    assert(refused("awslabsCheckpointLocation" -> "/q", "streamName" -> "a,b")
      .contains("one stream with 'awslabsCheckpointLocation'"))
    assert(refused("awslabsCheckpointLocation" -> " ").contains("Invalid value '' for option 'awslabsCheckpointLocation'"))
    assert(refused("awslabsCheckpointLocation" -> "/q", "awslabsDynamoDbTable" -> "a b")
      .contains("Invalid value 'a b' for option 'awslabsDynamoDbTable'"))
  }
}
