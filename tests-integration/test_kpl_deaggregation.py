"""End-to-end tests of KPL de-aggregation: aggregates made by an independent producer (PyPI ``aws-kinesis-agg``,
the awslabs Python aggregator) are put on the emulator and must come out of the source as their user records,
each exactly once, with the aggregate's sequence number and the user record's index as ``subSequenceNumber`` (a
column only with ``includeSubSequenceNumber``, which every read here sets but the one that checks the default).

Expectations are built on the producer side only: the user records handed to the aggregator, and the shard and
sequence number Kinesis acknowledged for each aggregate.

About batch boundaries: a batch ends after a whole GetRecords response, and Kinesis always returns whole
records, so a batch never ends between two user records of the same aggregate. What a restart does exercise is
an offset that points *into* an aggregate (``"sub": n-1`` after its last user record): resuming from it reads the
aggregate again (AT_SEQUENCE_NUMBER) and must skip every user record already delivered. Resuming at an index
before the last one is covered by the Scala unit tests (PollingShardReaderKplSuite).
"""

from __future__ import annotations

import functools
import json
import time
from collections import Counter

import pytest

from harness.kpl_producer import Producer, Row, UserRecord, aggregate, assert_rows_exactly, hash_key, users
from harness.sink import BatchSink, SinkRecord

METRIC_WAIT_S = 60.0
HASH_KEY_SPACE = 2**128


@pytest.fixture
def read_kinesis(read_kinesis):
    """The suite's reader, with the column that tells a KPL aggregate's user records apart."""
    return functools.partial(read_kinesis, includeSubSequenceNumber="true")


@pytest.fixture
def read_default(read_kinesis):
    """The suite's reader as conftest.py makes it, with the default columns."""
    return read_kinesis.func


def wait_for_metric(query, name: str, expected: int) -> dict[str, str]:
    """Polls the query's latest source metrics until ``name`` equals ``expected``; returns those metrics."""
    deadline = time.monotonic() + METRIC_WAIT_S
    metrics: dict[str, str] = {}
    while time.monotonic() < deadline:
        progress = query.lastProgress
        if progress and progress["sources"]:
            metrics = progress["sources"][0]["metrics"] or {}
            if metrics.get(name) == str(expected):
                return metrics
        time.sleep(0.5)
    raise AssertionError(f"source metric {name} never reached {expected}; last metrics {metrics}")


def run_to(sink: BatchSink, source, expected: list[Row]) -> tuple[object, list[SinkRecord]]:
    """Starts (or resumes) the query and waits for exactly ``len(expected)`` rows; the query keeps running."""
    query = sink.start(source)
    records = sink.wait_for_rows(query, len(expected))
    return query, records


def test_user_records_of_aggregates_over_several_shards(kinesis, stream, read_kinesis, sink):
    name = stream(3)
    producer = Producer(kinesis, name)
    shards = producer.shards
    for n, shard in enumerate(shards):
        producer.put_aggregate(shard, users(f"s{n}a", 1))
        producer.put_aggregate(shard, users(f"s{n}b", 7 + n))
        producer.put_aggregate(shard, users(f"s{n}c", 120))
    # Empty data, a key shared by several user records, binary data.
    producer.put_aggregate(shards[1], [UserRecord("same", b""), UserRecord("same", b"\x00\xff"), UserRecord("other", b"")])

    query, records = run_to(sink, read_kinesis(name, initialPosition="trim_horizon"), producer.expected)
    assert_rows_exactly(records, producer.expected)
    assert {r.stream for r in records} == {name}
    # The user records' keys are spread over the whole hash key space, so most lie outside the aggregate's shard.
    assert producer.out_of_range > 100
    metrics = wait_for_metric(query, "outOfRangeSubRecords", producer.out_of_range)
    assert metrics["corruptAggregates"] == "0", metrics
    query.stop()


