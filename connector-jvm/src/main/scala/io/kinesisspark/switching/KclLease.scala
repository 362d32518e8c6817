package io.kinesisspark.switching

import scala.jdk.CollectionConverters._
import scala.util.Try

import software.amazon.awssdk.services.dynamodb.model.AttributeValue

import io.kinesisspark.KinesisErrors

/**
 * One item of a KCL application's lease table: a shard, and where the application last checkpointed in it.
 *
 * {{{
 *   KclLease.fromItem("orders-app", Map(
 *     "leaseKey" -> AttributeValue.fromS("shardId-000000000001"),
 *     "checkpoint" -> AttributeValue.fromS("49590338271490256608559692538361571095921575989136588898"),
 *     "checkpointSubSequenceNumber" -> AttributeValue.fromN("3"),
 *     "leaseCounter" -> AttributeValue.fromN("57")))
 *   // Some(KclLease("shardId-000000000001", None, "shardId-000000000001", Checkpointed("4959...", 3), 57, None))
 * }}}
 *
 * @param key     the item's `leaseKey`
 * @param stream  the stream's name in a multi-stream application's lease key (`account:stream:creationEpoch:shardId`);
 *                `None` in a single-stream application's table, whose keys are bare shard ids
 * @param counter `leaseCounter`, which the owning worker increments every time it renews the lease
 * @param owner   `leaseOwner`, the worker that last held the lease (KCL does not clear it when a worker stops)
 */
final case class KclLease(key: String, stream: Option[String], shardId: String, checkpoint: KclCheckpoint,
    counter: Long, owner: Option[String])

object KclLease {
  private val SequenceNumber = "[0-9]{1,128}".r

  /**
   * The lease in a lease table's item; `None` for the other rows KCL 3.5 on may keep there (its leader, its
   * migration state, worker metrics: an `entityType` other than `LEASE`). Fails, naming the table and the item's
   * key, on an item that is not a KCL lease.
   */
  def fromItem(table: String, item: Map[String, AttributeValue]): Option[KclLease] = {
    def text(name: String): Option[String] = item.get(name).flatMap(v => Option(v.s()))
    if (text("entityType").exists(_ != "LEASE")) return None
    def number(name: String): Option[Long] = item.get(name).flatMap(v => Option(v.n())).map { n =>
      Try(n.toLong).getOrElse(throw notALease(table, text("leaseKey").getOrElse("?"), s"'$name' is $n, not a whole number"))
    }
    val key = text("leaseKey").getOrElse(throw notALease(table, "?", "it has no string 'leaseKey'"))
    // Multi-stream applications (KCL 2.3 on) key a lease by the stream's identifier and the shard:
    // account:stream:creationEpoch:shardId. Single-stream ones by the shard id alone.
    val (stream, shardId) = key.split(":", -1) match {
      case Array(shard)                       => (None, shard)
      case Array(_, name, _, shard) if name.nonEmpty && shard.nonEmpty => (Some(name), shard)
      case _ => throw notALease(table, key, "its 'leaseKey' is neither a shard id nor account:stream:creationEpoch:shardId")
    }
    val checkpoint = text("checkpoint") match {
      case Some("SHARD_END")                          => KclCheckpoint.ShardEnd
      case Some(s) if KclCheckpoint.Sentinels(s)      => KclCheckpoint.NotYet(s)
      case Some(SequenceNumber(_*)) =>
        val seq = text("checkpoint").get.dropWhile(_ == '0')
        KclCheckpoint.Checkpointed(if (seq.isEmpty) "0" else seq, number("checkpointSubSequenceNumber").getOrElse(0L))
      case Some(other) => throw notALease(table, key, s"its 'checkpoint' is '$other', neither a sequence number nor " +
        s"one of ${(KclCheckpoint.Sentinels + "SHARD_END").toSeq.sorted.mkString(", ")}")
      case None => throw notALease(table, key, "it has no string 'checkpoint'")
    }
    Some(KclLease(key, stream, shardId, checkpoint, number("leaseCounter").getOrElse(0L), text("leaseOwner")))
  }

  /** [[fromItem]] for the SDK's item type. */
  def fromItem(table: String, item: java.util.Map[String, AttributeValue]): Option[KclLease] =
    fromItem(table, item.asScala.toMap)

  private def notALease(table: String, key: String, why: String): IllegalArgumentException =
    KinesisErrors.notALease(table, key, why)
}
