package io.kinesisspark

import java.time.{ZoneOffset, ZonedDateTime}

import org.scalatest.funsuite.AnyFunSuite

class InitialPositionSuite extends AnyFunSuite {
  private def millis(y: Int, mo: Int, d: Int, h: Int, mi: Int, s: Int, offsetHours: Int): Long =
    ZonedDateTime.of(y, mo, d, h, mi, s, 0, ZoneOffset.ofHours(offsetHours)).toInstant.toEpochMilli

  test("at_timestamp in the Databricks default format, with a zone name") {
    assert(InitialPosition.parse("""{"at_timestamp": "06/25/2020 10:23:45 PDT"}""") ==
      InitialPosition.AtTimestamp(millis(2020, 6, 25, 10, 23, 45, -7)))
  }

  test("at_timestamp with an RFC 822 offset") {
    assert(InitialPosition.parse("""{"at_timestamp": "11/21/2026 12:30:00 +0000"}""") ==
      InitialPosition.AtTimestamp(millis(2026, 11, 21, 12, 30, 0, 0)))
  }

  test("at_timestamp with an explicit format") {
    assert(InitialPosition.parse("""{"at_timestamp": "2020-06-25T10:23:45+0200", "format": "yyyy-MM-dd'T'HH:mm:ssZ"}""") ==
      InitialPosition.AtTimestamp(millis(2020, 6, 25, 10, 23, 45, 2)))
  }

  test("names are case-insensitive") {
    assert(InitialPosition.parse("LATEST") == InitialPosition.Latest)
    assert(InitialPosition.parse(" Trim_Horizon ") == InitialPosition.TrimHorizon)
  }

  test("an impossible date is rejected (parsing is not lenient)") {
    val e = intercept[IllegalArgumentException](InitialPosition.parse("""{"at_timestamp": "13/45/2020 10:23:45 PDT"}"""))
    assert(e.getMessage.contains("initialPosition"))
  }

  test("malformed JSON is rejected with the value") {
    val e = intercept[IllegalArgumentException](InitialPosition.parse("""{"at_timestamp": """))
    assert(e.getMessage.contains("'initialPosition'") && e.getMessage.contains("""{"at_timestamp": """))
  }
}

class InitialPositionPerShardSuite extends AnyFunSuite {
  import InitialPosition._
  import io.kinesisspark.aws.{SequenceNumberRange, ShardInfo}

  private val Shard0 = "shardId-000000000000"
  private val Shard1 = "shardId-000000000001"

  private def listed(ranges: (String, SequenceNumberRange)*): Seq[ShardInfo] =
    ranges.map { case (id, r) => ShardInfo(id, Nil, closed = r.ending.isDefined, sequenceNumberRange = Some(r)) }

  private def error(json: String, streams: Seq[String] = Seq("orders")): String =
    intercept[IllegalArgumentException](parse(json, streams)).getMessage

  /** Where `shardId` starts, listed alone (no relatives). */
  private def position(p: InitialPosition, stream: String, shardId: String, nowMillis: Long): ShardPosition =
    p.shardPositions(stream, Seq(ShardInfo(shardId, Nil, closed = false)), nowMillis)(shardId)

  /** A shard and its parents, as ListShards lists them. */
  private def shard(id: Int, parents: Int*): ShardInfo =
    ShardInfo(f"shardId-$id%012d", parents.map(p => f"shardId-$p%012d"), closed = false)

  test("positions per shard of the one stream read, a default for the others") {
    val p = parse(s"""{"default": "trim_horizon", "shards": {"$Shard0": {"after_sequence_number": "100"},
      "$Shard1": {"at_sequence_number": "205"}}}""", Seq("orders"))
    assert(p == PerShard(TrimHorizon, Map(("orders", Shard0) -> AfterSequenceNumber("100"),
      ("orders", Shard1) -> AtSequenceNumber("205"))))
    assert(position(p, "orders", Shard0, 5L) == ShardPosition.AfterRecord("100"))
    // At a sequence number: the whole record, every sub-record of an aggregate included.
    val at = position(p, "orders", Shard1, 5L).asInstanceOf[ShardPosition.AfterRecord]
    assert(ShardPosition.isAfter(ShardPosition.AfterRecord("205"), at))
    assert(ShardPosition.isAfter(ShardPosition.AfterRecord("205", Some(0L)), at))
    assert(!ShardPosition.isAfter(ShardPosition.AfterRecord("204"), at))
    assert(position(p, "orders", "shardId-000000000002", 5L) == ShardPosition.TrimHorizon)
    // Leading zeros go: Kinesis's StartingSequenceNumber pattern refuses them.
    assert(parse(s"""{"shards": {"$Shard0": {"after_sequence_number": "00100"}, "$Shard1": {"at_sequence_number": "000"}}}""",
      Seq("orders")) == PerShard(Latest, Map(("orders", Shard0) -> AfterSequenceNumber("100"),
      ("orders", Shard1) -> AtSequenceNumber("0"))))
  }

