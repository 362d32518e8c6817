package io.kinesisspark.reader

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.services.kinesis.model.{ExpiredNextTokenException, ResourceNotFoundException}

import io.kinesisspark.KinesisSparkException

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

  test("a smaller budget (the test-only Spark setting's) is spent after that many failures") {
    val backoff = new TransientBackoff(new Random(5), budget = 2)
    assert(Seq.fill(3)(backoff.failed()).map(_.isDefined) == Seq(true, true, false))
    assert(new TransientBackoff().budget == TransientBackoff.MaxFailures) // no SparkEnv here: the production budget
  }

  test("a success starts a fresh budget") {
    val backoff = new TransientBackoff(new Random(1))
    (1 to TransientBackoff.MaxFailures).foreach(_ => backoff.failed())
    backoff.succeeded()
    assert(backoff.failuresInARow == 0 && backoff.failed().exists(_ <= 500L))
  }

  test("retrying: transient failures are slept through within one budget; others are thrown at once") {
    var sleeps = List.empty[Long]
    var attempts = 0
    val listed = TransientBackoff.retrying("Listing", ms => sleeps ::= ms, new Random(3)) {
      attempts += 1
      if (attempts == 1) throw ExpiredNextTokenException.builder().message("expired").build()
      if (attempts == 2) throw SdkClientException.create("Connection reset")
      "shards"
    }
    assert(listed == "shards" && attempts == 3 && sleeps.size == 2)

    attempts = 0
    intercept[ResourceNotFoundException](TransientBackoff.retrying("Listing", _ => fail("slept")) {
      attempts += 1
      throw ResourceNotFoundException.builder().message("no stream").build()
    })
    assert(attempts == 1)

    sleeps = Nil
    val spent = intercept[KinesisSparkException](TransientBackoff.retrying("Listing the shards of 's'", ms => sleeps ::= ms) {
      throw SdkClientException.create("Connection refused")
    })
    assert(sleeps.size == TransientBackoff.MaxFailures)
    assert(spent.getMessage.startsWith(s"Listing the shards of 's' failed ${TransientBackoff.MaxFailures + 1} times"))
  }
}
