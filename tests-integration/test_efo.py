"""Enhanced fan-out (``consumerMode=efo``) end to end: the connector subscribes to the emulator's shards over HTTP/2.

boto3 is the ground truth, as in the polling tests: records put and consumers listed with ``list_stream_consumers``.
The emulator (kinesis-mock) pushes an event per shard every second, refuses a second subscription to a consumer and
shard within 5 seconds of the previous one (ResourceInUse), and never announces the end of a closed shard, so the
tests exercise the connector's own resubscription spacing and end-of-shard confirmation.
"""

from __future__ import annotations

import time

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.ferrokinesis import FerroKinesis
from harness.kinesis import Kinesis
from harness.producer import KeyedProducer, assert_per_key_order
from harness.sink import wait_until_started
from test_polling_source import assert_delivered_exactly, assert_load_fails, numbered
from test_resharding import read_while_resharding

EFO = {"consumerMode": "efo", "initialPosition": "trim_horizon"}
DEFAULT_PREFIX = "kinesis_spark_"


def consumers(kinesis: Kinesis, stream: str) -> dict[str, str]:
    """The stream's consumers by name, with their status."""
    arn = kinesis.client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    listed = kinesis.client.list_stream_consumers(StreamARN=arn)["Consumers"]
    return {c["ConsumerName"]: c["ConsumerStatus"] for c in listed}


def wait_for_consumers(kinesis: Kinesis, stream: str, expected: dict[str, str], timeout_s: float = 30.0) -> None:
    """Until the stream's consumers are exactly ``expected`` (name -> status)."""
    deadline = time.monotonic() + timeout_s
    while (current := consumers(kinesis, stream)) != expected:
        assert time.monotonic() < deadline, f"consumers of {stream}: {current}, expected {expected}"
        time.sleep(0.2)


def test_every_record_exactly_once_with_a_restart_in_the_middle(kinesis, stream, read_kinesis, sink):
    name = stream(3)
    first = kinesis.put_records(name, numbered(1500))
    query = sink.start(read_kinesis(name, **EFO))
    query_id = query.id
    first_run = sink.wait_for_rows(query, 1500)
    # Named by the query id, which survives the restart; kept on stop (requireConsumerDeregistration is false).
    assert consumers(kinesis, name) == {DEFAULT_PREFIX + query_id: "ACTIVE"}
    query.stop()
    assert consumers(kinesis, name) == {DEFAULT_PREFIX + query_id: "ACTIVE"}

    second = kinesis.put_records(name, numbered(1000, start=1500))
    query = sink.start(read_kinesis(name, **EFO))
    assert query.id == query_id
    records = sink.wait_for_rows(query, 2500)
    assert consumers(kinesis, name) == {DEFAULT_PREFIX + query_id: "ACTIVE"}, "the consumer is reused"

    assert_delivered_exactly(records, first + second, name)
    last_batch_of_first_run = max(r.batch_id for r in first_run)
    second_data = {p.data for p in second}
    assert all(r.batch_id > last_batch_of_first_run for r in records if r.data in second_data)
    metrics = query.lastProgress["sources"][0]["metrics"]
    assert int(metrics["efoSubscriptions"]) >= 3, f"one subscription per shard at least: {metrics}"
    assert "avgMsBehindLatest" in metrics, metrics


def test_several_shards_and_two_streams_with_a_consumer_name_each(kinesis, stream, read_kinesis, sink):
    a, b = stream(2), stream(3)
    puts_a = kinesis.put_records(a, numbered(500, prefix="a"))
    query = sink.start(
        read_kinesis(f"{a},{b}", consumerName="orders-app, audit.app", consumerNamePrefix="team_", **EFO)
    )
    wait_until_started(query)
    puts_b = kinesis.put_records(b, numbered(700, prefix="b"))
    records = sink.wait_for_rows(query, 1200)
    assert_delivered_exactly([r for r in records if r.stream == a], puts_a, a)
    assert_delivered_exactly([r for r in records if r.stream == b], puts_b, b)
    assert consumers(kinesis, a) == {"team_orders-app": "ACTIVE"}
    assert consumers(kinesis, b) == {"team_audit.app": "ACTIVE"}
    metrics = query.lastProgress["sources"][0]["metrics"]
    assert metrics["activeShards"] == "5" and f"{b}.maxMsBehindLatest" in metrics, metrics