  test("the default defaults to latest, and may be a timestamp; shards may start at a name or a timestamp") {
    val p = parse(s"""{"shards": {"$Shard0": "Trim_Horizon", "$Shard1": {"at_timestamp": "06/25/2020 10:23:45 PDT"}}}""",
      Seq("orders"))
    assert(position(p, "orders", "other", 42L) == ShardPosition.AtTimestamp(42L))
    assert(position(p, "orders", Shard0, 42L) == ShardPosition.TrimHorizon)
    assert(position(p, "orders", Shard1, 42L) == ShardPosition.AtTimestamp(1593105825000L))
    val timed = parse("""{"default": {"at_timestamp": "2020-06-25", "format": "yyyy-MM-dd"}}""", Seq("orders"))
    assert(timed.isInstanceOf[PerShard] && position(timed, "orders", Shard0, 0L).isInstanceOf[ShardPosition.AtTimestamp])
  }

  test("several streams: positions under \"streams\", by stream name") {
    val p = parse(s"""{"streams": {"a": {"$Shard0": {"after_sequence_number": "7"}}, "b": {"$Shard0": "latest"}}}""",
      Seq("a", "b"))
    assert(position(p, "a", Shard0, 1L) == ShardPosition.AfterRecord("7"))
    assert(position(p, "b", Shard0, 1L) == ShardPosition.AtTimestamp(1L))
    assert(p.sequenceStarts == Seq(("a", Shard0, AfterSequenceNumber("7"))))
  }

  test("bad per-shard JSON gets an error naming the option, the value and the shard") {
    val cases = Seq(
      (s"""{"shards": {"$Shard0": {"after_sequence_number": "12x"}}}""", s"shard '$Shard0' of stream 'orders'"),
      (s"""{"shards": {"$Shard0": {"after_sequence_number": 12}}}""", s"the position of shard '$Shard0'"),
      (s"""{"shards": {"$Shard0": "middle"}}""", "not \"middle\""),
      (s"""{"shards": {"$Shard0": {"at_sequence_number": "1", "after_sequence_number": "2"}}}""", Shard0),
      ("""{"default": {"at_sequence_number": "1"}}""", "a sequence number or shard_end belongs to one shard"),
      ("""{"default": "trim_horizon", "at_timestamp": "06/25/2020 10:23:45 PDT"}""", "no field \"at_timestamp\""),
      ("""{"shards": ["shardId-000000000000"]}""", "an object of shard id to position"),
      ("""{"streams": {"payments": {}}}""", "not 'payments'"))
    cases.foreach { case (json, expected) =>
      val message = error(json)
      assert(message.contains("'initialPosition'") && message.contains(expected), s"$json: $message")
    }
    assert(error(s"""{"shards": {"$Shard0": "latest"}}""", Seq("a", "b")).contains("\"streams\""))
  }

  test("named shards are checked against the listing: unknown shards and foreign sequence numbers") {
    val p = parse(s"""{"shards": {"$Shard0": {"at_sequence_number": "150"}, "$Shard1": {"after_sequence_number": "90"}}}""",
      Seq("orders"))
    val both = listed(Shard0 -> SequenceNumberRange(100, Some(199)), Shard1 -> SequenceNumberRange(200, None))
    val foreign = intercept[IllegalArgumentException](p.checkShards("orders", both)).getMessage
    assert(foreign.contains("sequence number 90") && foreign.contains(s"shard '$Shard1'") && foreign.contains("[200, open]"))
    val missing = intercept[IllegalArgumentException](p.checkShards("orders", both.take(1))).getMessage
    assert(missing.contains(s"shard '$Shard1' of stream 'orders', which Kinesis does not list") && missing.contains(Shard0))
    // In range (or no range known): accepted; other streams' listings are not this one's business.
    parse(s"""{"shards": {"$Shard0": {"at_sequence_number": "150"}}}""", Seq("orders")).checkShards("orders", both)
    p.checkShards("elsewhere", Nil)
  }

  test("a closed shard's ending below its starting (kinesis-local's placeholder) does not refuse its positions") {
    val placeholder = SequenceNumberRange.of(BigInt("49680639532808964946767647839967994148135834781340401666"),
      Some(BigInt(Long.MaxValue)))
    assert(placeholder == SequenceNumberRange(BigInt("49680639532808964946767647839967994148135834781340401666"), None))
    assert(SequenceNumberRange.of(100, Some(199)) == SequenceNumberRange(100, Some(199)))
    val inClosed = parse("""{"shards": {"shardId-000000000000":
      {"after_sequence_number": "49680639532808964946767647840004261922724273656581586946"}}}""", Seq("orders"))
    inClosed.checkShards("orders", Seq(ShardInfo(Shard0, Nil, closed = true, sequenceNumberRange = Some(placeholder))))
  }

