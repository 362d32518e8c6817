"""Several streams in one query (``streamName`` as a comma-separated list, names or ARNs): the ``stream``
column, exactly once per stream, per-stream metrics, and changing the list between restarts."""

from __future__ import annotations

from harness.emulator import REGION
from harness.sink import ProgressLog, wait_for_failure
from test_polling_source import assert_delivered_exactly, numbered

# kinesis-local's default account id.
ACCOUNT = "000000000000"


def arn(name: str) -> str:
    return f"arn:aws:kinesis:{REGION}:{ACCOUNT}:stream/{name}"


def by_stream(records, name):
    return [r for r in records if r.stream == name]


def test_two_streams_in_one_query(kinesis, stream, read_kinesis, sink):
    a, b = stream(2), stream(1)
    puts_a = kinesis.put_records(a, numbered(600, prefix="a"))
    puts_b = kinesis.put_records(b, numbered(400, prefix="b"))

    query = sink.start(read_kinesis(f"{a}, {b}", initialPosition="trim_horizon"))
    progress = ProgressLog(query)
    records = sink.wait_for_rows(query, 1000, on_poll=progress.poll)
    assert_delivered_exactly(by_stream(records, a), puts_a, a)
    assert_delivered_exactly(by_stream(records, b), puts_b, b)

    metrics = progress.source_metrics()[-1]
    assert metrics["activeShards"] == "3", metrics
    assert metrics[f"{a}.activeShards"] == "2" and metrics[f"{b}.activeShards"] == "1", metrics
    assert f"{a}.avgMsBehindLatest" in metrics and f"{b}.avgMsBehindLatest" in metrics, metrics


def test_streams_given_by_arn_are_named_by_their_name(kinesis, stream, read_kinesis, sink):
    a, b = stream(1), stream(1)
    puts_a = kinesis.put_records(a, numbered(100, prefix="a"))
    puts_b = kinesis.put_records(b, numbered(100, prefix="b"))

    query = sink.start(read_kinesis(f"{arn(a)},{b}", initialPosition="trim_horizon"))
    records = sink.wait_for_rows(query, 200)
    assert_delivered_exactly(by_stream(records, a), puts_a, a)
    assert_delivered_exactly(by_stream(records, b), puts_b, b)


def test_stream_added_on_restart_starts_at_the_initial_position(kinesis, stream, read_kinesis, sink):
    a, b = stream(1), stream(2)
    first_a = kinesis.put_records(a, numbered(200, prefix="a"))
    old_b = kinesis.put_records(b, numbered(100, prefix="b-old"))
    query = sink.start(read_kinesis(a, initialPosition="trim_horizon"))
    sink.wait_for_rows(query, 200)
    query.stop()

    # initialPosition applies to the added stream only: trim_horizon reads what b already holds.
    second_a = kinesis.put_records(a, numbered(50, start=200, prefix="a"))
    new_b = kinesis.put_records(b, numbered(100, prefix="b-new"))
    query = sink.start(read_kinesis(f"{a},{b}", initialPosition="trim_horizon"))
    records = sink.wait_for_rows(query, 200 + 50 + 200)
    assert_delivered_exactly(by_stream(records, a), first_a + second_a, a)
    assert_delivered_exactly(by_stream(records, b), old_b + new_b, b)


def test_stream_added_on_restart_with_latest_skips_its_old_records(kinesis, stream, read_kinesis, sink):
    a, b = stream(1), stream(1)
    puts_a = kinesis.put_records(a, numbered(100, prefix="a"))
    kinesis.put_records(b, numbered(100, prefix="b-old"))
    query = sink.start(read_kinesis(a, initialPosition="trim_horizon"))
    sink.wait_for_rows(query, 100)
    query.stop()

    query = sink.start(read_kinesis(f"{a},{b}", initialPosition="latest"))
    sink.wait_for_rows(query, 100)  # the restart fixed b's start before anything new was put
    new_b = kinesis.put_records(b, numbered(80, prefix="b-new"))
    records = sink.wait_for_rows(query, 180)
    assert_delivered_exactly(by_stream(records, a), puts_a, a)
    assert_delivered_exactly(by_stream(records, b), new_b, b)


def test_stream_removed_on_restart_is_refused_unless_allowed(kinesis, stream, read_kinesis, sink):
    a, b = stream(1), stream(1)
    puts_a = kinesis.put_records(a, numbered(100, prefix="a"))
    kinesis.put_records(b, numbered(100, prefix="b"))
    query = sink.start(read_kinesis(f"{a},{b}", initialPosition="trim_horizon"))
    sink.wait_for_rows(query, 200)
    query.stop()

    message = wait_for_failure(sink.start(read_kinesis(a, initialPosition="trim_horizon")))
    assert f"'{b}'" in message and "allowStreamRemoval" in message, message[:1500]

    more_a = kinesis.put_records(a, numbered(60, start=100, prefix="a"))
    query = sink.start(read_kinesis(a, initialPosition="trim_horizon", allowStreamRemoval="true"))
    records = sink.wait_for_rows(query, 260)
    assert_delivered_exactly(by_stream(records, a), puts_a + more_a, a)
