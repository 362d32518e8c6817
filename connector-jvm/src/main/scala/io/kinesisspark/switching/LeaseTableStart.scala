package io.kinesisspark.switching

import org.slf4j.LoggerFactory

import io.kinesisspark.{KinesisErrors, KinesisSourceOptions, ShardPosition}
import io.kinesisspark.aws.{KinesisApi, PositionUnavailableException}
import io.kinesisspark.kpl.{KplAggregate, KplDecoded}
import io.kinesisspark.reader.TransientBackoff
import io.kinesisspark.switching.KclStart.RecordAt

/**
 * The start a query with option `kclLeaseTable` makes at its first start, and the command line prints
 * ([[PrintStart]]): the lease table read twice, [[RenewalWindowMs]] apart, to see whether the application still runs;
 * each stream's shards listed; each stream's [[KclStart.plan]]; its notes logged as warnings.
 *
 * {{{
 *   val start = LeaseTableStart.plan(options, new DynamoDbLeaseTable("orders-app", connection), api)
 *   start.position   // the per-shard start, as option initialPosition's JSON would give it
 * }}}
 */
object LeaseTableStart {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * How long apart the table is read twice to see leases being renewed. A KCL worker renews its leases every third
   * of its failover time (`failoverTimeMillis`, 10 s by default): a running application renews each lease it holds
   * within 4 s.
   */
  val RenewalWindowMs = 4000L

  /** GetRecords calls one record's lookup makes at most (Kinesis allows 5 a second per shard). */
  private val MaxLookupCalls = 5

  /**
   * @param options the query's options (its streams, `initialPosition` as the default, `failOnDataLoss`)
   * @param table   the lease table
   * @param api     the streams' Kinesis
   * @param sleep   waits between the table's two reads
   */
  def plan(options: KinesisSourceOptions, table: LeaseTable, api: KinesisApi,
      sleep: Long => Unit = Thread.sleep(_: Long)): StartPlan = {
    val before = table.leases()
    sleep(RenewalWindowMs)
    val leases = table.leases()
    if (options.streams.size > 1 && leases.exists(_.stream.isEmpty)) {
      throw KinesisErrors.singleStreamLeaseTable(table.name, options.streams)
    }
    val counters = before.map(l => l.key -> l.counter).toMap
    val renewed = leases.filter(l => counters.get(l.key).exists(_ < l.counter)).filter(l => options.streams.size == 1 ||
      l.stream.exists(options.streams.contains))
    val plans = options.streams.map { stream =>
      val listed = TransientBackoff.retrying(s"Listing the shards of '$stream'")(
        api.listShards(stream, options.maxShardsPerDescribe))
      KclStart.plan(stream, table.name, leases, listed, options.initialPosition, recordAt(api, stream),
        options.failOnDataLoss)
    }
    val running = if (renewed.isEmpty) Nil else Seq(
      s"The leases of shards ${renewed.map(_.shardId).sorted.mkString(", ")} in lease table '${table.name}' were " +
        s"renewed while it was read (by ${renewed.flatMap(_.owner).distinct.sorted.mkString(", ")}): the KCL " +
        "application is still running. This start uses its checkpoints as they are now; what it processes and " +
        "checkpoints from now on is read again by this query. Stop the application first to switch without " +
        "reading anything twice.")
    val start = StartPlan.merge(options.initialPosition, plans, running)
    start.notes.foreach(log.warn)
    start
  }

  /**
   * What the record with `sequenceNumber` in the shard is: a KCL checkpoint at user record 0 means the whole record
   * when it is a plain one, and only the first user record when it is a KPL aggregate.
   */
  def recordAt(api: KinesisApi, stream: String)(shardId: String, sequenceNumber: String): RecordAt = {
    val iterator =
      try TransientBackoff.retrying(s"Asking for an iterator at $shardId/$sequenceNumber of '$stream'")(
        api.shardIterator(stream, shardId, ShardPosition.atRecord(sequenceNumber)))
      catch { case _: PositionUnavailableException => return RecordAt.Gone }
    // An iterator at a record's sequence number starts with that record, if it is still there. Kinesis may answer
    // a call or two with no record while the shard holds more (MillisBehindLatest above 0): follow those.
    var next: Option[String] = Some(iterator)
    var first: Option[io.kinesisspark.aws.FetchedRecord] = None
    var calls = 0
    while (first.isEmpty && next.isDefined && calls < MaxLookupCalls) {
      val result = TransientBackoff.retrying(s"Reading $shardId/$sequenceNumber of '$stream'")(
        api.getRecords(stream, next.get, 1))
      calls += 1
      first = result.records.headOption
      next = if (result.millisBehindLatest > 0) result.nextIterator else None
    }
    first match {
      case Some(r) if ShardPosition.compareSequenceNumbers(r.sequenceNumber, sequenceNumber) == 0 =>
        KplAggregate.decode(r.data) match {
          case KplDecoded.Aggregated(_) => RecordAt.Aggregate
          case _                        => RecordAt.Plain
        }
      case Some(_) => RecordAt.Gone // the oldest record left is a later one: retention trimmed the checkpoint's
      case None if next.isEmpty => RecordAt.Gone // nothing at or after it, up to the shard's tip
      case None => throw KinesisErrors.checkpointRecordUnanswered(stream, shardId, sequenceNumber, calls)
    }
  }
}
