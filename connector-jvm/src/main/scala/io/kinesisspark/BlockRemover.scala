package io.kinesisspark

import java.util.concurrent.{ArrayBlockingQueue, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.kinesisspark.blocks.BlockRef

/**
 * Removes the prefetched blocks a query no longer needs, on its own thread: each removal is a blocking call to the
 * driver's block manager master, and a batch over a thousand shards drops a thousand blocks or more, which would
 * hold up the query's thread (Spark calls the source's `commit` on it, between batches) for as many round trips.
 *
 * Bounded: at most `maxPending` submitted lots wait; beyond that [[submit]] waits for room, so a remover that falls
 * behind slows the query rather than holding its memory, and [[pendingBytes]] (what the lots waiting hold) counts
 * against the prefetch buffer until they are gone. A block whose removal fails (the application stopping) is logged
 * and left to [[org.apache.spark.kinesisspark.BlockStoreBridge.removeAll]], which the prefetcher's stop runs; an
 * error that ends the thread fails the next [[submit]] rather than leaving it waiting.
 *
 * The thread starts with the first lot.
 *
 * {{{
 *   val remover = new BlockRemover("kinesis-spark-block-remover-1", b => BlockStoreBridge.remove(b.streamId, b.uniqueId))
 *   remover.submit(prefetcher.buffer.dropThrough(end), bytes = 285000000L)
 *   remover.stop()
 * }}}
 */
final class BlockRemover(threadName: String, remove: BlockRef => Unit, maxPending: Int = BlockRemover.MaxPending) {
  require(maxPending >= 1, s"maxPending must be at least 1, not $maxPending")

  private val pending = new ArrayBlockingQueue[(Seq[BlockRef], Long)](maxPending)
  @volatile private var stopped = false
  @volatile private var failure: Option[Throwable] = None
  /** Lots submitted whose removal has not ended yet, queued or being removed. */
  private val outstanding = new AtomicInteger()
  private val outstandingBytes = new AtomicLong()
  private var thread: Thread = _

  /** The bytes of the blocks submitted and not removed yet. */
  def pendingBytes: Long = outstandingBytes.get

  /**
   * Queues `blocks` (holding `bytes` of records) for removal; waits while `maxPending` lots are queued. Nothing
   * happens once stopped; throws if the remover's thread died.
   */
  def submit(blocks: Seq[BlockRef], bytes: Long): Unit =
    if (blocks.nonEmpty && !stopped) {
      startOnce()
      outstanding.incrementAndGet()
      outstandingBytes.addAndGet(bytes)
      while (!stopped && !pending.offer((blocks, bytes), BlockRemover.PollMs, TimeUnit.MILLISECONDS)) checkFailure()
      checkFailure()
    }

  /** Waits until every lot submitted so far is removed, or `timeoutMs` passes; true if all were. For tests. */
  private[kinesisspark] def awaitIdle(timeoutMs: Long): Boolean = {
    val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs)
    while (outstanding.get > 0 && System.nanoTime() < deadline) Thread.sleep(5)
    outstanding.get == 0
  }

  /** Stops the thread (within the block it is removing); lots still queued are dropped: the caller sweeps them. */
  def stop(): Unit = {
    val t = synchronized { stopped = true; thread }
    if (t != null) {
      t.interrupt()
      t.join(BlockRemover.StopWaitMs)
    }
    pending.clear()
  }

  private def startOnce(): Unit = synchronized {
    if (thread == null && !stopped) {
      thread = new Thread(() => run(), threadName)
      thread.setDaemon(true)
      thread.start()
    }
  }

  private def checkFailure(): Unit = failure.foreach { e =>
    throw new IllegalStateException(s"The thread that removes prefetched blocks ($threadName) died", e)
  }

  private def run(): Unit =
    try {
      while (!stopped) {
        val lot = pending.poll(BlockRemover.PollMs, TimeUnit.MILLISECONDS)
        if (lot != null) {
          val (blocks, bytes) = lot
          try blocks.iterator.takeWhile(_ => !stopped).foreach { b =>
            try remove(b)
            catch {
              case NonFatal(e) if stopped => BlockRemover.log.debug(s"Removing prefetched block $b during stop failed", e)
              case NonFatal(e)            => BlockRemover.log.warn(s"Removing prefetched block $b failed", e)
            }
          } finally {
            outstandingBytes.addAndGet(-bytes)
            outstanding.decrementAndGet()
          }
        }
      }
    } catch {
      case _: InterruptedException => ()
      case e: Throwable =>
        failure = Some(e)
        BlockRemover.log.error(s"The thread that removes prefetched blocks ($threadName) died", e)
    }
}

object BlockRemover {
  private val log = LoggerFactory.getLogger(classOf[BlockRemover])
  val MaxPending = 64
  private val StopWaitMs = 10000L
  private val PollMs = 100L
}