  test("the unnamed descendants of a named shard start at their beginning, never at the default") {
    // 0 split into 1 and 2; 1 and 2 merged into 3; 4 unrelated. A consumer stopped in 0, before the reshards.
    val shards = Seq(shard(0), shard(1, 0), shard(2, 0), shard(3, 1, 2), shard(4))
    val p = parse(s"""{"default": "latest", "shards": {"$Shard0": {"after_sequence_number": "100"}}}""", Seq("orders"))
    assert(p.shardPositions("orders", shards, 7L) == Map(
      Shard0 -> ShardPosition.AfterRecord("100"),
      "shardId-000000000001" -> ShardPosition.TrimHorizon,
      "shardId-000000000002" -> ShardPosition.TrimHorizon,
      "shardId-000000000003" -> ShardPosition.TrimHorizon,
      "shardId-000000000004" -> ShardPosition.AtTimestamp(7L)))
  }

  test("the unnamed ancestors of a named shard count as read, the other parents of its merges too") {
    // 0 split into 1 and 2; 2 and 5 merged into 6. The consumer had reached 1 and 6.
    val shards = Seq(shard(0), shard(1, 0), shard(2, 0), shard(5), shard(6, 2, 5))
    val p = parse("""{"default": "trim_horizon", "shards": {"shardId-000000000001": {"at_sequence_number": "7"},
      "shardId-000000000006": {"after_sequence_number": "9"}}}""", Seq("orders"))
    assert(p.shardPositions("orders", shards, 7L) == Map(
      Shard0 -> ShardPosition.Finished,
      "shardId-000000000001" -> ShardPosition.atRecord("7"),
      "shardId-000000000002" -> ShardPosition.Finished,
      "shardId-000000000005" -> ShardPosition.Finished,
      "shardId-000000000006" -> ShardPosition.AfterRecord("9")))
    // Another stream's names do not reach this one; a stream-wide position puts every shard at it.
    assert(p.shardPositions("other", shards, 7L).values.toSet == Set(ShardPosition.TrimHorizon))
    assert(TrimHorizon.shardPositions("orders", shards, 7L).values.toSet == Set(ShardPosition.TrimHorizon))
  }

  test("a descendant's other parent, not related to a named shard, starts at the default") {
    // 0 and 5 merged into 6; the consumer stopped in 0 before the merge; 5 is no relative of 0.
    val shards = Seq(shard(0), shard(5), shard(6, 0, 5))
    val p = parse(s"""{"default": "latest", "shards": {"$Shard0": {"after_sequence_number": "3"}}}""", Seq("orders"))
    assert(p.shardPositions("orders", shards, 7L) == Map(Shard0 -> ShardPosition.AfterRecord("3"),
      "shardId-000000000005" -> ShardPosition.AtTimestamp(7L), "shardId-000000000006" -> ShardPosition.TrimHorizon))
  }

  test("a shard named by a name or a timestamp places no relative: they start at the default") {
    // 0 split into 1 and 2. Naming 1 trim_horizon says nothing of 0, which is read from the default as before.
    val shards = Seq(shard(0), shard(1, 0), shard(2, 0))
    val named = parse("""{"default": "trim_horizon", "shards": {"shardId-000000000001": "trim_horizon",
      "shardId-000000000000": {"at_timestamp": "06/25/2020 10:23:45 PDT"}}}""", Seq("orders"))
    assert(named.shardPositions("orders", shards, 7L) == Map(Shard0 -> ShardPosition.AtTimestamp(1593105825000L),
      "shardId-000000000001" -> ShardPosition.TrimHorizon, "shardId-000000000002" -> ShardPosition.TrimHorizon))
    val latest = parse("""{"default": "latest", "shards": {"shardId-000000000000": "latest"}}""", Seq("orders"))
    assert(latest.shardPositions("orders", shards, 7L).values.toSet == Set(ShardPosition.AtTimestamp(7L)))
  }

