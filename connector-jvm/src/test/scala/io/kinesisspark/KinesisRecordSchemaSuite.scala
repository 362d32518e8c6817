package io.kinesisspark

import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.blocks.{KinesisRecord, RecordBlockCodec}

class KinesisRecordSchemaSuite extends AnyFunSuite {
  private val base = Map("streamName" -> "clicks", "region" -> "us-east-1")
  private val databricksColumns =
    Seq("partitionKey", "data", "stream", "shardId", "sequenceNumber", "approximateArrivalTimestamp")
  private val userRecord = KinesisRecord("key", Array[Byte](1, 2), "4959", Some(3L), 1700000000123L)
  private val plainRecord = KinesisRecord("key", Array[Byte](1, 2), "4960", None, 1700000000123L)
  private val stream = UTF8String.fromString("clicks")
  private val shard = UTF8String.fromString("shardId-000000000001")

  test("by default the rows have exactly the Databricks connector's six columns, in its order") {
    val records = KinesisSourceOptions.parse(base).recordSchema
    assert(records == KinesisRecordSchema.Databricks)
    assert(records.schema.fieldNames.toSeq == databricksColumns)
    val row = records.toRow(stream, shard, userRecord)
    assert(row.numFields == 6)
    assert(row.getUTF8String(0).toString == "key" && row.getBinary(1).toSeq == Seq[Byte](1, 2))
    assert(row.getUTF8String(2) == stream && row.getUTF8String(3) == shard)
    assert(row.getUTF8String(4).toString == "4959" && row.getLong(5) == 1700000000123000L)
  }

  test("includeSubSequenceNumber adds the user record's index last, null for a plain record") {
    val records = KinesisSourceOptions.parse(base + ("includeSubSequenceNumber" -> "TRUE")).recordSchema
    assert(records.schema.fieldNames.toSeq == databricksColumns :+ "subSequenceNumber")
    assert(records.toRow(stream, shard, userRecord).getLong(6) == 3L)
    assert(records.toRow(stream, shard, plainRecord).isNullAt(6))
    assert(KinesisSourceOptions.parse(base + ("includeSubSequenceNumber" -> "false")).recordSchema ==
      KinesisRecordSchema.Databricks)
  }

  test("the awslabs layout keeps its own order, with or without the index") {
    val awslabs = Seq("data", "streamName", "partitionKey", "sequenceNumber", "approximateArrivalTimestamp", "shardId")
    assert(KinesisRecordSchema(RecordLayout.Awslabs).schema.fieldNames.toSeq == awslabs)
    val withIndex = KinesisRecordSchema(RecordLayout.Awslabs, subSequenceNumber = true)
    assert(withIndex.schema.fieldNames.toSeq == awslabs :+ "subSequenceNumber")
    val row = withIndex.toRow(stream, shard, userRecord)
    assert(row.getUTF8String(1) == stream && row.getUTF8String(5) == shard && row.getLong(6) == 3L)
  }

  test("a row read from a record block's bytes equals the row made from the record, in every schema") {
    val records = Seq(userRecord, plainRecord, KinesisRecord("ключ-✓", Array.emptyByteArray, "4961", Some(0L), 0L))
    for (schema <- KinesisRecordSchema.All) {
      val block = RecordBlockCodec.cursor(RecordBlockCodec.encode(records))
      val row = new BlockRow(schema, stream, shard)
      // What Spark makes of the reader's rows: an UnsafeRow of every column, read through the typed getters.
      val toUnsafe = UnsafeProjection.create(schema.schema)
      val copies = records.map { record =>
        assert(block.next())
        val (fromBlock, fromRecord) = (row.at(block), schema.toRow(stream, shard, record))
        assert(fromBlock.toSeq(schema.schema).map(comparable) == fromRecord.toSeq(schema.schema).map(comparable),
          s"$schema, $record")
        assert(toUnsafe(fromBlock).copy() == toUnsafe(fromRecord).copy(), s"$schema, $record")
        fromBlock.copy()
      }
      assert(!block.next())
      // The row follows the cursor; a copy keeps its own record's values.
      assert(copies.map(_.toSeq(schema.schema).map(comparable)) ==
        records.map(schema.toRow(stream, shard, _).toSeq(schema.schema).map(comparable)), s"$schema")
    }
  }

  test("a row read from a block is read-only") {
    val row = new BlockRow(KinesisRecordSchema.Databricks, stream, shard)
    intercept[UnsupportedOperationException](row.update(0, stream))
    intercept[UnsupportedOperationException](row.setNullAt(0))
  }

  private def comparable(value: Any): Any = value match {
    case bytes: Array[Byte] => bytes.toSeq
    case other => other
  }

  test("a value other than true or false is refused, naming the option") {
    val message = intercept[IllegalArgumentException](
      KinesisSourceOptions.parse(base + ("includeSubSequenceNumber" -> "yes"))).getMessage
    assert(message.contains("includeSubSequenceNumber") && message.contains("'yes'") && message.contains("'true' or 'false'"))
  }
}
