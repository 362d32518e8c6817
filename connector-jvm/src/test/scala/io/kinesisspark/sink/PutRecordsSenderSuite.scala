package io.kinesisspark.sink

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.model.{KinesisException, ProvisionedThroughputExceededException}
import software.amazon.awssdk.awscore.exception.AwsErrorDetails

import io.kinesisspark.KinesisSparkException
import io.kinesisspark.aws.PutEntry

class PutRecordsSenderSuite extends AnyFunSuite {
  private val Throttled = "ProvisionedThroughputExceededException"

  private def entry(key: String, data: String, stream: String = "s"): SinkEntry =
    KinesisDataWriter.plain(stream, io.kinesisspark.kpl.UserRecord(key, None, data.getBytes(UTF_8)))

  private def sender(fake: FakePutRecords, metrics: SinkMetrics = new SinkMetrics, maxRetries: Int = 5,
      preserveKeyOrder: Boolean = false, maxInflight: Int = 4,
      executor: java.util.concurrent.Executor = InlineExecutor): PutRecordsSender =
    new PutRecordsSender(fake.put, maxInflight, RetryPolicy(maxRetries, random = new java.util.Random(7)),
      preserveKeyOrder, metrics, executor, () => fake.clock(), fake.sleep)

  private def dataOf(e: PutEntry): String = new String(e.data, UTF_8)

  test("entries go out in calls of at most 500, in order, and flush returns once all are stored") {
    val fake = new FakePutRecords
    val metrics = new SinkMetrics
    val s = sender(fake, metrics)
    (1 to 1234).foreach(i => s.add(entry(s"k$i", s"d$i")))
    assert(fake.calls.map(_._2.size) == Seq(500, 500)) // full calls only, until flush
    s.flush()
    assert(fake.calls.map(_._2.size) == Seq(500, 500, 234))
    assert(fake.data("s") == (1 to 1234).map(i => s"d$i"))
    assert(metrics.recordsWritten == 1234 && metrics.putRecordsCalls == 3 && metrics.kinesisRecordsWritten == 1234)
    assert(metrics.bytesWritten == (1 to 1234).map(i => s"k$i".length + s"d$i".length).sum)
    assert(s.pendingEntries == 0)
  }

  test("a call holds at most 5 MiB of data and keys") {
    val fake = new FakePutRecords
    val s = sender(fake)
    val big = "x" * (1024 * 1024 - 10)
    (1 to 11).foreach(i => s.add(entry(f"k$i%02d", big))) // 1 MiB - 7 bytes each: five per call
    s.flush()
    assert(fake.calls.map(_._2.size) == Seq(5, 5, 1))
    assert(fake.calls.forall(_._2.map(e => e.data.length + e.partitionKey.length).sum <= PutRecordsLimits.MaxBytesPerCall))
  }

  test("entries refused in a partly failed call are retried after a back-off, and counted") {
    val fake = new FakePutRecords
    // The first call refuses every third entry; later calls store everything.
    fake.refuse = (call, e) => if (call == 1 && dataOf(e).drop(1).toInt % 3 == 0) Some(Throttled) else None
    val metrics = new SinkMetrics
    val s = sender(fake, metrics)
    (1 to 30).foreach(i => s.add(entry(s"k$i", s"d$i")))
    s.flush()
    assert(fake.data("s").sorted == (1 to 30).map(i => s"d$i").sorted)
    assert(fake.calls.map(_._2.size) == Seq(30, 10))
    assert(fake.calls(1)._2.map(dataOf) == (3 to 30 by 3).map(i => s"d$i")) // in their original order
    assert(metrics.retriedEntries == 10 && metrics.throttledEntries == 10 && metrics.putRecordsCalls == 2)
    assert(fake.sleeps.size == 1 && fake.sleeps.head >= 50 && fake.sleeps.head <= 100) // the first back-off
  }

