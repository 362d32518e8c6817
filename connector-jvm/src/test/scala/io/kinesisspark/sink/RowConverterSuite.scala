package io.kinesisspark.sink

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.KinesisSparkException

class RowConverterSuite extends AnyFunSuite {
  private val options = KinesisSinkOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1"))
  private val schema = StructType(Seq(StructField("data", BinaryType), StructField("partitionKey", StringType),
    StructField("explicitHashKey", StringType), StructField("streamName", StringType)))

  private def converter(o: KinesisSinkOptions = options): RowConverter =
    new RowConverter(SinkColumns.resolve(schema, o), o, partitionId = 7, new java.util.Random(3))

  private def row(data: Array[Byte], key: String, hashKey: String = null, stream: String = null): InternalRow =
    InternalRow(data, Option(key).map(UTF8String.fromString).orNull, Option(hashKey).map(UTF8String.fromString).orNull,
      Option(stream).map(UTF8String.fromString).orNull)

  private def failure(r: InternalRow, o: KinesisSinkOptions = options): String =
    intercept[KinesisSparkException](converter(o)(r)).getMessage

  test("a row becomes its stream and user record") {
    val (stream, record) = converter()(row("d".getBytes(UTF_8), "k", "42", "other"))
    assert(stream == "other" && record.partitionKey == "k" && record.explicitHashKey.contains("42"))
    assert(new String(record.data, UTF_8) == "d")
    assert(converter()(row("d".getBytes(UTF_8), "k"))._1 == "s") // no stream in the row: the option's
  }

  test("string data is written as its UTF-8 bytes") {
    val strings = StructType(Seq(StructField("data", StringType), StructField("partitionKey", StringType)))
    val c = new RowConverter(SinkColumns.resolve(strings, options), options, 0)
    assert(c(InternalRow(UTF8String.fromString("héllo"), UTF8String.fromString("k")))._2.data.sameElements("héllo".getBytes(UTF_8)))
  }

  test("rows that can never be written fail, naming the row, the stream, the column and what is accepted") {
    assert(failure(row(null, "k")) == "Cannot write row 1 of task partition 7 to Kinesis stream 's': column 'data' is " +
      "null (Kinesis records need data; filter such rows out, or write an empty string or byte array instead).")
    assert(failure(row(Array[Byte](1), null)) == "Cannot write row 1 of task partition 7 to Kinesis stream 's': column " +
      "'partitionKey' is null: expected a string of 1 to 256 characters, or option 'partitionKeyFallback' = 'random' " +
      "to give such rows a random key.")
    assert(failure(row(Array[Byte](1), "")).contains("column 'partitionKey' holds a key of 0 characters (''): expected 1 to 256"))
    assert(failure(row(Array[Byte](1), "k" * 257)).contains("a key of 257 characters"))
    val huge = new Array[Byte](1024 * 1024)
    assert(failure(row(huge, "key")) == "Cannot write row 1 of task partition 7 to Kinesis stream 's': its data " +
      "(1048576 bytes) and partition key (3 bytes) are 1048579 bytes together, over Kinesis's limit of 1048576 bytes " +
      "(1 MiB) per record.")
    Seq("-1", "01", "1.5", "abc", (BigInt(1) << 128).toString).foreach { bad =>
      assert(failure(row(Array[Byte](1), "k", bad)).contains(s"column 'explicitHashKey' holds '$bad': expected a " +
        "decimal number from 0 to 2^128-1"), bad)
    }
    assert(failure(row(Array[Byte](1), "k", stream = "bad name")).contains("Kinesis stream 'bad name': column " +
      "'streamName' must hold a stream name"))
    assert(failure(row(Array[Byte](1), "k"), options.copy(stream = None)) == "Cannot write row 1 of task partition 7 " +
      "to Kinesis: its column 'streamName' is null and option 'streamName' is not set; give every row a stream, or " +
      "set option 'streamName' for rows without one.")
  }

  test("a record of exactly 1 MiB and the largest hash key are accepted") {
    val c = converter()
    assert(c(row(new Array[Byte](1024 * 1024 - 1), "k"))._2.data.length == 1024 * 1024 - 1)
    val max = ((BigInt(1) << 128) - 1).toString
    assert(c(row(Array[Byte](1), "k", max))._2.explicitHashKey.contains(max))
    assert(c(row(Array[Byte](1), "k", "0"))._2.effectiveHashKey.contains(BigInt(0)))
  }

  test("rows are numbered in errors; with partitionKeyFallback = random a missing key becomes a random one") {
    val c = converter()
    c(row(Array[Byte](1), "k"))
    assert(intercept[KinesisSparkException](c(row(null, "k"))).getMessage.startsWith("Cannot write row 2 of task partition 7"))
    val random = converter(options.copy(partitionKeyFallback = PartitionKeyFallback.Random))
    val keys = (1 to 100).map(_ => random(row(Array[Byte](1), null))._2.partitionKey)
    assert(keys.distinct.size == 100 && keys.forall(k => k.nonEmpty && k.length <= 16))
    assert(random(row(Array[Byte](1), "given"))._2.partitionKey == "given")
  }
}
