package io.kinesisspark.switching

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.dynamodb.model.AttributeValue

import io.kinesisspark.{InitialPosition, KinesisSparkException, ShardPosition}
import io.kinesisspark.InitialPosition._
import io.kinesisspark.aws.{SequenceNumberRange, ShardInfo}
import io.kinesisspark.switching.KclStart.RecordAt

class KclStartSuite extends AnyFunSuite {
  private val Stream = "orders"
  private val Table = "orders-app"

  private def id(n: Int) = f"shardId-$n%012d"

  /** Shard `n` with its parents, holding sequence numbers from n * 1000 (to n * 1000 + 999 once closed). */
  private def shard(n: Int, parents: Int*)(closed: Boolean = false): ShardInfo =
    ShardInfo(id(n), parents.map(id), closed,
      sequenceNumberRange = Some(SequenceNumberRange(BigInt(n * 1000), if (closed) Some(BigInt(n * 1000 + 999)) else None)))

  private def lease(n: Int, checkpoint: KclCheckpoint, stream: Option[String] = None, counter: Long = 1L) =
    KclLease(stream.fold(id(n))(s => s"123456789012:$s:1700000000:${id(n)}"), stream, id(n), checkpoint, counter,
      Some("worker-1"))

  private def at(seq: Int, sub: Long = 0L) = KclCheckpoint.Checkpointed(seq.toString, sub)

  private def plan(leases: Seq[KclLease], listed: Seq[ShardInfo], records: Map[String, RecordAt] = Map.empty,
      failOnDataLoss: Boolean = true, default: InitialPosition = Latest): StartPlan =
    KclStart.plan(Stream, Table, leases, listed, default, (_, seq) => records.getOrElse(seq, RecordAt.Plain),
      failOnDataLoss)

  test("each shard starts just after its checkpoint: a plain record whole, an aggregate after the user record") {
    val listed = Seq(shard(1)(), shard(2)(), shard(3)(), shard(4)())
    val p = plan(Seq(lease(1, at(1005)), lease(2, at(2007)), lease(3, at(3009, 4L))), listed,
      records = Map("2007" -> RecordAt.Aggregate))
    assert(p.position == PerShard(Latest, Map(
      (Stream, id(1)) -> AfterSequenceNumber("1005"),
      // User record 0 of an aggregate: the rest of the aggregate is still to read.
      (Stream, id(2)) -> AfterSequenceNumber("2007", Some(0L)),
      (Stream, id(3)) -> AfterSequenceNumber("3009", Some(4L)))))
    assert(p.notes.isEmpty)
    // Shard 4 was never leased: it starts at the default.
    assert(p.position.shardPositions(Stream, listed, 5L)(id(4)) == ShardPosition.AtTimestamp(5L))
  }

  test("only a checkpoint at user record 0 asks what the record is") {
    var asked = Seq.empty[(String, String)]
    KclStart.plan(Stream, Table, Seq(lease(1, at(1005)), lease(2, at(2007, 3L))), Seq(shard(1)(), shard(2)()), Latest,
      (shard, seq) => { asked :+= (shard -> seq); RecordAt.Plain }, failOnDataLoss = true)
    assert(asked == Seq(id(1) -> "1005"))
  }

  test("SHARD_END shards count as read, their children start at their beginning, their parents count as read") {
    // 0 split into 1 and 2; 1 finished by the application and split into 3 and 4; 2 still being read.
    val listed = Seq(shard(0)(closed = true), shard(1, 0)(closed = true), shard(2, 0)(), shard(3, 1)(), shard(4, 1)(),
      shard(9)())
    val p = plan(Seq(lease(1, KclCheckpoint.ShardEnd), lease(2, at(2050))), listed)
    assert(p.position.shards == Map(
      (Stream, id(0)) -> ShardEnd,
      (Stream, id(1)) -> ShardEnd,
      (Stream, id(2)) -> AfterSequenceNumber("2050"),
      (Stream, id(3)) -> TrimHorizon,
      (Stream, id(4)) -> TrimHorizon))
    assert(p.position.shardPositions(Stream, listed, 5L) == Map(
      id(0) -> ShardPosition.Finished, id(1) -> ShardPosition.Finished, id(2) -> ShardPosition.AfterRecord("2050"),
      id(3) -> ShardPosition.TrimHorizon, id(4) -> ShardPosition.TrimHorizon, id(9) -> ShardPosition.AtTimestamp(5L)))
    // The printed start reads back the same, and is checked against the listing as a user's would be.
    assert(InitialPosition.parse(p.position.json(Seq(Stream)), Seq(Stream)) == p.position)
    p.position.checkShards(Stream, listed)
  }

