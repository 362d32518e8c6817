package io.kinesisspark.kpl

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

import com.google.protobuf.{CodedOutputStream, WireFormat}
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.kpl.KplDecoded.{Aggregated, Corrupt, NotAggregated}

class KplAggregateSuite extends AnyFunSuite {

  private val magic = Array(0xF3, 0x89, 0x9A, 0xC2).map(_.toByte)

  private def hex(s: String): Array[Byte] = s.split(" ").map(Integer.parseInt(_, 16).toByte)

  /** Magic, message, MD5 of the message: an aggregate framed by hand around any protobuf bytes. */
  private def frame(message: Array[Byte]): Array[Byte] =
    magic ++ message ++ MessageDigest.getInstance("MD5").digest(message)

  /** A protobuf message written field by field with protobuf-java, independently of the connector's encoder. */
  private def message(write: CodedOutputStream => Unit): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = CodedOutputStream.newInstance(bytes)
    write(out)
    out.flush()
    bytes.toByteArray
  }

  private def nested(out: CodedOutputStream, field: Int)(write: CodedOutputStream => Unit): Unit = {
    val body = message(write)
    out.writeTag(field, WireFormat.WIRETYPE_LENGTH_DELIMITED)
    out.writeUInt32NoTag(body.length)
    out.writeRawBytes(body)
  }

  private def records(decoded: KplDecoded): Seq[(String, Option[String], String)] = decoded match {
    case Aggregated(rs) => rs.map(r => (r.partitionKey, r.explicitHashKey, new String(r.data, UTF_8)))
    case other          => fail(s"expected an aggregate, got $other")
  }

  private def reason(decoded: KplDecoded): String = decoded match {
    case Corrupt(why) => why
    case other        => fail(s"expected Corrupt, got $other")
  }

  // pk table ["a"], one record {partition_key_index 0, data "hi"}
  private val oneRecordMessage = hex("0a 01 61 1a 06 08 00 1a 02 68 69")

  test("decodes an aggregate written byte by byte") {
    assert(records(KplAggregate.decode(frame(oneRecordMessage))) == Seq(("a", None, "hi")))
  }

  test("encodes that aggregate to exactly the same bytes") {
    assert(KplAggregateBuilder.encode(Seq(UserRecord("a", None, "hi".getBytes(UTF_8)))).sameElements(frame(oneRecordMessage)))
  }

  test("decodes shared keys, explicit hash keys and tags, with records written before the tables") {
    val bytes = frame(message { out =>
      nested(out, 3) { r => r.writeUInt64(1, 1); r.writeByteArray(3, "first".getBytes(UTF_8)) }
      nested(out, 3) { r =>
        r.writeUInt64(1, 0); r.writeUInt64(2, 0); r.writeByteArray(3, "second".getBytes(UTF_8))
        nested(r, 4) { t => t.writeString(1, "tag"); t.writeString(2, "value") }
      }
      nested(out, 3) { r => r.writeUInt64(1, 1); r.writeByteArray(3, Array.emptyByteArray) }
      out.writeString(1, "pk-0"); out.writeString(1, "pk-1")
      out.writeString(2, "12345")
      out.writeString(9, "a field a later format might add")
    })
    assert(records(KplAggregate.decode(bytes)) == Seq(
      ("pk-1", None, "first"), ("pk-0", Some("12345"), "second"), ("pk-1", None, "")))
  }

  test("data without the magic bytes is a plain record") {
    Seq(Array.emptyByteArray, "plain".getBytes(UTF_8), magic.take(3), hex("f3 89 9a c3") ++ oneRecordMessage)
      .foreach(bytes => assert(KplAggregate.decode(bytes) == NotAggregated))
  }

  test("round trip: empty data, unicode keys, explicit hash keys, binary data") {
    val input = Seq(
      UserRecord("ключ-🔑", None, Array.emptyByteArray),
      UserRecord("k", Some("0"), Array[Byte](0, -1, 127, -128)),
      UserRecord("ключ-🔑", Some("340282366920938463463374607431768211455"), "x".getBytes(UTF_8)),
      UserRecord("日本", Some("0"), "y".getBytes(UTF_8)))
    KplAggregate.decode(KplAggregateBuilder.encode(input)) match {
      case Aggregated(out) =>
        assert(out.map(r => (r.partitionKey, r.explicitHashKey)) == input.map(r => (r.partitionKey, r.explicitHashKey)))
        assert(out.map(_.data.toSeq) == input.map(_.data.toSeq))
      case other => fail(other.toString)
    }
  }

  test("many records: the size known at every step is the size built") {
    val builder = new KplAggregateBuilder
    val input = (0 until 5000).map(i => UserRecord(s"key-${i % 37}", if (i % 5 == 0) Some((BigInt(i % 45) << 100).toString) else None,
      Array.fill(i % 300)(i.toByte)))
    input.zipWithIndex.foreach { case (r, i) =>
      val expected = builder.sizeWith(r)
      builder.add(r)
      assert(builder.sizeInBytes == expected)
      if (i % 997 == 0) assert(builder.build().length == builder.sizeInBytes)
    }
    val bytes = builder.build()
    assert(bytes.length == builder.sizeInBytes && builder.count == 5000)
    KplAggregate.decode(bytes) match {
      case Aggregated(out) =>
        assert(out.size == 5000)
        assert(out.map(r => (r.partitionKey, r.explicitHashKey, r.data.toSeq)) == input.map(r => (r.partitionKey, r.explicitHashKey, r.data.toSeq)))
      case other => fail(other.toString)
    }
  }

  test("a key used again is stored once: the second record costs only its index and data") {
    def size(keys: String*): Long = {
      val builder = new KplAggregateBuilder
      keys.foreach(k => builder.add(UserRecord(k, Some("7"), "1".getBytes(UTF_8))))
      builder.sizeInBytes
    }
    // The only difference is the table entry for "abd": a tag, a length and 3 bytes (both use the one hash key "7").
    assert(size("abc", "abd") - size("abc", "abc") == 5)
  }

  test("a cleared builder starts a new aggregate; an empty one cannot be built") {
    val builder = new KplAggregateBuilder
    builder.add(UserRecord("old", None, "1".getBytes(UTF_8)))
    builder.clear()
    assert(builder.isEmpty && builder.sizeInBytes == 4 + 16)
    intercept[IllegalArgumentException](builder.build())
    builder.add(UserRecord("a", None, "hi".getBytes(UTF_8)))
    assert(builder.build().sameElements(frame(oneRecordMessage)))
  }

  test("corrupt: magic bytes only, or too short for a digest") {
    assert(reason(KplAggregate.decode(magic)).contains("too short"))
    assert(reason(KplAggregate.decode(magic ++ Array.fill[Byte](15)(0))).contains("too short"))
  }

  test("corrupt: the digest does not match (a flipped bit in the digest or in the message, a truncated aggregate)") {
    val good = frame(oneRecordMessage)
    val badDigest = good.clone(); badDigest(good.length - 1) = (badDigest(good.length - 1) ^ 1).toByte
    val badMessage = good.clone(); badMessage(6) = (badMessage(6) ^ 1).toByte
    Seq(badDigest, badMessage, good.dropRight(1), good.take(good.length - 3))
      .foreach(bytes => assert(reason(KplAggregate.decode(bytes)).contains("MD5"), bytes.toSeq))
  }

  test("corrupt: malformed protobuf under a matching digest") {
    val cases = Seq(
      oneRecordMessage.dropRight(1),       // the record's data is cut short
      hex("0a 05 61"),                      // a key longer than the message
      hex("1a 80 80 80 80 08"),             // a negative length
      hex("00 01"),                         // field number 0
      hex("0c"),                            // an end-group tag with no group open
      hex("0f 01"))                         // wire type 7
    cases.foreach(m => assert(reason(KplAggregate.decode(frame(m))).startsWith("malformed protobuf"), m.toSeq))
  }

  test("corrupt: an index outside its table, a missing required field, no records") {
    val pkOut = frame(message { out => out.writeString(1, "a"); nested(out, 3) { r => r.writeUInt64(1, 1); r.writeByteArray(3, Array[Byte](1)) } })
    assert(reason(KplAggregate.decode(pkOut)) == "record 0 names partition key 1 of a table of 1")
    val hugeIndex = frame(message { out => out.writeString(1, "a"); nested(out, 3) { r => r.writeUInt64(1, -1L); r.writeByteArray(3, Array[Byte](1)) } })
    assert(reason(KplAggregate.decode(hugeIndex)) == "record 0 names partition key 18446744073709551615 of a table of 1")
    val ehkOut = frame(message { out =>
      out.writeString(1, "a")
      nested(out, 3) { r => r.writeUInt64(1, 0); r.writeByteArray(3, Array[Byte](1)) }
      nested(out, 3) { r => r.writeUInt64(1, 0); r.writeUInt64(2, 0); r.writeByteArray(3, Array[Byte](1)) }
    })
    assert(reason(KplAggregate.decode(ehkOut)) == "record 1 names explicit hash key 0 of a table of 0")
    val noKey = frame(message { out => out.writeString(1, "a"); nested(out, 3)(_.writeByteArray(3, Array[Byte](1))) })
    assert(reason(KplAggregate.decode(noKey)) == "record 0 has no partition key index")
    val noData = frame(message { out => out.writeString(1, "a"); nested(out, 3)(_.writeUInt64(1, 0)) })
    assert(reason(KplAggregate.decode(noData)) == "record 0 has no data")
    assert(reason(KplAggregate.decode(frame(message(_.writeString(1, "a"))))) == "it holds no records")
    assert(reason(KplAggregate.decode(frame(Array.emptyByteArray))) == "it holds no records")
  }

  test("effective hash key: the explicit one, else the partition key's MD5 as an unsigned number") {
    assert(UserRecord("a", None, Array.emptyByteArray).effectiveHashKey.contains(BigInt("0cc175b9c0f1b6a831c399e269772661", 16)))
    assert(UserRecord("", None, Array.emptyByteArray).effectiveHashKey.contains(BigInt("d41d8cd98f00b204e9800998ecf8427e", 16)))
    assert(UserRecord("a", Some("0"), Array.emptyByteArray).effectiveHashKey.contains(BigInt(0)))
    assert(UserRecord("a", Some("340282366920938463463374607431768211455"), Array.emptyByteArray).effectiveHashKey
      .contains(UserRecord.HashKeySpace - 1))
    Seq("340282366920938463463374607431768211456", "-1", "", "12a", " 1")
      .foreach(k => assert(UserRecord("a", Some(k), Array.emptyByteArray).effectiveHashKey.isEmpty, k))
  }
}
