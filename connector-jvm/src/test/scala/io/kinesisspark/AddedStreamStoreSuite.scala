package io.kinesisspark

import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

class AddedStreamStoreSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private def store(dir: String, streams: Seq[String], position: InitialPosition = InitialPosition.Latest) =
    new AddedStreamStore(dir, conf, streams, position)
  private val both = Seq("clicks", "orders")

  test("the time a stream was first added holds for later calls and for a restart's store") {
    val dir = Files.createTempDirectory("added-streams").toString
    val first = store(dir, both)
    assert(first.get("orders").isEmpty)
    assert(first.addedAt("orders", now = 1000L) == 1000L)
    assert(first.addedAt("orders", now = 5000L) == 1000L)
    val restarted = store(dir, both)
    assert(restarted.get("orders").contains(1000L))
    assert(restarted.addedAt("orders", now = 9000L) == 1000L)
    assert(restarted.addedAt("clicks", now = 9000L) == 9000L)
    assert(store(dir, both).get("clicks").contains(9000L))
  }

  test("the time says where a stream began only under the initialPosition it was kept under") {
    val dir = Files.createTempDirectory("added-streams").toString
    store(dir, both).addedAt("orders", now = 1000L)
    val changed = store(dir, both, InitialPosition.TrimHorizon)
    assert(changed.get("orders").isEmpty)
    assert(changed.addedAt("orders", now = 5000L) == 1000L) // the stream was added then all the same
    assert(store(dir, both).get("orders").contains(1000L))
  }

  test("a stream removed from the query is forgotten once the batch start no longer holds it") {
    val dir = Files.createTempDirectory("added-streams").toString
    store(dir, both).addedAt("orders", now = 1000L)
    // Removed from streamName, still in the start (a removal refused, or not yet accepted): kept.
    store(dir, Seq("clicks")).forgetRemoved(held = Set("clicks", "orders"))
    assert(store(dir, both).get("orders").contains(1000L))
    store(dir, Seq("clicks")).forgetRemoved(held = Set("clicks"))
    val again = store(dir, both)
    assert(again.get("orders").isEmpty)
    assert(again.addedAt("orders", now = 7000L) == 7000L)
  }

  test("a file the store cannot read is refused, naming it and what deleting it costs") {
    for (content <- Seq("[1, 2", """{"orders":5}""", """{"orders":{"at":"soon","initialPosition":"latest"}}""")) {
      val dir = Files.createTempDirectory("added-streams")
      Files.write(dir.resolve("kinesis-added-streams.json"), content.getBytes(StandardCharsets.UTF_8))
      val e = intercept[KinesisSparkException](store(dir.toString, both).get("orders"))
      assert(e.getMessage.contains("kinesis-added-streams.json") && e.getMessage.contains("delete it"), e.getMessage)
    }
  }
}
