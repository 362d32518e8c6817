package io.kinesisspark

import java.time.{Clock, Instant, ZoneId, ZoneOffset}

import scala.collection.mutable

/**
 * A clock for unit tests that moves only when the code under test sleeps (pass `clock.sleep` as its sleep function)
 * or the test advances `now`, so waits and spacing are checked without real waiting.
 */
final class SteppedClock extends Clock {
  @volatile var now = 0L
  val sleeps: mutable.ArrayBuffer[Long] = mutable.ArrayBuffer.empty[Long]
  def sleep(ms: Long): Unit = synchronized { sleeps += ms; now += ms }
  override def millis(): Long = now
  override def instant(): Instant = Instant.ofEpochMilli(now)
  override def getZone: ZoneOffset = ZoneOffset.UTC
  override def withZone(zone: ZoneId): Clock = this
}