  test("a lease with no checkpoint yet starts at trim_horizon, and the note says why") {
    // The application started at LATEST and processed records in shard 1 without checkpointing; its child 2 too.
    val listed = Seq(shard(1)(closed = true), shard(2, 1)(), shard(3)())
    val p = plan(Seq(lease(1, KclCheckpoint.NotYet("LATEST")), lease(3, at(3001))), listed)
    assert(p.position.shards == Map((Stream, id(1)) -> TrimHorizon, (Stream, id(2)) -> TrimHorizon,
      (Stream, id(3)) -> AfterSequenceNumber("3001")))
    assert(p.notes.size == 1)
    assert(p.notes.head.contains(s"Shards ${id(1)} (LATEST) of lease table '$Table' hold no checkpoint yet"))
    assert(p.notes.head.contains("none that arrived after it started may be skipped"))
  }

  test("a checkpoint retention trimmed fails the start under failOnDataLoss, and starts at trim_horizon without") {
    val listed = Seq(shard(1)(), shard(2)())
    val leases = Seq(lease(1, at(1005)), lease(2, at(2001)))
    val e = intercept[KinesisSparkException](plan(leases, listed, records = Map("1005" -> RecordAt.Gone)))
    assert(e.getMessage.contains(s"Data loss in Kinesis stream '$Stream', shard ${id(1)}"))
    assert(e.getMessage.contains(s"lease table '$Table'") && e.getMessage.contains("1005"))
    val p = plan(leases, listed, records = Map("1005" -> RecordAt.Gone), failOnDataLoss = false)
    assert(p.position.shards((Stream, id(1))) == TrimHorizon)
    assert(p.notes.exists(n => n.contains(s"shards ${id(1)} in lease table '$Table' were trimmed")))
  }

  test("leased shards retention removed: lost records fail under failOnDataLoss; finished ones are of no account") {
    val listed = Seq(shard(2)())
    val finished = plan(Seq(lease(1, KclCheckpoint.ShardEnd), lease(2, at(2001))), listed)
    assert(finished.notes.isEmpty && finished.position.shards.keySet == Set((Stream, id(2))))
    val e = intercept[KinesisSparkException](plan(Seq(lease(1, at(1005)), lease(2, at(2001))), listed))
    assert(e.getMessage.contains(id(1)) && e.getMessage.contains("retention has removed"))
    val p = plan(Seq(lease(1, at(1005)), lease(2, at(2001))), listed, failOnDataLoss = false)
    assert(p.notes.exists(_.contains(s"Shards ${id(1)} of lease table '$Table' are no longer in stream")))
  }

  test("leases of another stream, or a checkpoint outside its shard, are refused naming the table") {
    val listed = Seq(shard(1)(), shard(2)())
    val foreign = intercept[IllegalArgumentException](plan(Seq(lease(7, at(7001))), listed))
    assert(foreign.getMessage.contains(s"Lease table '$Table'") && foreign.getMessage.contains(id(7)))
    assert(foreign.getMessage.contains("belongs to another stream"))
    // Shard 1 holds sequence numbers from 1000 on.
    val outside = intercept[IllegalArgumentException](plan(Seq(lease(1, at(5))), listed))
    assert(outside.getMessage.contains(s"checkpoints shard '${id(1)}' of stream '$Stream' at sequence number 5"))
    val empty = intercept[IllegalArgumentException](plan(Nil, listed))
    assert(empty.getMessage.contains(s"Lease table '$Table' (option 'kclLeaseTable') holds no lease"))
  }

