package io.kinesisspark.sink

import scala.collection.mutable

import io.kinesisspark.aws.PutEntry
import io.kinesisspark.kpl.{KplAggregateBuilder, UserRecord}

/**
 * Packs rows into KPL aggregates, one open aggregate per stream and shard: rows whose hash keys fall in the same
 * shard (by [[ShardMap]]) share an aggregate, whatever their partition keys, which is what lets a shard take more
 * than 1,000 rows per second. An aggregate takes the partition key (and explicit hash key, if any) of its first
 * row, so Kinesis stores it in that shard, the one every row in it belongs to; each row keeps its own keys inside.
 *
 * An aggregate is closed and handed to `emit` when the next row would take it over what `fill` allows (counting its
 * partition key; [[AggregateFill]] sizes aggregates to the rows when the sink paces itself), when the open
 * aggregates together hold a PutRecords call's worth, or on [[flush]]. A closed aggregate of a single row is put
 * as a plain record, as the KPL does; so is a row too large to share one.
 *
 * {{{
 *   val aggregator = new KplAggregator(stream => shardMaps(stream), AggregateFill.fixed(51200), emit = sender.add)
 *   rows.foreach { case (stream, record) => aggregator.add(stream, record) }
 *   aggregator.flush()
 * }}}
 */
final class KplAggregator(shardMap: String => ShardMap, fill: AggregateFill, emit: SinkEntry => Unit) {

  private final class Open(val stream: String, val shard: String) {
    val builder = new KplAggregateBuilder
    var first: UserRecord = _
    var userBytes = 0L
    var firstKeyBytes = 0
    /** The Kinesis record's size with a row adding `added` bytes: the aggregate and the outer partition key. */
    def outerSize(keyBytes: Int, added: Long): Long =
      builder.sizeInBytes + added + (if (builder.isEmpty) keyBytes else firstKeyBytes)
  }

  /** What an aggregate adds besides its rows and outer key: its magic bytes and digest. */
  private val emptyAggregateBytes = new KplAggregateBuilder().sizeInBytes

  private val open = mutable.LinkedHashMap.empty[(String, String), Open]
  private var openBytes = 0L

  def add(stream: String, record: UserRecord): Unit = {
    val hashKey = record.effectiveHashKey.getOrElse(
      throw new IllegalArgumentException(s"invalid explicit hash key ${record.explicitHashKey}"))
    val shard = shardMap(stream).shardFor(hashKey)
    val aggregate = open.getOrElseUpdate((stream, shard), new Open(stream, shard))
    val keyBytes = SinkEntry.utf8Length(record.partitionKey)
    val plainBytes = record.data.length.toLong + keyBytes
    var added = aggregate.builder.addedBytes(record)
    fill.observe(added, plainBytes, emptyAggregateBytes + keyBytes)
    val maxBytes = fill.bytes
    if (!aggregate.builder.isEmpty && aggregate.outerSize(keyBytes, added) > maxBytes) {
      close(aggregate)
      added = aggregate.builder.addedBytes(record)
    }
    if (aggregate.outerSize(keyBytes, added) > maxBytes) {
      // Too large to share an aggregate (or rows carry the most as plain records): alone, after the rows before it.
      emit(plain(stream, shard, record, plainBytes))
    } else {
      if (aggregate.builder.isEmpty) {
        aggregate.first = record
        aggregate.firstKeyBytes = keyBytes
      }
      openBytes -= aggregate.builder.sizeInBytes
      aggregate.builder.add(record, added)
      openBytes += aggregate.builder.sizeInBytes
      aggregate.userBytes += plainBytes
      if (openBytes > PutRecordsLimits.MaxBytesPerCall) flush()
    }
  }

  /** Closes every open aggregate, in the order they were opened. */
  def flush(): Unit = {
    open.values.foreach(close)
    open.clear()
  }

  private def close(aggregate: Open): Unit = {
    if (!aggregate.builder.isEmpty) {
      openBytes -= aggregate.builder.sizeInBytes
      if (aggregate.builder.count == 1) emit(plain(aggregate.stream, aggregate.shard, aggregate.first, aggregate.userBytes))
      else emit(SinkEntry(aggregate.stream,
        PutEntry(aggregate.first.partitionKey, aggregate.first.explicitHashKey, aggregate.builder.build()),
        orderKey = aggregate.shard, userRecords = aggregate.builder.count, userBytes = aggregate.userBytes,
        predictedShard = Some(aggregate.shard), aggregated = true))
      aggregate.builder.clear()
      aggregate.userBytes = 0
    }
  }

  private def plain(stream: String, shard: String, record: UserRecord, bytes: Long): SinkEntry =
    SinkEntry(stream, PutEntry(record.partitionKey, record.explicitHashKey, record.data), orderKey = shard,
      userRecords = 1, userBytes = bytes, predictedShard = Some(shard))
}
