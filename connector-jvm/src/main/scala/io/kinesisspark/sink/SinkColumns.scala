package io.kinesisspark.sink

import java.util.Locale

import org.apache.spark.sql.types.{BinaryType, DataType, StringType, StructType}

import io.kinesisspark.KinesisErrors

/**
 * Where the sink finds each of its columns in the rows it is given, checked against the DataFrame's schema when
 * the write is set up, so a missing or mistyped column fails before any row is written. Names are matched
 * case-insensitively, like Spark's column resolution. Columns the sink does not read are ignored, with a warning
 * (see [[ignored]]), so a DataFrame read from Kinesis can be written back as it is.
 *
 * {{{
 *   val columns = SinkColumns.resolve(df.schema, options)
 *   columns.data           // Column(1, binary = true)
 *   columns.explicitHashKey // None: rows are placed by their partition key
 * }}}
 *
 * @param data            `data`, binary or string (written as its UTF-8 bytes)
 * @param partitionKey    `partitionKey`, string; absent only with `partitionKeyFallback` = `random`
 * @param explicitHashKey `explicitHashKey`, string: a decimal hash key from 0 to 2^128-1 that places the row
 * @param streamName      `streamName`, string: the stream of each row (null: option `streamName`); not read by the
 *                        awslabs alias ([[SinkFlavour]])
 * @param ignored         the names of the other columns
 */
final case class SinkColumns(
    data: SinkColumns.Column,
    partitionKey: Option[Int],
    explicitHashKey: Option[Int],
    streamName: Option[Int],
    ignored: Seq[String]) {

  /** A warning naming the columns the sink does not write, if any. */
  def ignoredWarning: Option[String] = if (ignored.isEmpty) None else Some(
    s"Column(s) ${ignored.map(c => s"'$c'").mkString(", ")} of the DataFrame written to Kinesis are ignored: the sink " +
      s"writes ${SinkColumns.Known.map(c => s"'$c'").mkString(", ")}.")
}

object SinkColumns {
  val Data = "data"
  val PartitionKey = "partitionKey"
  val ExplicitHashKey = "explicitHashKey"
  val StreamName = "streamName"
  val Known: Seq[String] = Seq(Data, PartitionKey, ExplicitHashKey, StreamName)

  /** @param binary whether the column is binary (else string) */
  final case class Column(ordinal: Int, binary: Boolean)

  def resolve(schema: StructType, options: KinesisSinkOptions): SinkColumns = {
    def find(name: String): Option[(Int, DataType)] = {
      val found = schema.fields.zipWithIndex.filter(_._1.name.equalsIgnoreCase(name))
      if (found.length > 1) throw KinesisErrors.ambiguousColumn(name, found.map(_._1.name).toSeq)
      found.headOption.map { case (f, i) => (i, f.dataType) }
    }
    def string(name: String): Option[Int] = find(name).map {
      case (i, StringType) => i
      case (_, other) => throw KinesisErrors.wrongColumnType(name, other.simpleString,
        s"string (cast it: CAST($name AS STRING))")
    }

    val data = find(Data) match {
      case Some((i, BinaryType)) => Column(i, binary = true)
      case Some((i, StringType)) => Column(i, binary = false)
      case Some((_, other)) => throw KinesisErrors.wrongColumnType(Data, other.simpleString,
        "binary or string (cast it: CAST(data AS BINARY), or to_json(...) for a struct)")
      case None => throw KinesisErrors.missingColumn(Data, "binary or string: the record's payload", "")
    }
    val partitionKey = string(PartitionKey)
    if (partitionKey.isEmpty && options.partitionKeyFallback == PartitionKeyFallback.Fail) {
      throw KinesisErrors.missingColumn(PartitionKey, "string: the key that places each record in a shard",
        "; add one (e.g. CAST(id AS STRING) AS partitionKey), or set option 'partitionKeyFallback' to 'random' " +
          "to give each row a random key")
    }
    val streamName = if (options.streamNameColumn) string(StreamName) else None
    if (streamName.isEmpty && options.stream.isEmpty) {
      throw KinesisErrors.missingOption(io.kinesisspark.KinesisOptionKeys.StreamName,
        if (options.streamNameColumn) "the stream to write to, unless the DataFrame has a 'streamName' column " +
          "naming each row's stream" else "the stream to write to")
    }
    val used = (Set(Data, PartitionKey, ExplicitHashKey) ++ streamName.map(_ => StreamName)).map(_.toLowerCase(Locale.ROOT))
    SinkColumns(data, partitionKey, string(ExplicitHashKey), streamName,
      schema.fieldNames.toSeq.filterNot(n => used(n.toLowerCase(Locale.ROOT))))
  }
}