def test_a_start_named_inside_an_aggregate_reads_its_later_user_records_first(kinesis, stream, read_kinesis, sink):
    """A consumer that stopped at user record 3 of an aggregate: ``sub_sequence_number`` starts after it."""
    name = stream(1)
    producer = Producer(kinesis, name)
    (shard,) = producer.shards
    stopped_in = producer.put_aggregate(shard, users("a", 8))
    producer.put_aggregate(shard, users("b", 5))
    position = {"shards": {shard: {"after_sequence_number": stopped_in.sequence_number, "sub_sequence_number": 3}}}

    expected = [row for row in producer.expected if row[1] != stopped_in.sequence_number or row[2] > 3]
    query, records = run_to(sink, read_kinesis(name, initialPosition=json.dumps(position)), expected)
    assert_rows_exactly(records, expected)
    query.stop()


def test_aggregated_and_plain_records_mixed_in_one_shard(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    producer = Producer(kinesis, name)
    (shard,) = producer.shards
    producer.put_plain(shard, "plain-0", b"plain record 0")
    producer.put_aggregate(shard, users("a", 3))
    producer.put_plain(shard, "plain-1", b"")
    producer.put_plain(shard, "plain-2", b"\xf3\x89\x9a")  # the first three magic bytes only: not an aggregate
    producer.put_aggregate(shard, users("b", 5))
    producer.put_aggregate(shard, users("c", 1))
    producer.put_plain(shard, "plain-3", b"plain record 3")

    query, records = run_to(sink, read_kinesis(name, initialPosition="trim_horizon"), producer.expected)
    query.stop()
    assert_rows_exactly(records, producer.expected)
    plain = [r for r in records if r.partition_key.startswith("plain-")]
    assert len(plain) == 4 and all(r.sub_sequence_number is None for r in plain)


def test_sub_sequence_number_is_a_column_only_when_asked_for(kinesis, stream, read_kinesis, read_default, sink):
    # By default the rows have the Databricks connector's six columns, whatever the records are; the option adds
    # subSequenceNumber last.
    name = stream(1)
    producer = Producer(kinesis, name)
    (shard,) = producer.shards
    producer.put_aggregate(shard, users("a", 3))
    producer.put_plain(shard, "plain", b"plain record")

    default = read_default(name, initialPosition="trim_horizon")
    six = ["partitionKey", "data", "stream", "shardId", "sequenceNumber", "approximateArrivalTimestamp"]
    assert default.columns == six
    records = sink.wait_for_rows(sink.start(default), len(producer.expected))
    assert Counter((r.partition_key, r.data) for r in records) == Counter((e[3], e[4]) for e in producer.expected)

    with_index = read_kinesis(name, initialPosition="trim_horizon")
    assert with_index.columns == [*six, "subSequenceNumber"]
    assert with_index.schema["subSequenceNumber"].dataType.typeName() == "long"


def logged_positions(sink: BatchSink, stream: str, shard: str) -> list[str]:
    """A shard's positions in the source offsets Spark logged in the checkpoint, oldest batch first. The offset's
    versions 2 and 3 name a shard ``shardId-000000000007`` as ``7`` and write a position as a short string."""
    logged = sorted((sink.checkpoint / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    offsets = [json.loads(path.read_text().splitlines()[-1]) for path in logged]
    assert all(o["v"] == 3 for o in offsets), offsets
    return [o["streams"][stream][str(int(shard.removeprefix("shardId-")))] for o in offsets]


def sub_sequence(position: str) -> int | None:
    """The sub-sequence number of a logged position ``a<sequence number in base 36>.<sub>``, if it has one."""
    after, _, sub = position.partition(".")
    return int(sub) if after.startswith("a") and sub else None


@pytest.mark.parametrize("restart_mode", ["polling", "efo"])
def test_restart_from_an_offset_inside_an_aggregate_repeats_and_loses_nothing(
    kinesis, stream, read_kinesis, sink, restart_mode
):
    """The restart reads on by polling, or subscribes (AT_SEQUENCE_NUMBER of the aggregate, then skips what was read)."""
    name = stream(1)
    producer = Producer(kinesis, name)
    (shard,) = producer.shards
    for i in range(6):
        if i % 2 == 0:
            producer.put_plain(shard, f"plain-{i}", f"plain {i}".encode())
        producer.put_aggregate(shard, users(f"first-{i}", 4 + i))
    first_part = len(producer.expected)
    # One Kinesis record per GetRecords call and one response per batch: every batch ends after an aggregate
    # or a plain record, and the offset after an aggregate points at its last user record.
    options = {"initialPosition": "trim_horizon", "maxRecordsPerFetch": "1", "maxRecordsPerTrigger": "1"}

    query = sink.start(read_kinesis(name, **options))
    sink.wait_for_rows(query, first_part)
    query.stop()
    positions = logged_positions(sink, name, shard)
    # The query stopped after the last aggregate's last user record (index 8 of 9): the restart resumes there.
    assert sub_sequence(positions[-1]) == 8, positions
    after_aggregates = sum(sub_sequence(p) is not None for p in positions)
    assert after_aggregates >= 6, f"expected an offset after each aggregate: {positions}"

    for i in range(3):
        producer.put_aggregate(shard, users(f"second-{i}", 3))
    producer.put_plain(shard, "plain-last", b"last")
    query, records = run_to(sink, read_kinesis(name, **options, consumerMode=restart_mode), producer.expected)
    query.stop()
    assert_rows_exactly(records, producer.expected)


def test_corrupt_aggregate_is_delivered_raw_once_and_counted(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    producer = Producer(kinesis, name)
    (shard,) = producer.shards
    producer.put_aggregate(shard, users("good", 3))
    outer_key, good = aggregate(users("broken", 4))
    corrupt = good[:-1] + bytes([good[-1] ^ 0xFF])  # one byte of the MD5 digest flipped
    producer.put_plain(shard, outer_key, corrupt)  # expected back as it is, as one record
    producer.put_plain(shard, "after", b"after the corrupt one")

    query, records = run_to(sink, read_kinesis(name, initialPosition="trim_horizon"), producer.expected)
    assert_rows_exactly(records, producer.expected)
    wait_for_metric(query, "corruptAggregates", 1)
    query.stop()

    # After a restart from the checkpoint the corrupt record is neither delivered nor counted again.
    producer.put_plain(shard, "later", b"put after the restart")
    query, records = run_to(sink, read_kinesis(name, initialPosition="trim_horizon"), producer.expected)
    assert_rows_exactly(records, producer.expected)
    metrics = query.lastProgress["sources"][0]["metrics"]
    assert (metrics["corruptAggregates"], metrics["outOfRangeSubRecords"]) == ("0", "0"), metrics
    query.stop()


def test_user_records_outside_the_shard_range_are_delivered_and_counted(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    producer = Producer(kinesis, name)
    shard_0, shard_1 = producer.shards
    (low_0, high_0), (low_1, _) = producer.ranges[shard_0], producer.ranges[shard_1]
    # Partition keys whose MD5 falls in each shard, found the way Kinesis hashes them.
    key_in_1 = next(k for k in (f"key-{i}" for i in range(1000)) if hash_key(k) >= low_1)
    key_in_0 = next(k for k in (f"key-{i}" for i in range(1000)) if low_0 <= hash_key(k) <= high_0)
    records = [
        UserRecord(key_in_0, b"in range by its key"),
        UserRecord("x", b"in range by explicit hash key", str(high_0)),
        UserRecord("y", b"out of range by explicit hash key", str(low_1)),
        UserRecord(key_in_1, b"out of range by its key"),
        UserRecord("z", b"out of range: the largest hash key", str(HASH_KEY_SPACE - 1)),
    ]
    producer.put_aggregate(shard_0, records)
    producer.put_aggregate(shard_1, [UserRecord(key_in_1, b"in shard 1, in range")])

    query, delivered = run_to(sink, read_kinesis(name, initialPosition="trim_horizon"), producer.expected)
    assert_rows_exactly(delivered, producer.expected)
    assert {r.shard_id for r in delivered if r.data.startswith(b"out of range")} == {shard_0}
    assert producer.out_of_range == 3
    wait_for_metric(query, "outOfRangeSubRecords", 3)
    query.stop()