def test_consumers_are_deregistered_on_stop_when_required(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    puts = kinesis.put_records(name, numbered(50))
    query = sink.start(read_kinesis(name, consumerName="short-lived", requireConsumerDeregistration="true", **EFO))
    assert_delivered_exactly(sink.wait_for_rows(query, 50), puts, name)
    assert consumers(kinesis, name) == {"kinesis_spark_short-lived": "ACTIVE"}
    query.stop()
    wait_for_consumers(kinesis, name, {})


def test_an_existing_consumer_of_the_awslabs_name_is_reused_as_is(spark, emulator, kinesis, stream, sink):
    name = stream(1)
    arn = kinesis.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]
    kinesis.client.register_stream_consumer(StreamARN=arn, ConsumerName="TestConsumer")
    puts = kinesis.put_records(name, numbered(80))
    source = (
        spark.readStream.format("aws-kinesis")
        .option("kinesis.streamName", name)
        .option("kinesis.endpointUrl", emulator.endpoint)
        .option("kinesis.region", "us-east-1")
        .option("kinesis.awsAccessKeyId", "test")
        .option("kinesis.awsSecretKey", "test")
        .option("kinesis.startingPosition", "TRIM_HORIZON")
        .option("kinesis.consumerType", "SubscribeToShard")
        .option("kinesis.consumerName", "TestConsumer")
        .load()
    )
    query = sink.start(source.withColumnRenamed("streamName", "stream"))  # awslabs' column name
    assert_delivered_exactly(sink.wait_for_rows(query, 80), puts, name)
    assert consumers(kinesis, name) == {"TestConsumer": "ACTIVE"}


@pytest.mark.parametrize(
    ("options", "patterns"),
    [
        ({"consumerName": "my consumer"}, ["'consumerName'", "'my consumer'", "a-z, A-Z, 0-9"]),
        ({"consumerName": "a,b,c"}, ["'consumerName'", "'a,b,c'", "one per stream"]),
        ({"consumerNamePrefix": "team/"}, ["'consumerNamePrefix'", "'team/'"]),
        ({"consumerRefreshInterval": "2h"}, ["'consumerRefreshInterval'", "'2h'", "3600s"]),
        ({"consumerMode": "push"}, ["'consumerMode'", "'push'", "'polling' or 'efo'"]),
    ],
)
def test_bad_consumer_options_fail_at_load_before_any_query_runs(kinesis, stream, read_kinesis, options, patterns):
    name = stream(1)
    assert_load_fails(lambda: read_kinesis(name, **{**EFO, **options}), *patterns)
    assert consumers(kinesis, name) == {}, "nothing was registered"


def test_no_record_lost_or_repeated_across_many_resubscriptions(emulator, kinesis, stream, read_kinesis, sink):
    """Each subscription ends after 2 events (test-only option), so a shard is subscribed to again every ~5 s (the
    emulator refuses sooner), always from the continuation sequence number, while a producer keeps writing."""
    name = stream(2)
    producer = KeyedProducer(emulator.endpoint, name, interval_s=0.1).start()
    query = sink.start(read_kinesis(name, efoSubscriptionMaxEvents="2", **EFO))
    deadline = time.monotonic() + 120
    while True:
        progress = query.lastProgress
        subscriptions = int(progress["sources"][0]["metrics"].get("efoSubscriptions", 0)) if progress else 0
        if subscriptions >= 12:
            break
        assert query.exception() is None, query.exception()
        assert time.monotonic() < deadline, f"only {subscriptions} subscriptions in 120 s"
        time.sleep(1)
    puts = producer.stop()
    records = sink.wait_for_rows(query, len(puts))
    assert_delivered_exactly(records, puts, name)
    assert_per_key_order(records, puts)


def test_subscriptions_the_service_ends_throttles_or_fails_lose_and_repeat_nothing(spark, sink, tmp_path):
    """AWS ends every subscription after 5 minutes, refuses one within 5 s of the last to the same consumer and shard
    (ResourceInUse), and may throttle (LimitExceeded) or fail (InternalFailure) SubscribeToShard. ferrokinesis with
    the enhanced fan-out fault model (dev/ferrokinesis/src/subscribe_faults.rs; the limits proxy cannot carry HTTP/2)
    ends subscriptions every 6 s and answers a fifth of SubscribeToShard calls with one of those errors, while a
    producer writes: every record once, in per-key order, and never a subscription the 5-second rule refuses."""
    system = spark.sparkContext._jvm.java.lang.System
    # ferrokinesis reads the Java SDK's CBOR timestamps as seconds: JSON for the clients made for it (local mode: the
    # executors share this JVM); kinesis-local, which the other tests use, speaks both.
    system.setProperty("aws.cborEnabled", "false")
    name = "efo-faults"
    faults = {"LimitExceededException": 0.1, "InternalFailure": 0.1}
    try:
        with FerroKinesis(tmp_path / "ferrokinesis.log", subscription_ms=6000, subscribe_faults=faults) as ferro:
            kinesis = Kinesis(ferro.endpoint)
            kinesis.create_stream(name, 2)
            producer = KeyedProducer(ferro.endpoint, name, interval_s=0.1).start()
            reader = spark.readStream.format("kinesis").option("streamName", name).option("region", REGION)
            reader = reader.option("endpoint", ferro.endpoint).option("awsAccessKey", ACCESS_KEY)
            query = sink.start(reader.option("awsSecretKey", SECRET_KEY).options(**EFO).load())
            try:
                deadline = time.monotonic() + 150
                # Faults are drawn at random: wait for one as well as for the calls (no fault in 18 calls at a
                # fifth each happens about once in 50 runs).
                while (stats := ferro.fault_stats())["subscribe_calls"] < 16 or stats["faulted"] == 0:
                    assert query.exception() is None, query.exception()
                    assert time.monotonic() < deadline, f"SubscribeToShard calls in 150 s: {stats}"
                    time.sleep(1)
                puts = producer.stop()
                records = sink.wait_for_rows(query, len(puts))
            finally:
                query.stop()
                kinesis.close()
            stats = ferro.fault_stats()
    finally:
        system.clearProperty("aws.cborEnabled")
    assert_delivered_exactly(records, puts, name)
    assert_per_key_order(records, puts)
    assert stats["faulted"] > 0, stats
    assert stats["refused_in_use"] == 0, f"subscribed again within 5 s of an accepted subscription: {stats}"


