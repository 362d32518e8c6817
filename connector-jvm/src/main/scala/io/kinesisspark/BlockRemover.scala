package io.kinesisspark

import java.util.concurrent.{ArrayBlockingQueue, TimeUnit}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.kinesisspark.fetch.BlockRef

/**
 * Removes the prefetched blocks a query no longer needs, on its own thread: each removal is a blocking call to the
 * driver's block manager master, and a batch over a thousand shards drops a thousand blocks or more, which would
 * hold up the query's thread (Spark calls the source's `commit` on it, between batches) for as many round trips.
 *
 * Bounded: at most `maxPending` submitted lots wait; beyond that [[submit]] waits for room, so a remover that falls
 * behind slows the query rather than holding its memory. A block whose removal fails (the application stopping) is
 * logged and left to [[org.apache.spark.kinesisspark.BlockStoreBridge.removeAll]], which the prefetcher's stop runs.
 *
 * {{{
 *   val remover = new BlockRemover("kinesis-spark-blocks-1", b => BlockStoreBridge.remove(b.streamId, b.uniqueId))
 *   remover.submit(prefetcher.buffer.dropThrough(end))
 *   remover.stop()
 * }}}
 */
final class BlockRemover(threadName: String, remove: BlockRef => Unit, maxPending: Int = BlockRemover.MaxPending) {
  private val pending = new ArrayBlockingQueue[Seq[BlockRef]](maxPending)
  @volatile private var stopped = false
  /** Lots submitted whose removal has not ended yet, queued or being removed. */
  private val outstanding = new java.util.concurrent.atomic.AtomicInteger()
  private val thread = new Thread(() => run(), threadName)
  thread.setDaemon(true)
  thread.start()

  /** Queues `blocks` for removal; waits while `maxPending` lots are queued. Nothing happens once stopped. */
  def submit(blocks: Seq[BlockRef]): Unit =
    if (blocks.nonEmpty && !stopped) {
      outstanding.incrementAndGet()
      while (!stopped && !pending.offer(blocks, BlockRemover.PollMs, TimeUnit.MILLISECONDS)) ()
    }

  /** Waits until every lot submitted so far is removed, or `timeoutMs` passes; true if all were. */
  def awaitIdle(timeoutMs: Long): Boolean = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (outstanding.get > 0 && System.currentTimeMillis() < deadline) Thread.sleep(5)
    outstanding.get == 0
  }

  /** Stops the thread; lots still queued are dropped (the caller sweeps the stream's blocks instead). */
  def stop(): Unit = {
    stopped = true
    thread.interrupt()
    thread.join(BlockRemover.StopWaitMs)
    pending.clear()
  }

  private def run(): Unit =
    try {
      while (!stopped) {
        val lot = pending.poll(BlockRemover.PollMs, TimeUnit.MILLISECONDS)
        if (lot != null) {
          try lot.foreach { b =>
            try remove(b)
            catch { case NonFatal(e) if !stopped => BlockRemover.log.warn(s"Removing prefetched block $b failed", e) }
          } finally outstanding.decrementAndGet()
        }
      }
    } catch { case _: InterruptedException => () }
}

object BlockRemover {
  private val log = LoggerFactory.getLogger(classOf[BlockRemover])
  val MaxPending = 64
  private val StopWaitMs = 10000L
  private val PollMs = 100L
}
