package io.kinesisspark.sink

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

class SinkColumnsSuite extends AnyFunSuite {
  private val options = KinesisSinkOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1"))

  private def schema(fields: (String, DataType)*): StructType = StructType(fields.map { case (n, t) => StructField(n, t) })

  private def rejected(s: StructType, o: KinesisSinkOptions = options): String =
    intercept[IllegalArgumentException](SinkColumns.resolve(s, o)).getMessage

  test("finds the columns by name, case-insensitively, and lists the others") {
    val c = SinkColumns.resolve(schema("id" -> LongType, "PartitionKey" -> StringType, "DATA" -> BinaryType,
      "explicitHashKey" -> StringType, "streamname" -> StringType), options)
    assert(c.data == SinkColumns.Column(2, binary = true) && c.partitionKey.contains(1))
    assert(c.explicitHashKey.contains(3) && c.streamName.contains(4) && c.ignored == Seq("id"))
    assert(c.ignoredWarning.contains("Column(s) 'id' of the DataFrame written to Kinesis are ignored: the sink writes " +
      "'data', 'partitionKey', 'explicitHashKey', 'streamName'."))
    val strings = SinkColumns.resolve(schema("data" -> StringType, "partitionKey" -> StringType), options)
    assert(strings.data == SinkColumns.Column(0, binary = false) && strings.ignoredWarning.isEmpty)
  }

  test("a missing or mistyped column names the column and what is accepted") {
    assert(rejected(schema("partitionKey" -> StringType, "value" -> BinaryType)) ==
      "The DataFrame written to Kinesis has no column 'data' (binary or string: the record's payload).")
    assert(rejected(schema("data" -> IntegerType, "partitionKey" -> StringType)) == "Column 'data' of the DataFrame " +
      "written to Kinesis is of type int: expected binary or string (cast it: CAST(data AS BINARY), or to_json(...) for a struct).")
    assert(rejected(schema("data" -> BinaryType, "partitionKey" -> LongType)) == "Column 'partitionKey' of the " +
      "DataFrame written to Kinesis is of type bigint: expected string (cast it: CAST(partitionKey AS STRING)).")
    assert(rejected(schema("data" -> BinaryType, "partitionKey" -> StringType, "explicitHashKey" -> DecimalType(38, 0)))
      .contains("Column 'explicitHashKey' of the DataFrame written to Kinesis is of type decimal(38,0): expected string"))
    assert(rejected(schema("data" -> BinaryType)) == "The DataFrame written to Kinesis has no column 'partitionKey' " +
      "(string: the key that places each record in a shard); add one (e.g. CAST(id AS STRING) AS partitionKey), or set " +
      "option 'partitionKeyFallback' to 'random' to give each row a random key.")
    assert(rejected(schema("data" -> BinaryType, "Data" -> StringType)).contains("has 2 columns named 'data'"))
  }

  test("partitionKey may be absent with partitionKeyFallback = random; a stream comes from the option or a column") {
    val random = options.copy(partitionKeyFallback = PartitionKeyFallback.Random)
    assert(SinkColumns.resolve(schema("data" -> BinaryType), random).partitionKey.isEmpty)
    val noStream = options.copy(stream = None)
    assert(rejected(schema("data" -> BinaryType, "partitionKey" -> StringType), noStream) == "Option 'streamName' is " +
      "required: the stream to write to, unless the DataFrame has a 'streamName' column naming each row's stream.")
    assert(SinkColumns.resolve(schema("data" -> BinaryType, "partitionKey" -> StringType, "streamName" -> StringType),
      noStream).streamName.contains(2))
  }

  test("the awslabs alias does not route by a streamName column: rows read with it name the stream they came from") {
    val awslabs = KinesisSinkOptions.parse(Map("streamName" -> "copy", "region" -> "us-east-1"), SinkFlavour.Awslabs)
    val c = SinkColumns.resolve(schema("data" -> BinaryType, "streamName" -> StringType, "partitionKey" -> StringType), awslabs)
    assert(c.streamName.isEmpty && c.ignored == Seq("streamName"))
    assert(rejected(schema("data" -> BinaryType, "streamName" -> StringType, "partitionKey" -> StringType),
      awslabs.copy(stream = None)) == "Option 'streamName' is required: the stream to write to.")
  }
}
