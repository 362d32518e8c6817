package io.kinesisspark.kpl

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

/**
 * One record as its producer put it, before the KPL packed it into an aggregate with others (or after the
 * connector unpacked it). The sink will hand these to [[KplAggregateBuilder]]; the source gets them from
 * [[KplAggregate.decode]].
 *
 * {{{
 *   val r = UserRecord("user-42", None, "clicked".getBytes("UTF-8"))
 *   r.effectiveHashKey  // Some(the MD5 of "user-42" as a 128-bit unsigned number)
 *   UserRecord("k", Some("0"), Array.emptyByteArray).effectiveHashKey  // Some(0)
 * }}}
 *
 * @param explicitHashKey a decimal 128-bit hash key that overrides the partition key's hash, as in PutRecord
 */
final case class UserRecord(partitionKey: String, explicitHashKey: Option[String], data: Array[Byte]) {

  /**
   * The hash key that places the record in a shard: the explicit hash key when given, else the MD5 digest of the
   * partition key's UTF-8 bytes read as an unsigned big-endian number. `None` when the explicit hash key is not a
   * decimal number in [0, 2^128): no shard's range can hold it.
   */
  def effectiveHashKey: Option[BigInt] = explicitHashKey match {
    case Some(key) => UserRecord.parseHashKey(key)
    case None => Some(BigInt(1, UserRecord.md5.get().digest(partitionKey.getBytes(StandardCharsets.UTF_8))))
  }
}

object UserRecord {
  /** A digest per thread: a writer hashes every row's key, and `MessageDigest.getInstance` looks up providers. */
  private val md5 = ThreadLocal.withInitial[MessageDigest](() => MessageDigest.getInstance("MD5"))

  /** One more than the largest hash key. */
  val HashKeySpace: BigInt = BigInt(1) << 128

  private def parseHashKey(key: String): Option[BigInt] =
    if (key.isEmpty || !key.forall(c => c >= '0' && c <= '9')) None
    else Some(BigInt(key)).filter(_ < HashKeySpace)
}