def test_resharding_while_reading_by_efo_delivers_everything_in_per_key_order(
    emulator, kinesis, stream, read_kinesis, sink
):
    """The emulator never announces a shard's end over EFO: the connector confirms it by polling once caught up."""
    read_while_resharding(emulator, kinesis, stream, read_kinesis, sink, consumerMode="efo")


def test_switching_polling_efo_polling_on_one_checkpoint(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(400, prefix="poll-1"))
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"))
    sink.wait_for_rows(query, 400)
    query.stop()

    puts += kinesis.put_records(name, numbered(400, start=400, prefix="efo"))
    query = sink.start(read_kinesis(name, consumerName="switch", **EFO))
    sink.wait_for_rows(query, 800)
    query.stop()
    assert consumers(kinesis, name) == {"kinesis_spark_switch": "ACTIVE"}

    puts += kinesis.put_records(name, numbered(400, start=800, prefix="poll-2"))
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"))
    records = sink.wait_for_rows(query, 1200)
    assert_delivered_exactly(records, puts, name)


def test_available_now_by_efo_reads_what_was_there_and_stops(kinesis, stream, read_kinesis, sink):
    """A split parent (closed, never announced as ended over EFO) and its children: AvailableNow reads all of it."""
    name = stream(1)
    before = kinesis.put_records(name, numbered(300, prefix="parent"))
    kinesis.split_shard(name, "shardId-000000000000")
    after = kinesis.put_records(name, numbered(200, prefix="children"))
    query = sink.start(read_kinesis(name, consumerName="available-now", **EFO), trigger={"availableNow": True})
    assert query.awaitTermination(120), f"AvailableNow did not stop; {sink.describe(query)}"
    assert query.exception() is None, query.exception()
    assert_delivered_exactly(sink.records(), before + after, name)

    more = kinesis.put_records(name, numbered(100, prefix="more"))
    query = sink.start(read_kinesis(name, consumerName="available-now", **EFO), trigger={"availableNow": True})
    assert query.awaitTermination(120), f"the second AvailableNow run did not stop; {sink.describe(query)}"
    assert_delivered_exactly(sink.records(), before + after + more, name)


def test_consumer_manager_from_python(spark, emulator, kinesis, stream):
    from kinesis_spark import KinesisConsumerManager, KinesisSparkError

    name = stream(1)
    manager = KinesisConsumerManager(spark).options(
        region="us-east-1", endpoint=emulator.endpoint, awsAccessKey="test", awsSecretKey="test"
    )
    assert manager.list_consumers(name) == []
    arn = manager.register_consumer(name, "reporting")
    assert arn.startswith(f"arn:aws:kinesis:us-east-1:000000000000:stream/{name}/consumer/reporting:")
    assert manager.register_consumer(name, "reporting") == arn, "registering again reuses it"
    listed = manager.list_consumers(name)
    assert [(c.name, c.arn, c.active) for c in listed] == [("reporting", arn, True)]
    assert consumers(kinesis, name) == {"reporting": "ACTIVE"}, "boto3 sees the same"

    assert manager.deregister_consumer(name, "reporting") is True
    wait_for_consumers(kinesis, name, {})
    assert manager.deregister_consumer(name, "reporting") is False

    with pytest.raises(KinesisSparkError, match="Invalid consumer name 'bad name'"):
        manager.register_consumer(name, "bad name")
    with pytest.raises(KinesisSparkError, match="does not exist"):
        manager.list_consumers(f"{name}-missing")
