package io.kinesisspark.bench

import java.nio.charset.StandardCharsets.ISO_8859_1

import io.kinesisspark.{DriverTimings, KinesisErrors, KinesisSourceOptions, ShardPosition}
import io.kinesisspark.aws._

/**
 * An in-memory Kinesis whose every shard receives `recordsPerSecond` records from the moment it is made, for ever:
 * records are made up when read (their index in the shard is all there is), so any number of shards costs nothing
 * to hold and any number of threads may read it. Sequence numbers are 56 digits, as Kinesis's are, so offsets are
 * as large as real ones. Read-only: the consumer and write calls are refused.
 *
 * {{{
 *   val api = new SteadyKinesisApi("s", shards = 10000, recordsPerSecond = 2, recordBytes = 100)
 *   api.getRecords("s", api.shardIterator("s", "shardId-000000000007", ShardPosition.TrimHorizon), 100)
 * }}}
 */
final class SteadyKinesisApi(val stream: String, shards: Int, recordsPerSecond: Double, recordBytes: Int,
    clock: () => Long = () => System.currentTimeMillis()) extends KinesisApi {
  private val start = clock()
  private val data = new Array[Byte](recordBytes)
  private val keys = (0 until 64).map(k => s"k$k")
  private val ids = (0 until shards).map(i => f"shardId-$i%012d")
  private val index = ids.zipWithIndex.toMap
  /** Sequence numbers of 56 digits, as Kinesis's look: 44 naming the shard, then the record's index in 12. */
  private val prefixes = (0 until shards).map(i => (f"4965$i%08d" + "0" * 44).getBytes(ISO_8859_1))
  /**
   * Made from the shard's digits with the index written into the last 12: a String made of Latin-1 bytes is one
   * copy. Built with string concatenation and padding, the fake's records took a quarter of the fetch threads' CPU in
   * `ReadPathBenchmark`, which measures the connector, not its stand-in for Kinesis.
   */
  private def sequence(shard: Int, i: Long): String = {
    val digits = prefixes(shard).clone()
    var at = digits.length - 1
    var left = i
    while (left > 0) {
      digits(at) = ('0' + (left % 10)).toByte
      left /= 10
      at -= 1
    }
    new String(digits, ISO_8859_1)
  }
  private def available(now: Long): Long = ((now - start) * recordsPerSecond / 1000).toLong
  private def arrival(i: Long): Long = start + (i * 1000 / recordsPerSecond).toLong

  private def check(name: String): Unit =
    if (name != stream) throw KinesisErrors.streamNotFound(name, "us-east-1", "steady")

  override def describeStream(name: String): StreamSummary = {
    check(name)
    StreamSummary(stream, s"arn:aws:kinesis:us-east-1:000000000000:stream/$stream", "ACTIVE", shards, start, 24)
  }

  override def listShards(name: String, pageSize: Int, afterShardId: Option[String]): Seq[ShardInfo] = {
    check(name)
    val from = afterShardId.fold(0)(id => index(id) + 1)
    ids.slice(from, from + pageSize).map(ShardInfo(_, Nil, closed = false))
  }

  override def shardIterator(name: String, shardId: String, position: ShardPosition): String = {
    check(name)
    val shard = index(shardId)
    val at = position match {
      case ShardPosition.TrimHorizon => 0L
      case ShardPosition.AtTimestamp(ms) => math.max(0L, math.ceil((ms - start) * recordsPerSecond / 1000).toLong)
      case ShardPosition.AfterRecord(seq, Some(-1L)) => seq.takeRight(12).toLong // at the record (atRecord)
      case ShardPosition.AfterRecord(seq, _) => seq.takeRight(12).toLong + 1
      case ShardPosition.Finished => throw new IllegalArgumentException("a finished shard has no iterator")
    }
    s"$shard:$at"
  }

  /**
   * CPU-nanoseconds the reading threads spent in [[getRecords]] making records up: what a real Kinesis spends on its
   * own machines, so [[ReadPathBenchmark]] reports the connector's CPU with and without it.
   */
  val cpuNanos = new java.util.concurrent.atomic.LongAdder

  override def getRecords(name: String, iterator: String, limit: Int): GetRecordsResult = {
    val cpu0 = DriverTimings.threadCpuNanos()
    try made(name, iterator, limit)
    finally cpuNanos.add(DriverTimings.threadCpuNanos() - cpu0)
  }

  private def made(name: String, iterator: String, limit: Int): GetRecordsResult = {
    check(name)
    val Array(shard, from) = iterator.split(':').map(_.toLong)
    val now = available(clock())
    val to = math.min(now, from + limit)
    val records = Vector.newBuilder[FetchedRecord]
    var i = from
    while (i < to) {
      records += FetchedRecord(sequence(shard.toInt, i), keys((i % 64).toInt), data, arrival(i))
      i += 1
    }
    GetRecordsResult(records.result(), Some(s"$shard:${math.max(from, to)}"),
      math.max(0L, ((now - to) * 1000 / recordsPerSecond).toLong))
  }

  private def readOnly = throw new UnsupportedOperationException("SteadyKinesisApi is read-only")
  override def listConsumers(name: String): Seq[StreamConsumer] = readOnly
  override def describeConsumer(name: String, consumer: String): Option[StreamConsumer] = readOnly
  override def registerConsumer(name: String, consumer: String): StreamConsumer = readOnly
  override def deregisterConsumer(name: String, consumer: String): Boolean = readOnly
  override def putRecords(name: String, entries: IndexedSeq[PutEntry]): IndexedSeq[PutEntryResult] = readOnly
}

object SteadyKinesisApi {
  /**
   * Installs `api` for a query reading its stream ([[KinesisClients.install]]) and returns that query's options,
   * with `more`: a loopback endpoint that is never called, placeholder keys, reading from trim_horizon.
   */
  def installed(api: SteadyKinesisApi, more: Map[String, String] = Map.empty): Map[String, String] = {
    val options = Map(
      "streamName" -> api.stream, "region" -> "us-east-1", "endpoint" -> "http://127.0.0.1:9",
      "awsAccessKey" -> "benchmark", "awsSecretKey" -> "benchmark", "initialPosition" -> "trim_horizon") ++ more
    KinesisClients.install(KinesisSourceOptions.parse(options).connection, api)
    options
  }
}