  test("a position can name a user record inside a KPL aggregate") {
    val p = parse(s"""{"shards": {"$Shard0": {"after_sequence_number": "100", "sub_sequence_number": 3},
      "$Shard1": {"sub_sequence_number": 0, "at_sequence_number": "205"}}}""", Seq("orders"))
    assert(p == PerShard(Latest, Map(("orders", Shard0) -> AfterSequenceNumber("100", Some(3L)),
      ("orders", Shard1) -> AtSequenceNumber("205", Some(0L)))))
    // After user record 3: 4 and on. At user record 0: the whole aggregate, as without the field.
    assert(position(p, "orders", Shard0, 1L) == ShardPosition.AfterRecord("100", Some(3L)))
    assert(position(p, "orders", Shard1, 1L) == ShardPosition.atRecord("205"))
    assert(AtSequenceNumber("205", Some(2L)).shardPosition(1L) == ShardPosition.AfterRecord("205", Some(1L)))
    val cases = Seq(
      s"""{"shards": {"$Shard0": {"after_sequence_number": "1", "sub_sequence_number": -1}}}""" -> "not -1",
      s"""{"shards": {"$Shard0": {"after_sequence_number": "1", "sub_sequence_number": "3"}}}""" -> "not \"3\"",
      s"""{"shards": {"$Shard0": {"after_sequence_number": "1", "sub_sequence_number": 1.5}}}""" -> "not 1.5",
      s"""{"shards": {"$Shard0": {"sub_sequence_number": 1}}}""" -> "inside a KPL aggregate) or 'shard_end', not",
      s"""{"shards": {"$Shard0": {"at_timestamp": "06/25/2020 10:23:45 PDT", "sub_sequence_number": 1}}}""" ->
        "inside a KPL aggregate) or 'shard_end', not")
    cases.foreach { case (json, expected) =>
      val message = error(json)
      assert(message.contains(s"the position of shard '$Shard0' of stream 'orders'") && message.contains(expected),
        s"$json: $message")
    }
  }

  test("shard_end names a closed shard read to its end, and places its relatives like a sequence number") {
    // 0 split into 1 and 2; the consumer had finished 1 before 1 was split into 3.
    val shards = Seq(shard(0).copy(closed = true), shard(1, 0).copy(closed = true), shard(2, 0), shard(3, 1), shard(4))
    val p = parse("""{"default": "latest", "shards": {"shardId-000000000001": " Shard_End "}}""", Seq("orders"))
    assert(p == PerShard(Latest, Map(("orders", "shardId-000000000001") -> ShardEnd)))
    assert(p.shardPositions("orders", shards, 7L) == Map(
      Shard0 -> ShardPosition.Finished,
      "shardId-000000000001" -> ShardPosition.Finished,
      "shardId-000000000002" -> ShardPosition.AtTimestamp(7L),
      "shardId-000000000003" -> ShardPosition.TrimHorizon,
      "shardId-000000000004" -> ShardPosition.AtTimestamp(7L)))
    p.checkShards("orders", shards)
    val open = intercept[IllegalArgumentException](p.checkShards("orders", Seq(shard(0), shard(1, 0))))
    assert(open.getMessage.contains("shard 'shardId-000000000001' of stream 'orders' as read to its end"))
    assert(open.getMessage.contains("the shard is open"))
    // Only per shard: as the default, or for the whole stream, it is refused with what is accepted.
    val asDefault = intercept[IllegalArgumentException](parse("""{"default": "shard_end"}""", Seq("orders")))
    assert(asDefault.getMessage.contains("a sequence number or shard_end belongs to one shard"))
    val streamWide = intercept[IllegalArgumentException](InitialPosition.parse("shard_end"))
    assert(streamWide.getMessage.contains("Invalid value 'shard_end' for option 'initialPosition'"))
  }

  test("json gives the option's text, which parses back to the same position") {
    val oneStream = PerShard(TrimHorizon, Map(("orders", Shard0) -> AfterSequenceNumber("100", Some(3L)),
      ("orders", Shard1) -> AtSequenceNumber("205"), ("orders", "shardId-000000000002") -> ShardEnd))
    assert(oneStream.json(Seq("orders")) == """{"default":"trim_horizon","shards":{"shardId-000000000000":""" +
      """{"after_sequence_number":"100","sub_sequence_number":3},"shardId-000000000001":{"at_sequence_number":"205"},""" +
      """"shardId-000000000002":"shard_end"}}""")
    val severalStreams = PerShard(AtTimestamp(1593105825120L), Map(("a", Shard0) -> AfterSequenceNumber("7"),
      ("b", Shard1) -> Latest))
    for ((p, streams) <- Seq(oneStream -> Seq("orders"), severalStreams -> Seq("a", "b"), Latest -> Nil,
        TrimHorizon -> Nil, AtTimestamp(1593105825120L) -> Nil)) {
      assert(InitialPosition.parse(p.json(streams), streams) == p, p.json(streams))
    }
    assert(severalStreams.json(Seq("a", "b")).contains(""""at_timestamp":"2020-06-25T17:23:45.120Z""""))
  }
}
