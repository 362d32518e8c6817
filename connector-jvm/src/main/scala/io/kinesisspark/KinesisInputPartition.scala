package io.kinesisspark

import org.apache.spark.sql.connector.read.InputPartition

import io.kinesisspark.aws.AwsConnection
import io.kinesisspark.blocks.{WireFormat, WireWriter}
import io.kinesisspark.reader.FetchLimits

/**
 * One task's share of a micro-batch: one or more shard slices (several when small blocks were coalesced),
 * read one after the other. The task prefers the executor that holds most of its bytes.
 *
 * Its slices travel to the executor as [[io.kinesisspark.blocks.WireFormat]] bytes: Java-serialized, the
 * partitions of a batch at 10,000 shards made tasks of 4 MB (Spark warns above 1 MB), and serializing them took
 * most of the driver's RPC threads in DriverScaleBenchmark.
 *
 * {{{
 *   KinesisInputPartition(connection, Seq(ShardSlice("clicks", "shardId-000000000000", from, to, ranges)), limits,
 *     failOnDataLoss = true, schema)
 * }}}
 */
final case class KinesisInputPartition(
    connection: AwsConnection,
    slices: Seq[ShardSlice],
    limits: FetchLimits,
    failOnDataLoss: Boolean,
    recordSchema: KinesisRecordSchema) extends InputPartition {

  override def preferredLocations(): Array[String] = PartitionCoalescer.holderOfMost(slices.flatMap(_.ranges)).toArray

  /** Java serialization writes this instead (see the class's comment). */
  private def writeReplace(): AnyRef =
    KinesisInputPartition.OnTheWire(connection, KinesisInputPartition.encode(slices), limits, failOnDataLoss,
      recordSchema)
}

object KinesisInputPartition {
  /** A partition as Java serialization sends it: the slices as bytes. */
  private final case class OnTheWire(connection: AwsConnection, slices: Array[Byte], limits: FetchLimits,
      failOnDataLoss: Boolean, recordSchema: KinesisRecordSchema) {
    private def readResolve(): AnyRef =
      KinesisInputPartition(connection, decode(slices), limits, failOnDataLoss, recordSchema)
  }

  /**
   * Per slice: stream, shard id, ranges, then from and to, each a flag [position]: a slice's from is most often its
   * first range's from, and its to its last range's to, so the flag (set) says so instead.
   */
  private[kinesisspark] def encode(slices: Seq[ShardSlice]): Array[Byte] =
    WireFormat.encode(64 + 256 * slices.size) { wire =>
      wire.out.writeInt(slices.size)
      slices.foreach { s =>
        wire.text(s.stream)
        wire.text(s.shardId)
        wire.ranges(s.ranges)
        boundary(wire, s.from, s.ranges.headOption.map(_.from))
        boundary(wire, s.to, s.ranges.lastOption.map(_.to))
      }
    }

  private def boundary(wire: WireWriter, position: ShardPosition, ranges: Option[ShardPosition]): Unit = {
    val same = ranges.contains(position)
    wire.out.writeBoolean(same)
    if (!same) wire.position(position)
  }

  private[kinesisspark] def decode(bytes: Array[Byte]): Vector[ShardSlice] =
    WireFormat.decode(bytes, "kinesis-spark input partition") { wire =>
      def slice(): ShardSlice = {
        val stream = wire.text()
        val shardId = wire.text()
        val ranges = wire.ranges()
        def boundary(ofRanges: Option[ShardPosition]): ShardPosition =
          if (!wire.in.readBoolean()) wire.position()
          else ofRanges.getOrElse(throw wire.damaged(s"a slice of $shardId bounded by a range it does not have"))
        val from = boundary(ranges.headOption.map(_.from))
        val to = boundary(ranges.lastOption.map(_.to))
        ShardSlice(stream, shardId, from, to, ranges)
      }
      Vector.fill(wire.count())(slice())
    }
}
