package io.kinesisspark.reader

import scala.util.Random
import scala.util.control.NonFatal

import io.kinesisspark.{KinesisErrors, TestSettings}
import io.kinesisspark.aws.ErrorClassifier

/**
 * The retry budget for failures that pass ([[io.kinesisspark.aws.ErrorClassifier.isTransient]]: Kinesis unreachable,
 * a connection reset, a timeout, a 5xx, a throttled control-plane call): a jittered
 * exponential back-off over at most [[TransientBackoff.MaxFailures]] failures in a row. The delays double from
 * 0.5 s up to 20 s, each half fixed and half random, so a budget lasts between about 36 and 72 seconds: an outage
 * shorter than that is ridden out, a longer one fails the query with the last error. Shard readers on the executors
 * and the driver's shard listing each keep one, so the whole query tolerates the same outage.
 *
 * Not thread-safe: one per caller.
 * {{{
 *   val backoff = new TransientBackoff()
 *   try { call(); backoff.succeeded() }
 *   catch { case e: Exception if ErrorClassifier.isTransient(e) =>
 *     backoff.failed().fold(throw e)(delayMs => retryIn(delayMs)) }
 * }}}
 */
final class TransientBackoff(random: Random = new Random(), val budget: Int = TransientBackoff.maxFailures) {
  import TransientBackoff._

  private var failures = 0

  /** Failures in a row so far. */
  def failuresInARow: Int = failures

  /** A call succeeded: the next failure starts a fresh budget. */
  def succeeded(): Unit = failures = 0

  /** A call failed transiently: the delay before the next attempt, or None when the budget is spent. */
  def failed(): Option[Long] =
    if (failures >= budget) None
    else {
      failures += 1
      val backoff = math.min(MaxBackoffMs, BaseBackoffMs << failures)
      Some(backoff / 2 + random.nextInt((backoff / 2).toInt + 1))
    }
}

object TransientBackoff {
  val MaxFailures = 8
  /** [[MaxFailures]], or what the test-only Spark setting [[io.kinesisspark.TestSettings.TransientMaxFailures]] says. */
  def maxFailures: Int = TestSettings.long(TestSettings.TransientMaxFailures).fold(MaxFailures)(_.toInt)
  private val BaseBackoffMs = 250L
  private val MaxBackoffMs = 20000L
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /**
   * `call`, attempted again after each transient failure within one budget, sleeping in between: for the driver's
   * calls that a query cannot start without (its first listing, stream descriptions), which had only the AWS SDK's
   * few attempts, while the same calls made later by the listing thread ride out a minute. A failure that is not
   * transient is thrown at once; the last one of the budget as [[KinesisErrors.unavailable]], naming `what`.
   *
   * {{{
   *   val shards = TransientBackoff.retrying(s"Listing the shards of 'clicks'")(api.listShards("clicks", 1000))
   * }}}
   */
  def retrying[T](what: String, sleep: Long => Unit = Thread.sleep(_: Long), random: Random = new Random())(
      call: => T): T = {
    val backoff = new TransientBackoff(random)
    var result: Option[T] = None
    while (result.isEmpty) {
      try result = Some(call)
      catch {
        case NonFatal(e) if ErrorClassifier.isTransient(e) =>
          val delayMs = backoff.failed().getOrElse(throw KinesisErrors.unavailable(what, backoff.budget + 1, e))
          log.warn(s"$what failed (${e.getClass.getSimpleName}: ${e.getMessage}); trying again in about ${delayMs}ms " +
            s"(retry ${backoff.failuresInARow} of ${backoff.budget})")
          sleep(delayMs)
      }
    }
    result.get
  }
}
