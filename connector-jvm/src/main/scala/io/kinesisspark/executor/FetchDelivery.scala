package io.kinesisspark.executor

import io.kinesisspark.LoaderBridge
import io.kinesisspark.blocks.{WireFormat, WireReader, WireWriter}
import io.kinesisspark.reader.ShardCounters

/**
 * What an executor's [[FetchService]] sends the driver for one ticket: the ticket's id, which copy of it this is
 * (executor and attempt), and its results, as bytes of a small fixed layout. The driver decodes every delivery on its
 * RPC threads, and a round brings one per `shardsPerTask` shards: Java serialization of the same results (class
 * descriptors, handle tables and a stream per delivery) was the largest allocation of the driver JVM at 1,000
 * shards in DriverScaleBenchmark, and its garbage collections were the query thread's longest waits. Bytes of JDK
 * types only also cross the class loaders of a Spark Connect session (see [[LoaderBridge]]) as they are. A
 * failure, rare and of any class, still travels Java-serialized inside.
 *
 * Layout ([[WireFormat]]: strings and positions written once, then referred to): magic (int), version (byte),
 * ticket (long), copy, count (int), then per result: stream, shard id, ranges (count, then each a
 * [[WireWriter.range]]), caught up (boolean), lag flag [long], counters ([[ShardCounters.write]]), location, consumer
 * missing (boolean), failure flag [length (int), Java-serialized bytes]. Deliveries never outlive the query that made
 * them, so no other version is read.
 *
 * {{{
 *   val bytes = FetchDelivery.encode(FetchDelivery(ticket.id, s"$location/$attempt", results))
 *   FetchDelivery.decode(bytes).results
 * }}}
 *
 * @param copy the executor and dispatch attempt that fetched it: a copy delivered again is recognised
 */
final case class FetchDelivery(ticket: Long, copy: String, results: Seq[ShardFetchResult])

object FetchDelivery {
  private val Magic = 0x4b534644 // "KSFD"
  private val Version: Byte = 3

  def encode(delivery: FetchDelivery): Array[Byte] = WireFormat.encode(64 + 256 * delivery.results.size) { wire =>
    val out = wire.out
    out.writeInt(Magic)
    out.writeByte(Version)
    out.writeLong(delivery.ticket)
    out.writeUTF(delivery.copy)
    out.writeInt(delivery.results.size)
    delivery.results.foreach(writeResult(wire, _))
  }

  /** A delivery [[encode]] made; anything else, or one cut short, is refused with what was found. */
  def decode(bytes: Array[Byte]): FetchDelivery = WireFormat.decode(bytes, "kinesis-spark prefetch delivery")(read)

  private def read(wire: WireReader): FetchDelivery = {
    val in = wire.in
    val magic = in.readInt()
    val version = in.readByte()
    require(magic == Magic && version == Version,
      s"not a kinesis-spark prefetch delivery (magic $magic, version $version; expected $Magic, $Version)")
    val ticket = in.readLong()
    val copy = in.readUTF()
    val results = Vector.fill(wire.count())(readResult(wire))
    FetchDelivery(ticket, copy, results)
  }

  private def writeResult(wire: WireWriter, r: ShardFetchResult): Unit = {
    val out = wire.out
    wire.text(r.stream)
    wire.text(r.shardId)
    wire.ranges(r.ranges)
    out.writeBoolean(r.caughtUp)
    wire.optionalLong(r.millisBehindLatest)
    r.counters.write(out)
    wire.text(r.location)
    out.writeBoolean(r.consumerMissing)
    out.writeBoolean(r.failure.isDefined)
    r.failure.foreach { e =>
      val serialized = LoaderBridge.toBytes(e)
      out.writeInt(serialized.length)
      out.write(serialized)
    }
  }

  private def readResult(wire: WireReader): ShardFetchResult = {
    val in = wire.in
    val stream = wire.text()
    val shardId = wire.text()
    val ranges = wire.ranges()
    ShardFetchResult(stream, shardId, ranges, caughtUp = in.readBoolean(), millisBehindLatest = wire.optionalLong(),
      counters = ShardCounters.read(in), location = wire.text(), consumerMissing = in.readBoolean(),
      failure = if (in.readBoolean()) {
        val serialized = new Array[Byte](wire.count())
        in.readFully(serialized)
        Some(LoaderBridge.fromBytes(serialized).asInstanceOf[Throwable])
      } else None)
  }
}
