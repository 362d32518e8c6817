package io.kinesisspark.reader

import org.scalatest.funsuite.AnyFunSuite

class ReadySignalSuite extends AnyFunSuite {

  test("raised before the wait: the wait returns at once, and the signal is lowered for the next one") {
    val signal = new ReadySignal
    signal.raise()
    assert(signal.await(60000L))
    assert(!signal.await(0L))
  }

  test("raised during a wait: the waiter wakes then, not at the end of its wait") {
    val signal = new ReadySignal
    val raiser = new Thread(() => { Thread.sleep(200); signal.raise() })
    val started = System.nanoTime()
    raiser.start()
    val raised = signal.await(60000L)
    val tookMs = (System.nanoTime() - started) / 1000000L
    raiser.join()
    assert(raised && tookMs < 30000L, s"woke after $tookMs ms")
  }

  test("never raised: the wait lasts its time and says so") {
    val signal = new ReadySignal
    val started = System.nanoTime()
    assert(!signal.await(50L))
    assert((System.nanoTime() - started) / 1000000L >= 50L)
  }
}