  test("back-off grows exponentially, with jitter, up to its cap: 5 s, or 1 s for throttling") {
    val policy = RetryPolicy(10, baseDelayMs = 100, maxDelayMs = 5000, maxThrottleDelayMs = 1000,
      random = new java.util.Random(1))
    for (attempt <- 1 to 10; throttled <- Seq(false, true)) {
      val cap = math.min(if (throttled) 1000L else 5000L, 100L << (attempt - 1))
      val delays = (1 to 50).map(_ => policy.delayMs(attempt, throttled))
      assert(delays.forall(d => d >= cap / 2 && d <= cap), s"attempt $attempt: $delays")
      if (cap >= 200) assert(delays.distinct.size > 1)
    }
    assert(!policy.exhausted(10) && policy.exhausted(11))
  }

  test("after a throttle, new entries wait with the throttled ones; after other errors they do not") {
    for (code <- Seq(Throttled, "InternalFailure")) {
      val fake = new FakePutRecords
      fake.refuse = (call, e) => if (call == 1 && dataOf(e) == "d1") Some(code) else None
      val s = sender(fake)
      (1 to 500).foreach(i => s.add(entry(s"k$i", s"d$i"))) // a full call: sent, d1 refused
      (501 to 1000).foreach(i => s.add(entry(s"k$i", s"d$i"))) // another full call's worth
      if (code == Throttled) assert(fake.calls.size == 1) // held until d1's back-off ends
      else assert(fake.calls.size == 2 && fake.calls(1)._2.size == 500)
      s.flush()
      assert(fake.data("s").sorted == (1 to 1000).map(i => s"d$i").sorted)
      if (code == Throttled) assert(fake.calls(1)._2.head.data.sameElements("d1".getBytes(UTF_8))) // oldest first
    }
  }

  test("a whole call failing with a retryable error is retried; the records are counted once stored") {
    val fake = new FakePutRecords
    fake.failCall = call => if (call <= 2) Some(SdkClientException.create("Connection reset")) else None
    val metrics = new SinkMetrics
    val s = sender(fake, metrics)
    (1 to 3).foreach(i => s.add(entry(s"k$i", s"d$i")))
    s.flush()
    assert(fake.data("s") == Seq("d1", "d2", "d3"))
    assert(metrics.putRecordsCalls == 3 && metrics.retriedEntries == 6 && metrics.throttledEntries == 0)
    assert(metrics.recordsWritten == 3)
  }

  test("when the retries run out the task fails naming the stream, the records, the attempts and the last error") {
    val fake = new FakePutRecords
    fake.refuse = (_, e) => if (dataOf(e) == "d2" || dataOf(e) == "d4") Some("InternalFailure") else None
    val s = sender(fake, maxRetries = 3)
    (1 to 5).foreach(i => s.add(entry(s"k$i", s"d$i")))
    val e = intercept[KinesisSparkException](s.flush())
    assert(e.getMessage.contains("2 record(s) could not be written to Kinesis stream 's' in 4 attempts"), e.getMessage)
    assert(e.getMessage.contains("'maxPutRetries' allows 3 retries"), e.getMessage)
    assert(e.getMessage.contains("the last error was InternalFailure: refused in call 4"), e.getMessage)
    assert(fake.calls.size == 4)
    assert(fake.sleeps.size == 3)
  }

  test("throttling uses no retry while the stream takes other records, in the call or lately; other errors always do") {
    for (code <- Seq(Throttled, "InternalFailure")) {
      val fake = new FakePutRecords
      fake.refuse = (_, e) => if (dataOf(e) == "d1") Some(code) else None
      val s = sender(fake, maxRetries = 3)
      (1 to 10).foreach(i => s.add(entry(s"k$i", s"d$i")))
      val e = intercept[KinesisSparkException](s.flush())
      assert(fake.data("s") == (2 to 10).map(i => s"d$i"))
      if (code == Throttled) {
        // Call 1 stores d2..d10: throttling d1 is pacing there and for ThrottleGraceMs after; then alone in calls
        // that store nothing, it uses its three retries.
        assert(fake.now > PutRecordsSender.ThrottleGraceMs, fake.now)
        val attempts = fake.calls.size
        assert(attempts > 5 && e.getMessage.contains(s"in $attempts attempts"), e.getMessage)
      } else {
        assert(e.getMessage.contains("1 record(s) could not be written to Kinesis stream 's' in 4 attempts"), e.getMessage)
      }
    }
  }

