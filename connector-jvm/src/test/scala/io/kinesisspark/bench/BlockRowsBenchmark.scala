package io.kinesisspark.bench

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.types.{BinaryType, StringType, TimestampType}
import org.apache.spark.unsafe.types.UTF8String

import io.kinesisspark.{BlockRow, KinesisRecordSchema}
import io.kinesisspark.blocks.{KinesisRecord, RecordBlockCodec}

/**
 * The executor's cost per record of a block, on one thread and without Spark's scheduling in the way (whose noise
 * on this machine's shared cores hides differences of 10 to 20 % in [[ReadPathBenchmark]]): encoding records into
 * a block, then making the partition reader's rows from it both ways it can, through [[KinesisRecord]]s (decoded,
 * then converted, as for a range a batch cuts) and straight from the block's bytes (a range wholly in the batch).
 * Each is timed over [[Rounds]] rounds after as many to warm up; the median round is printed, in ns per record.
 *
 * {{{
 *   build/sbt "connector/Test/runMain io.kinesisspark.bench.BlockRowsBenchmark"
 * }}}
 */
object BlockRowsBenchmark {
  val RecordsPerBlock = 10000
  val Blocks = 20
  val Rounds = 15

  def main(args: Array[String]): Unit = {
    val data = new Array[Byte](100)
    val blocks = (0 until Blocks).map { b =>
      (0 until RecordsPerBlock).map { i =>
        KinesisRecord(s"k${i % 64}", data, f"4965$b%08d${"0" * 32}$i%012d", None, 1700000000000L + i)
      }
    }
    val encoded = blocks.map(RecordBlockCodec.encode(_))
    val schema = KinesisRecordSchema.Databricks
    val stream = UTF8String.fromString("read-path")
    val shard = UTF8String.fromString("shardId-000000000000")
    var sink = 0L // what the rows hold, summed, so that nothing is optimized away

    def encode(): Unit = blocks.foreach(b => sink += RecordBlockCodec.encode(b).limit())
    // Each of the six columns read, as a query selecting them all has Spark read them.
    def everyColumn(r: InternalRow): Long = r.getUTF8String(0).numBytes() + r.getBinary(1).length +
      r.getUTF8String(2).numBytes() + r.getUTF8String(3).numBytes() + r.getUTF8String(4).numBytes() + r.getLong(5)
    def viaRecords(): Unit = encoded.foreach { b =>
      RecordBlockCodec.decode(b).foreach(record => sink += everyColumn(schema.toRow(stream, shard, record)))
    }
    val row = new BlockRow(schema, stream, shard)
    def fromBlock(): Unit = encoded.foreach { b =>
      val block = RecordBlockCodec.cursor(b)
      while (block.next()) sink += everyColumn(row.at(block))
    }
    // What Spark does next with each row in ReadPathBenchmark's query: an UnsafeRow of the columns it selects.
    val selected = UnsafeProjection.create(Seq(BoundReference(1, BinaryType, nullable = true),
      BoundReference(0, StringType, nullable = true), BoundReference(5, TimestampType, nullable = true)))
    def projected(): Unit = encoded.foreach { b =>
      val block = RecordBlockCodec.cursor(b)
      while (block.next()) sink += selected(row.at(block)).getLong(2)
    }

    val records = RecordsPerBlock.toLong * Blocks
    println(f"$Blocks blocks of $RecordsPerBlock%,d records of ${data.length} bytes; median of $Rounds rounds after as many to warm up")
    println("| step | ns per record |")
    println("|---|---|")
    Seq("encode a block" -> (() => encode()), "rows via KinesisRecords, every column read" -> (() => viaRecords()),
        "rows straight from the block, every column read" -> (() => fromBlock()),
        "rows straight from the block, then Spark's projection of three columns" -> (() => projected()))
      .foreach { case (name, run) =>
      (1 to Rounds).foreach(_ => run())
      val times = (1 to Rounds).map { _ =>
        val t0 = System.nanoTime()
        run()
        (System.nanoTime() - t0).toDouble / records
      }.sorted
      println(f"| $name | ${times(Rounds / 2)}%.1f |")
    }
    println(s"(checksum $sink)")
  }
}