  test("the children of a leased shard retention removed start at their beginning") {
    // Shard 1 (finished by the application, or its checkpoint lost) is gone; its children 2 and 3 have no lease.
    val listed = Seq(shard(2, 1)(), shard(3, 1)(), shard(4)())
    for (checkpoint <- Seq(KclCheckpoint.ShardEnd, at(1005))) {
      val p = plan(Seq(lease(1, checkpoint), lease(4, at(4001))), listed, failOnDataLoss = false)
      assert(p.position.shards == Map((Stream, id(2)) -> TrimHorizon, (Stream, id(3)) -> TrimHorizon,
        (Stream, id(4)) -> AfterSequenceNumber("4001")), checkpoint)
    }
  }

  test("a multi-stream application's table: only the stream's own leases count") {
    val listed = Seq(shard(1)(), shard(2)())
    val leases = Seq(lease(1, at(1005), Some(Stream)), lease(1, at(1009), Some("payments")))
    assert(plan(leases, listed).position.shards == Map((Stream, id(1)) -> AfterSequenceNumber("1005")))
    val none = intercept[IllegalArgumentException](plan(Seq(lease(1, at(1009), Some("payments"))), listed))
    assert(none.getMessage.contains("holds leases of streams 'payments' but none of stream 'orders'"))
    // A stream deleted and created again under the same name: its old leases stay, with another creation epoch.
    val old = lease(1, KclCheckpoint.ShardEnd, Some(Stream)).copy(key = s"123456789012:$Stream:1600000000:${id(1)}")
    val recreated = leases :+ old
    val twice = intercept[IllegalArgumentException](plan(recreated, listed))
    assert(twice.getMessage.contains(s"holds leases of the same shard of more than one stream named '$Stream'"))
    assert(twice.getMessage.contains(s"'123456789012:$Stream:1600000000:${id(1)}'"))
  }

  test("lease items: single- and multi-stream keys, sequence numbers, sentinels; a foreign item is refused") {
    def item(fields: (String, AttributeValue)*) = fields.toMap
    val s = AttributeValue.fromS _
    val n = AttributeValue.fromN _
    assert(KclLease.fromItem(Table, item("leaseKey" -> s(id(1)), "checkpoint" -> s("0001005"),
      "checkpointSubSequenceNumber" -> n("3"), "leaseCounter" -> n("57"), "leaseOwner" -> s("w"))) ==
      Some(KclLease(id(1), None, id(1), at(1005, 3L), 57L, Some("w"))))
    val multi = KclLease.fromItem(Table, item("leaseKey" -> s(s"123456789012:$Stream:1700000000:${id(2)}"),
      "checkpoint" -> s("SHARD_END"), "entityType" -> s("LEASE")))
    assert(multi.contains(KclLease(s"123456789012:$Stream:1700000000:${id(2)}", Some(Stream), id(2),
      KclCheckpoint.ShardEnd, 0L, None)))
    // KCL 3.5 keeps its leader and migration state in the lease table too: they are no leases.
    assert(KclLease.fromItem(Table, item("leaseKey" -> s("Leader"), "entityType" -> s("LEADER"))).isEmpty)
    for (sentinel <- Seq("TRIM_HORIZON", "LATEST", "AT_TIMESTAMP")) {
      assert(KclLease.fromItem(Table, item("leaseKey" -> s(id(1)), "checkpoint" -> s(sentinel))).map(_.checkpoint)
        .contains(KclCheckpoint.NotYet(sentinel)))
    }
    val foreign = intercept[IllegalArgumentException](KclLease.fromItem(Table, item("id" -> s("x"))))
    assert(foreign.getMessage.contains(s"DynamoDB table '$Table' is not a KCL lease: it has no string 'leaseKey'"))
    val badCheckpoint = intercept[IllegalArgumentException](
      KclLease.fromItem(Table, item("leaseKey" -> s(id(1)), "checkpoint" -> s("soon"))))
    assert(badCheckpoint.getMessage.contains("its 'checkpoint' is 'soon'"))
  }
}