  test("with no retries allowed, the first refusal fails the task") {
    val fake = new FakePutRecords
    fake.refuse = (_, _) => Some("InternalFailure")
    val s = sender(fake, maxRetries = 0)
    s.add(entry("k", "d"))
    val e = intercept[KinesisSparkException](s.flush())
    assert(e.getMessage.contains("in 1 attempts (option 'maxPutRetries' allows 0 retries)") && e.getMessage.contains("InternalFailure"), e.getMessage)
  }

  test("errors no retry can fix fail at once") {
    val fake = new FakePutRecords
    fake.failCall = _ => Some(KinesisException.builder().statusCode(400)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode("ValidationException").errorMessage("1 validation error").build())
      .build())
    val s = sender(fake)
    s.add(entry("k", "d"))
    val e = intercept[KinesisSparkException](s.flush())
    assert(e.getMessage.contains("PutRecords of 1 record(s) to Kinesis stream 's' failed") &&
      e.getMessage.contains("ValidationException: 1 validation error"), e.getMessage)
    assert(fake.calls.size == 1)
  }

  test("our own errors (a missing stream) pass through unchanged") {
    val fake = new FakePutRecords
    val missing = io.kinesisspark.KinesisErrors.streamNotFound("s", "us-east-1", "fake")
    fake.failCall = _ => Some(missing)
    val s = sender(fake)
    s.add(entry("k", "d"))
    assert(intercept[KinesisSparkException](s.flush()) eq missing)
  }

  test("a whole call throttled counts its entries as throttled") {
    val fake = new FakePutRecords
    fake.failCall = call => if (call == 1) Some(ProvisionedThroughputExceededException.builder().statusCode(400)
      .awsErrorDetails(AwsErrorDetails.builder().errorCode(Throttled).errorMessage("Rate exceeded").build()).build()) else None
    val metrics = new SinkMetrics
    val s = sender(fake, metrics)
    (1 to 4).foreach(i => s.add(entry(s"k$i", s"d$i")))
    s.flush()
    assert(metrics.throttledEntries == 4 && metrics.retriedEntries == 4 && fake.data("s").size == 4)
  }

  test("at most maxInflight calls are in flight; answers are taken in as they come") {
    val fake = new FakePutRecords
    val held = new HeldExecutor
    val s = sender(fake, maxInflight = 2, executor = held)
    (1 to 1000).foreach(i => s.add(entry(s"k$i", s"d$i")))
    assert(held.held.size == 2) // two full calls, both held
    (1001 to 1400).foreach(i => s.add(entry(s"k$i", s"d$i")))
    assert(held.held.size == 2) // the buffer takes a third call's worth while both are in flight
    held.runAll()
    s.add(entry("k1401", "d1401")) // takes the answers in, and sends nothing partial
    assert(held.held.isEmpty && s.pendingEntries == 401)
  }

  test("sendReady sends what is queued without waiting for a full call, and retries refusals once their back-off ends") {
    val fake = new FakePutRecords
    fake.refuse = (call, e) => if (call == 1 && dataOf(e) == "d2") Some("InternalFailure") else None
    val held = new HeldExecutor
    val s = sender(fake, maxInflight = 2, executor = held)
    s.add(entry("k1", "d1"))
    s.add(entry("k2", "d2"))
    assert(held.held.isEmpty) // add alone waits for a full call
    s.sendReady()
    assert(held.held.size == 1)
    s.add(entry("k3", "d3"))
    s.sendReady()
    s.add(entry("k4", "d4"))
    s.sendReady() // both calls in flight: d4 waits
    assert(held.held.size == 2 && fake.calls.isEmpty)
    held.runAll()
    s.sendReady() // the answers free both calls: d4 goes; d2 waits for its back-off
    held.runAll()
    assert(fake.calls.map(_._2.map(dataOf)) == Seq(Seq("d1", "d2"), Seq("d3"), Seq("d4")))
    s.sendReady()
    assert(held.held.isEmpty && s.pendingEntries == 1)
    fake.now += 1000 // past the first back-off (at most 100 ms)
    s.sendReady()
    held.runAll()
    s.sendReady()
    assert(fake.data("s") == Seq("d1", "d3", "d4", "d2") && s.pendingEntries == 0)
  }

  test("abort stops sending and retrying") {
    val fake = new FakePutRecords
    fake.refuse = (_, _) => Some(Throttled)
    val held = new HeldExecutor
    val s = sender(fake, executor = held)
    (1 to 500).foreach(i => s.add(entry(s"k$i", s"d$i")))
    s.abort()
    held.runAll() // the call in flight finishes; its refusals are not retried
    assert(fake.calls.size == 1 && fake.sleeps.isEmpty)
    intercept[IllegalStateException](s.add(entry("k", "d")))
  }

  test("without preserveKeyOrder a retried entry lands after a later entry of its key (Kinesis's own behaviour)") {
    val fake = new FakePutRecords
    fake.refuse = (call, e) => if (call == 1 && dataOf(e) == "a1") Some(Throttled) else None
    val s = sender(fake)
    Seq("a1", "a2", "b1").foreach(d => s.add(entry(d.take(1), d)))
    s.flush()
    assert(fake.data("s") == Seq("a2", "b1", "a1"))
  }

  test("with preserveKeyOrder a key's entries are stored in order through refusals and retries") {
    val fake = new FakePutRecords
    // Refuse every entry of key "a" in the first two calls, and "b2" once.
    var refusedB2 = false
    fake.refuse = (call, e) =>
      if (call <= 2 && e.partitionKey == "a") Some(Throttled)
      else if (dataOf(e) == "b2" && !refusedB2) { refusedB2 = true; Some(Throttled) }
      else None
    val s = sender(fake, preserveKeyOrder = true)
    val rows = Seq("a1", "b1", "a2", "c1", "b2", "a3", "b3", "c2")
    rows.foreach(d => s.add(entry(d.take(1), d)))
    s.flush()
    val stored = fake.data("s")
    assert(stored.sorted == rows.sorted)
    Seq("a", "b", "c").foreach(k => assert(stored.filter(_.startsWith(k)) == rows.filter(_.startsWith(k)), stored))
    // A call never holds two entries of one key.
    assert(fake.calls.forall { case (_, es) => es.map(_.partitionKey).distinct.size == es.size })
  }

  test("with preserveKeyOrder keys with nothing outstanding still share calls") {
    val fake = new FakePutRecords
    val s = sender(fake, preserveKeyOrder = true)
    (1 to 1000).foreach(i => s.add(entry(s"k$i", s"d$i")))
    s.flush()
    assert(fake.calls.map(_._2.size) == Seq(500, 500))
  }

  test("entries for different streams go in separate calls") {
    val fake = new FakePutRecords
    val s = sender(fake)
    (1 to 10).foreach(i => s.add(entry(s"k$i", s"d$i", stream = if (i % 2 == 0) "even" else "odd")))
    s.flush()
    assert(fake.data("even") == (2 to 10 by 2).map(i => s"d$i") && fake.data("odd") == (1 to 9 by 2).map(i => s"d$i"))
    assert(fake.calls.forall { case (stream, es) => es.forall(e => (dataOf(e).drop(1).toInt % 2 == 0) == (stream == "even")) })
  }

  /** A sender pacing every shard at `limits`, over `fake` whose put is also timed in `times` (fake time of each call). */
  private def pacedSender(fake: FakePutRecords, limits: ShardWriteLimits,
      metrics: SinkMetrics = new SinkMetrics): (PutRecordsSender, scala.collection.mutable.Map[String, ShardWritePacer]) = {
    val pacers = scala.collection.mutable.Map.empty[String, ShardWritePacer]
    val s = new PutRecordsSender(fake.put, 4, RetryPolicy(5, random = new java.util.Random(7)), preserveKeyOrder = false,
      metrics, InlineExecutor, () => fake.clock(), fake.sleep,
      pacerFor = Some((_, shard) => pacers.getOrElseUpdate(shard, new ShardWritePacer(limits, () => fake.clock()))))
    (s, pacers)
  }

  private def onShard(shard: String, key: String, data: String): SinkEntry =
    KinesisDataWriter.plain("s", io.kinesisspark.kpl.UserRecord(key, None, data.getBytes(UTF_8)), Some(shard))

  test("paced: each shard gets its limit per second, spread over calls, and never much more in any second") {
    val fake = new FakePutRecords
    val callTimes = scala.collection.mutable.ArrayBuffer.empty[(Long, IndexedSeq[PutEntry])]
    val timed = (stream: String, entries: IndexedSeq[PutEntry]) => { callTimes += ((fake.now, entries)); fake.put(stream, entries) }
    val pacers = scala.collection.mutable.Map.empty[String, ShardWritePacer]
    val s = new PutRecordsSender(timed, 4, RetryPolicy(5), preserveKeyOrder = false, new SinkMetrics, InlineExecutor,
      () => fake.clock(), fake.sleep,
      pacerFor = Some((_, shard) => pacers.getOrElseUpdate(shard, new ShardWritePacer(ShardWriteLimits(200), () => fake.clock()))))
    (1 to 4000).foreach(i => s.add(onShard(if (i % 2 == 0) "a" else "b", s"k$i", s"d$i")))
    s.flush()
    assert(fake.data("s").sorted == (1 to 4000).map(i => s"d$i").sorted)
    // 2,000 entries per shard at 200/s: about 10 s, whatever the calls
    assert(fake.now >= 9500 && fake.now <= 10500, fake.now)
    for (shard <- Seq("a", "b")) {
      val times = callTimes.toSeq.flatMap { case (t, es) => es.filter(e => dataOf(e).drop(1).toInt % 2 == (if (shard == "a") 0 else 1)).map(_ => t) }
      val busiest = times.indices.map(i => times.count(t => t >= times(i) && t < times(i) + 1000)).max
      assert(busiest <= 200 + 20, s"shard $shard: $busiest in one second")
    }
    // Calls every PacedCallIntervalMs or so, each with both shards' entries: not one call per entry.
    assert(callTimes.size <= 10500 / PutRecordsSender.PacedCallIntervalMs + 5, callTimes.size)
  }

  /** A paced sender over `fake` that notes the fake time at which the entry with data `watched` was stored. */
  private def watchingSender(fake: FakePutRecords, watched: String, limits: ShardWriteLimits)
      : (PutRecordsSender, scala.collection.mutable.Map[String, ShardWritePacer], () => Long) = {
    var storedAt = -1L
    val timed = (stream: String, entries: IndexedSeq[PutEntry]) => {
      val results = fake.put(stream, entries)
      if (entries.zip(results).exists { case (e, r) => dataOf(e) == watched && r.succeeded }) storedAt = fake.now
      results
    }
    val pacers = scala.collection.mutable.Map.empty[String, ShardWritePacer]
    val s = new PutRecordsSender(timed, 4, RetryPolicy(5, random = new java.util.Random(7)), preserveKeyOrder = false,
      new SinkMetrics, InlineExecutor, () => fake.clock(), fake.sleep,
      pacerFor = Some((_, shard) => pacers.getOrElseUpdate(shard, new ShardWritePacer(limits, () => fake.clock()))))
    (s, pacers, () => storedAt)
  }

  test("paced: a shard refused as full slows its pacer and waits for it, no back-off; the other shard goes on") {
    val fake = new FakePutRecords
    // d1 (shard a) refused as throttled in calls 2 and 3, after call 1 stored d0: the stream takes writes.
    fake.refuse = (call, e) => if ((call == 2 || call == 3) && dataOf(e) == "d1") Some(Throttled) else None
    val (s, pacers, storedAt) = watchingSender(fake, "d1", ShardWriteLimits(1000))
    s.add(onShard("b", "k0", "d0"))
    (1 to 800).foreach(i => s.add(onShard(if (i % 2 == 1) "a" else "b", s"k$i", s"d$i")))
    s.flush()
    assert(fake.data("s").sorted == (0 to 800).map(i => s"d$i").sorted)
    assert(pacers("a").currentShare < pacers("b").currentShare)
    // Calls every 50 ms from 0: d1 goes again in the next call each time, with what a's emptied pacer refilled
    // since (back-offs would have held it, and a's later entries, until 200 ms or later).
    assert(storedAt() == 150, storedAt())
    def shardA(d: String) = d.drop(1).toInt % 2 == 1
    val third = fake.calls(2)._2.map(dataOf)
    val refilled = PutRecordsSender.PacedCallIntervalMs * 1000 / 1000 // a's 1,000 records/s over one interval
    assert(third.filter(shardA).head == "d1" && third.count(shardA) <= refilled, third)
    assert(third.count(d => !shardA(d)) > 0, third) // b was not held
  }

  test("paced: a refused entry counts once in its shard's pacer's last second, as in Kinesis's: its refusal is taken back") {
    val fake = new FakePutRecords
    fake.refuse = (call, e) => if (call == 1 && dataOf(e) == "d1") Some(Throttled) else None
    val (s, pacers, storedAt) = watchingSender(fake, "d1", ShardWriteLimits(1000))
    (0 to 2).foreach(i => s.add(onShard("a", s"k$i", s"d$i")))
    s.flush()
    assert(storedAt() > 0 && fake.now < 1000, fake.now)
    assert(pacers("a").lastSecond._1 == 3) // d0, d2, and d1 once: sent twice
  }

  test("paced: a stream that takes nothing backs off after a throttle, as its entries spend retries") {
    val fake = new FakePutRecords
    fake.refuse = (call, e) => if (call <= 2 && dataOf(e) == "d1") Some(Throttled) else None
    val (s, _, storedAt) = watchingSender(fake, "d1", ShardWriteLimits(1000))
    s.add(onShard("a", "k1", "d1"))
    s.flush()
    assert(storedAt() >= 150, storedAt()) // back-offs of 50 to 100 ms, then 100 to 200 ms
  }

  test("paced: an entry refused for another reason than a full shard still backs off") {
    val fake = new FakePutRecords
    // d1 refused twice with a 500: back-offs of 50 to 100 ms, then 100 to 200 ms.
    fake.refuse = (call, e) => if (call <= 2 && dataOf(e) == "d1") Some("InternalFailure") else None
    val (s, _, storedAt) = watchingSender(fake, "d1", ShardWriteLimits(1000))
    (1 to 20).foreach(i => s.add(onShard("a", s"k$i", s"d$i")))
    s.flush()
    assert(fake.data("s").sorted == (1 to 20).map(i => s"d$i").sorted)
    assert(storedAt() >= 150, storedAt()) // paced alone it would have gone 50 ms after its first refusal
  }

  test("paced: a task holds at most ShardBacklogSeconds of a shard's limits, and the shard still gets its rate") {
    val fake = new FakePutRecords
    val (s, _) = pacedSender(fake, ShardWriteLimits(200))
    var held = 0
    (1 to 3000).foreach { i =>
      s.add(onShard("a", s"k$i", s"d$i"))
      held = math.max(held, s.pendingEntries)
    }
    s.flush()
    assert(fake.data("s") == (1 to 3000).map(i => s"d$i"))
    // Unpaced, the task would have held 2,500 (its whole buffer) before blocking.
    assert(held == PutRecordsSender.ShardBacklogSeconds * 200, held)
    assert(fake.now >= 14500 && fake.now <= 15500, fake.now) // 3,000 entries at 200/s
  }

  test("paced: the backlog bound counts bytes too") {
    val fake = new FakePutRecords
    val (s, _) = pacedSender(fake, ShardWriteLimits(1000, bytesPerSecond = 10000))
    var held = 0L
    (1 to 100).foreach { i =>
      s.add(onShard("a", f"k$i%03d", "x" * 996)) // 1,000 bytes with the key
      held = math.max(held, s.pendingEntries.toLong * 1000)
    }
    s.flush()
    assert(fake.data("s").size == 100)
    assert(held == PutRecordsSender.ShardBacklogSeconds * 10000L, held)
  }
}
