package io.kinesisspark.sink

import java.util.concurrent.{Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory

import io.kinesisspark.aws.KinesisClients

/**
 * Made on the driver and sent to every writer task (batch or streaming): it carries only the options and column
 * positions; clients, shard maps, shard pacers and threads are found on each executor.
 */
final class KinesisDataWriterFactory(options: KinesisSinkOptions, columns: SinkColumns)
    extends DataWriterFactory with StreamingDataWriterFactory {

  override def createWriter(partitionId: Int, taskId: Long): KinesisDataWriter = {
    val api = KinesisClients.api(options.connection)
    val metrics = new SinkMetrics
    val shardMap = new RecentShardMaps(stream => ShardMaps.get(options.connection, api, stream))
    val pacerFor = options.pacing.map(limits =>
      (stream: String, shard: String) => ShardWritePacers.get(options.connection, stream, shard, limits))
    val sender = new PutRecordsSender(api.putRecords, options.maxInflightRequests, RetryPolicy(options.maxPutRetries),
      options.preserveKeyOrder, metrics, KinesisDataWriterFactory.calls,
      onStored = (entry, result) =>
        // Stored elsewhere than predicted: the stream was resharded, list its shards again.
        if (entry.predictedShard.isDefined && result.shardId != entry.predictedShard) {
          ShardMaps.invalidate(options.connection, entry.stream)
        },
      pacerFor = pacerFor)
    val aggregator = if (!options.aggregation) None
      else Some(new KplAggregator(shardMap, options.aggregateFill(), sender.add))
    val pacingMap = new RecentShardMaps(stream => ShardMaps.forPacing(options.connection, api, stream))
    new KinesisDataWriter(new RowConverter(columns, options, partitionId), sender, aggregator,
      shardMap = pacerFor.map(_ => pacingMap), metrics)
  }

  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    createWriter(partitionId, taskId)
}

object KinesisDataWriterFactory {
  /** Threads that run PutRecords calls for every writer task of the JVM; each task limits its own calls in flight. */
  private lazy val calls = Executors.newCachedThreadPool(new ThreadFactory {
    private val count = new AtomicInteger()
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"kinesis-sink-put-${count.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  })
}
