package io.kinesisspark

import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.blocks.BlockRef

class BlockRemoverSuite extends AnyFunSuite {
  private def blocks(ids: Range): Seq[BlockRef] = ids.map(i => BlockRef(7, i.toLong, "executor_h_1", 0, 10, last = true))

  test("removes what is submitted, in order, on its own thread; a failed removal does not stop the rest") {
    val removed = new ConcurrentLinkedQueue[(Long, String)]()
    val remover = new BlockRemover("test-remover", b => {
      if (b.uniqueId == 3) throw new IllegalStateException("gone")
      removed.add((b.uniqueId, Thread.currentThread().getName))
    })
    try {
      remover.submit(blocks(1 to 4), 40)
      remover.submit(Nil, 0)
      remover.submit(blocks(5 to 6), 20)
      assert(remover.awaitIdle(5000) && remover.pendingBytes == 0)
      assert(removed.asScala.map(_._1).toSeq == Seq(1L, 2L, 4L, 5L, 6L))
      assert(removed.asScala.forall(_._2 == "test-remover"))
    } finally remover.stop()
  }

  test("bounded: submit waits while maxPending lots are queued; stop drops what is queued and ends the thread") {
    val release = new CountDownLatch(1)
    val removed = new ConcurrentLinkedQueue[Long]()
    val remover = new BlockRemover("test-remover-bounded", b => { release.await(); removed.add(b.uniqueId) }, maxPending = 2)
    remover.submit(blocks(1 to 1), 100) // taken by the thread, which waits in it
    Thread.sleep(200)
    remover.submit(blocks(2 to 2), 100)
    remover.submit(blocks(3 to 3), 100) // the queue is full now
    assert(remover.pendingBytes == 300) // still in the executors' memory
    val fourth = new Thread(() => remover.submit(blocks(4 to 4), 100))
    fourth.start()
    fourth.join(300)
    assert(fourth.isAlive, "a fourth lot was taken while two waited")
    assert(!remover.awaitIdle(50))
    release.countDown()
    fourth.join(5000)
    assert(!fourth.isAlive && remover.awaitIdle(5000))
    assert(removed.asScala.toSeq == Seq(1L, 2L, 3L, 4L))

    val blocked = new CountDownLatch(1)
    val removedWhileStopping = new ConcurrentLinkedQueue[Long]()
    val stopping = new BlockRemover("test-remover-stopped", b => { blocked.await(); removedWhileStopping.add(b.uniqueId) },
      maxPending = 4)
    stopping.submit(blocks(1 to 1), 1)
    stopping.submit(blocks(2 to 2), 1)
    stopping.stop()
    assert(!Thread.getAllStackTraces.keySet.asScala.exists(t => t.getName == "test-remover-stopped" && t.isAlive))
    assert(removedWhileStopping.isEmpty) // the one being removed was interrupted, the queued one dropped
    val started = System.nanoTime()
    stopping.submit(blocks(3 to 3), 1) // ignored: no thread would take it
    assert(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) < 1000)
  }

  test("a thread that dies fails the next submit instead of leaving it waiting; no thread before the first lot") {
    val remover = new BlockRemover("test-remover-dies", _ => throw new LinkageError("no BlockManager here"), maxPending = 1)
    try {
      assert(!Thread.getAllStackTraces.keySet.asScala.exists(_.getName == "test-remover-dies"))
      // The first lot starts the thread, which dies on it: that submit, or one of the next, fails.
      val e = intercept[IllegalStateException] {
        (1 to 10).foreach(i => { remover.submit(blocks(i to i), 1); Thread.sleep(50) })
      }
      assert(e.getMessage.contains("test-remover-dies") && e.getCause.isInstanceOf[LinkageError])
    } finally remover.stop()
  }
}
