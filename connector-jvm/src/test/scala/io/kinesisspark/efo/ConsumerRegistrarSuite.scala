package io.kinesisspark.efo

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.{KinesisSparkException, SteppedClock}
import io.kinesisspark.aws.FakeKinesisApi

class ConsumerRegistrarSuite extends AnyFunSuite {

  private def registrar(api: FakeKinesisApi, clock: SteppedClock, deregister: Boolean = false, refreshMs: Long = 300000L) =
    new ConsumerRegistrar(api, Map("s" -> "kinesis_spark_app"), refreshMs, deregister, clock, clock.sleep, new Random(7),
      activeTimeoutMs = 60000L)

  test("registers an absent consumer and waits until it is ACTIVE, with jittered growing pauses") {
    val api = new FakeKinesisApi(); api.describesUntilActive = 4
    val clock = new SteppedClock
    val arn = registrar(api, clock).consumerArn("s")
    assert(api.consumers("kinesis_spark_app").active && api.consumers("kinesis_spark_app").arn == arn)
    assert(api.registerCalls == 1)
    assert(clock.sleeps.size == 5, clock.sleeps)
    clock.sleeps.zip(Seq(250L, 500L, 1000L, 2000L, 4000L)).foreach { case (slept, pause) =>
      assert(slept >= pause / 2 && slept <= pause, clock.sleeps)
    }
  }

  test("reuses an existing ACTIVE consumer without registering, and asks Kinesis only once per refresh interval") {
    val api = new FakeKinesisApi()
    val existing = api.registerConsumer("s", "kinesis_spark_app")
    api.describeConsumer("s", "kinesis_spark_app") // now ACTIVE
    val clock = new SteppedClock
    val r = registrar(api, clock, refreshMs = 1000L)
    assert(r.consumerArn("s") == existing.arn && api.registerCalls == 1 && clock.sleeps.isEmpty)
    r.refreshDue()
    assert(api.registerCalls == 1)
    assert(r.consumerArn("s") == existing.arn)
  }

  test("a consumer deregistered behind the query's back is registered again at the next refresh, with a new ARN") {
    val api = new FakeKinesisApi()
    val clock = new SteppedClock
    val r = registrar(api, clock, refreshMs = 1000L)
    val first = r.consumerArn("s")
    api.consumers.remove("kinesis_spark_app")
    r.refreshDue() // not due yet
    assert(r.consumerArn("s") == first && api.registerCalls == 1)
    clock.now += 1000L
    r.refreshDue()
    val second = r.consumerArn("s")
    assert(second != first && api.registerCalls == 2 && api.consumers("kinesis_spark_app").arn == second)
  }

  test("a consumer still DELETING is waited out before registering again") {
    val api = new FakeKinesisApi()
    api.registerConsumer("s", "kinesis_spark_app")
    api.deregisterConsumer("s", "kinesis_spark_app")
    val clock = new SteppedClock
    registrar(api, clock).consumerArn("s")
    assert(api.registerCalls == 2 && api.consumers("kinesis_spark_app").active)
  }

  test("throttled registrations are retried; a persistent limit fails naming stream and consumer") {
    val api = new FakeKinesisApi(); api.registerLimitExceeded = 2
    val clock = new SteppedClock
    registrar(api, clock).consumerArn("s")
    assert(api.registerCalls == 3 && api.consumers("kinesis_spark_app").active)

    val limited = new FakeKinesisApi(); limited.registerLimitExceeded = 100
    val e = intercept[KinesisSparkException](registrar(limited, new SteppedClock).consumerArn("s"))
    assert(e.getMessage.contains("'kinesis_spark_app'") && e.getMessage.contains("'s'") && e.getMessage.contains("20 consumers"))
  }

  test("a consumer that never becomes ACTIVE fails the query after the timeout, saying its state") {
    val api = new FakeKinesisApi(); api.describesUntilActive = Int.MaxValue
    val e = intercept[KinesisSparkException](registrar(api, new SteppedClock).consumerArn("s"))
    assert(e.getMessage.contains("still CREATING") && e.getMessage.contains("'kinesis_spark_app'"), e.getMessage)
  }

  test("stop deregisters only when required, and only once") {
    val api = new FakeKinesisApi()
    val kept = registrar(api, new SteppedClock)
    kept.consumerArn("s"); kept.stop()
    assert(api.deregisterCalls == 0 && api.consumers("kinesis_spark_app").active)

    val dropped = registrar(api, new SteppedClock, deregister = true)
    dropped.consumerArn("s"); dropped.stop(); dropped.stop()
    assert(api.deregisterCalls == 1 && api.consumers("kinesis_spark_app").deleting)
  }
}
