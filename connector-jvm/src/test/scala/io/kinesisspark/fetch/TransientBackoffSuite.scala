package io.kinesisspark.fetch

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

class TransientBackoffSuite extends AnyFunSuite {

  test("delays double from 0.5 s to 20 s, half of each random, then the budget is spent") {
    val backoff = new TransientBackoff(new Random(7))
    val delays = Iterator.continually(backoff.failed()).takeWhile(_.isDefined).flatten.toSeq
    assert(delays.size == TransientBackoff.MaxFailures)
    val full = Seq(500L, 1000L, 2000L, 4000L, 8000L, 16000L, 20000L, 20000L)
    delays.zip(full).foreach { case (d, f) => assert(d >= f / 2 && d <= f, s"$d for $f") }
    // The outage a budget rides out: between about 36 and 72 seconds.
    assert(delays.sum >= full.sum / 2 && delays.sum <= full.sum)
    assert(backoff.failed().isEmpty)
  }

  test("a success starts a fresh budget") {
    val backoff = new TransientBackoff(new Random(1))
    (1 to TransientBackoff.MaxFailures).foreach(_ => backoff.failed())
    backoff.succeeded()
    assert(backoff.failuresInARow == 0 && backoff.failed().exists(_ <= 500L))
  }
}
