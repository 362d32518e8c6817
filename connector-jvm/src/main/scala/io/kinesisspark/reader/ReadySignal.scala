package io.kinesisspark.reader

import java.util.concurrent.TimeUnit
import java.util.concurrent.locks.ReentrantLock

/**
 * Wakes a thread that waits on many shards at once: a shard whose records are pushed (an enhanced fan-out
 * subscription) raises it when an event arrives, and the waiter ([[ShardPoller]]) turns to that shard at once rather
 * than at its next timed check or after waiting on another shard. A signal raised while nobody waits makes the next
 * wait return at once, so no arrival is missed between a waiter's look at its shards and its wait.
 *
 * {{{
 *   val signal = new ReadySignal
 *   fanOutReader.wakeOn(Some(signal))  // its subscription raises the signal for each event it queues
 *   signal.await(500)                   // true as soon as one came, false after 500 ms with none
 * }}}
 */
final class ReadySignal {
  private val lock = new ReentrantLock()
  private val changed = lock.newCondition()
  private var raised = false // guarded by lock

  /** Something arrived: wakes the waiter, or the next wait if nobody waits now. */
  def raise(): Unit = {
    lock.lock()
    try {
      raised = true
      changed.signalAll()
    } finally lock.unlock()
  }

  /** Waits until the signal is raised or `ms` pass; whether it was raised. Lowers it for the next wait. */
  def await(ms: Long): Boolean = {
    lock.lock()
    try {
      var nanos = TimeUnit.MILLISECONDS.toNanos(math.max(0L, ms))
      while (!raised && nanos > 0L) nanos = changed.awaitNanos(nanos)
      val was = raised
      raised = false
      was
    } finally lock.unlock()
  }
}
