package io.kinesisspark.sink

import java.util.concurrent.ConcurrentHashMap

import io.kinesisspark.aws.{AwsConnection, KinesisApi, ShardInfo}

/**
 * Which open shard of a stream takes which hash keys, from ListShards, so that rows bound for the same shard can
 * share a KPL aggregate. Kinesis places a record by the hash key of its partition key (MD5) or explicit hash key;
 * an aggregate is placed by the hash key of its first row, so every row in it must fall in the same shard's range.
 *
 * {{{
 *   val map = ShardMap(api.listShards("clicks", 1000))
 *   map.shardFor(UserRecord("user-1", None, bytes).effectiveHashKey.get)  // "shardId-000000000001"
 * }}}
 */
final class ShardMap private (starts: Array[BigInt], shardIds: Array[String]) {

  /** The open shard whose range holds `hashKey`. */
  def shardFor(hashKey: BigInt): String = {
    // The open shards' ranges cover the hash key space without gaps: the last range starting at or below the key.
    var low = 0
    var high = starts.length - 1
    while (low < high) {
      val mid = (low + high + 1) >>> 1
      if (starts(mid) <= hashKey) low = mid else high = mid - 1
    }
    shardIds(low)
  }

  def shardCount: Int = shardIds.length
}

object ShardMap {
  def apply(shards: Seq[ShardInfo]): ShardMap = {
    val open = shards.filter(s => !s.closed && s.hashKeyRange.isDefined).sortBy(_.hashKeyRange.get.startingHashKey)
    require(open.nonEmpty, "the stream has no open shard with a hash key range")
    new ShardMap(open.map(_.hashKeyRange.get.startingHashKey).toArray, open.map(_.shardId).toArray)
  }
}

/**
 * Shard maps per stream, shared by the writer tasks of a JVM and listed again after `ttlMs`, or at once after a
 * write landed in another shard than the map predicted (the stream was resharded).
 */
object ShardMaps {
  val TtlMs = 60000L
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  private val maps = new ConcurrentHashMap[(AwsConnection, String), (Option[ShardMap], Long)]()

  /** The stream's shard map; fails if the shards cannot be listed (aggregation cannot do without it). */
  def get(connection: AwsConnection, api: KinesisApi, stream: String, now: Long = System.currentTimeMillis()): ShardMap =
    maps.compute((connection, stream), (_, cached) =>
      if (cached != null && cached._1.isDefined && now - cached._2 < TtlMs) cached
      else (Some(ShardMap(api.listShards(stream, 1000))), now))._1.get

  /**
   * The stream's shard map for pacing, or `None` while the credentials may not list shards (kinesis:ListShards):
   * pacing is an optimisation, and a writer allowed only PutRecords still writes, paced by being refused. Logged
   * once per [[TtlMs]] and stream.
   */
  def forPacing(connection: AwsConnection, api: KinesisApi, stream: String,
      now: Long = System.currentTimeMillis()): Option[ShardMap] =
    maps.compute((connection, stream), (_, cached) =>
      if (cached != null && now - cached._2 < TtlMs) cached
      else try Tuple2(Some(ShardMap(api.listShards(stream, 1000))), now) catch {
        case e: io.kinesisspark.KinesisSparkException if deniedListing(e) =>
          log.warn(s"The sink may not list the shards of Kinesis stream '$stream' (kinesis:ListShards is denied), so " +
            "it cannot pace each shard: it is paced by Kinesis's throttling instead. Allow kinesis:ListShards, or set " +
            "pacing=false to silence this.")
          (None, now)
      })._1

  def invalidate(connection: AwsConnection, stream: String): Unit = maps.remove((connection, stream))

  private def deniedListing(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).exists {
      case k: software.amazon.awssdk.awscore.exception.AwsServiceException =>
        Option(k.awsErrorDetails()).exists(_.errorCode() == "AccessDeniedException")
      case _ => false
    }
}

/**
 * A writer task's own view of a shard-map lookup ([[ShardMaps.get]] or [[ShardMaps.forPacing]]): it asks at most
 * once per `recheckMs` per stream. The shared lookup hashes the whole connection (credentials settings, TLS, ...)
 * with the stream's name, which cost more than the rest of a row's path when done for every row; asked once a
 * second, a writer still sees a map listed again after a reshard within a second of everyone else.
 *
 * {{{
 *   val shardMap = new RecentShardMaps(stream => ShardMaps.get(connection, api, stream))
 *   shardMap("clicks").shardFor(hashKey)   // the shared map, asked again after a second
 * }}}
 */
final class RecentShardMaps[T](lookup: String => T, clock: () => Long = () => System.currentTimeMillis(),
    recheckMs: Long = RecentShardMaps.RecheckMs) extends (String => T) {
  private val known = scala.collection.mutable.HashMap.empty[String, (T, Long)]

  override def apply(stream: String): T = {
    val now = clock()
    known.get(stream) match {
      case Some((value, askedAt)) if now - askedAt < recheckMs => value
      case _ =>
        val value = lookup(stream)
        known.update(stream, (value, now))
        value
    }
  }
}

object RecentShardMaps {
  val RecheckMs = 1000L
}
