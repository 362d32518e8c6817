"""End-to-end tests of the polling source: the connector jar in PySpark, reading the local Kinesis emulator.

boto3 is the ground truth: every test puts records itself and compares what the query delivered (through
the replay-safe sink of harness.sink) with what Kinesis acknowledged, record by record. Counts are asserted
exactly, so a test cannot pass on partial or duplicated output.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql.types import BinaryType, StringType, TimestampType

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.kinesis import PutResult
from harness.sink import SinkRecord, wait_for_failure, wait_until_started

EXPECTED_SCHEMA = [
    ("partitionKey", StringType()),
    ("data", BinaryType()),
    ("stream", StringType()),
    ("shardId", StringType()),
    ("sequenceNumber", StringType()),
    ("approximateArrivalTimestamp", TimestampType()),
]
# Slack between the emulator's arrival timestamps and the test's clock around each PutRecords call.
ARRIVAL_SLACK_S = 2.0
# JVM errors surface as a converted pyspark exception, or as the raw Py4J error for classes PySpark
# does not map.
LOAD_ERRORS = (PySparkException, Py4JJavaError)
COMMIT_WAIT_S = 180.0


def numbered(count: int, start: int = 0, prefix: str = "rec", keys: int = 50) -> list[tuple[str, bytes]]:
    """``count`` records with distinct data ``<prefix>-<i>`` over ``keys`` partition keys ``k<i % keys>``."""
    return [(f"k{i % keys}", f"{prefix}-{i}".encode()) for i in range(start, start + count)]


def assert_delivered_exactly(records: list[SinkRecord], puts: list[PutResult], stream: str) -> None:
    """The sink holds each put record exactly once, with the key, data, shard and sequence number Kinesis
    reported for it, the stream's name and an arrival time within the PutRecords call that stored it."""
    positions = Counter((r.shard_id, r.sequence_number) for r in records)
    duplicates = {position: n for position, n in positions.items() if n > 1}
    assert not duplicates, (
        f"{len(duplicates)} records delivered more than once, e.g. {list(duplicates.items())[:5]}"
    )
    assert len(records) == len(puts), f"delivered {len(records)} records, put {len(puts)}"

    by_data = {r.data: r for r in records}
    missing = [p.data for p in puts if p.data not in by_data]
    assert not missing, f"{len(missing)} records never delivered, e.g. {missing[:5]}"
    for put in puts:
        record = by_data[put.data]
        assert (record.partition_key, record.stream, record.shard_id, record.sequence_number) == (
            put.partition_key,
            stream,
            put.shard_id,
            put.sequence_number,
        ), f"record {put.data!r} delivered as {record}, put as {put}"
        assert put.sent_at - ARRIVAL_SLACK_S <= record.arrival <= put.acknowledged_at + ARRIVAL_SLACK_S, (
            f"record {put.data!r}: approximateArrivalTimestamp {record.arrival} outside the put window "
            f"[{put.sent_at}, {put.acknowledged_at}]"
        )


def assert_load_fails(load, *patterns: str) -> None:
    """``load()`` raises before any query runs, with a message matching every pattern (case-insensitive)."""
    with pytest.raises(LOAD_ERRORS) as failure:
        load()
    message = str(failure.value)
    for pattern in patterns:
        assert re.search(pattern, message, re.IGNORECASE), (
            f"{pattern!r} not found in the error: {message[:2000]}"
        )


def test_schema_and_every_record_exactly_once(kinesis, stream, read_kinesis, sink):
    name = stream(3)
    puts = kinesis.put_records(name, numbered(3000))
    assert len({p.shard_id for p in puts}) == 3, "the partition keys must spread the records over all shards"

    source = read_kinesis(name, initialPosition="trim_horizon")
    assert [(f.name, f.dataType) for f in source.schema.fields] == EXPECTED_SCHEMA

    records = sink.wait_for_rows(sink.start(source), 3000)
    assert_delivered_exactly(records, puts, name)


@pytest.mark.line_smoke
def test_restart_from_checkpoint_continues_without_duplicates(kinesis, stream, read_kinesis, sink):
    name = stream(3)
    first = kinesis.put_records(name, numbered(3000))
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"))
    first_run = sink.wait_for_rows(query, 3000)
    query.stop()

    second = kinesis.put_records(name, numbered(1000, start=3000))
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"))
    records = sink.wait_for_rows(query, 4000)

    assert_delivered_exactly(records, first + second, name)
    last_batch_of_first_run = max(r.batch_id for r in first_run)
    second_data = {p.data for p in second}
    assert all(r.batch_id > last_batch_of_first_run for r in records if r.data in second_data), (
        "records put after the restart must arrive in batches after those of the first run"
    )


@pytest.mark.parametrize("position", ["trim_horizon", "earliest"])
def test_trim_horizon_reads_from_the_oldest_record(kinesis, stream, read_kinesis, sink, position):
    name = stream(1)
    before = kinesis.put_records(name, numbered(100, prefix="before"))
    query = sink.start(read_kinesis(name, initialPosition=position))
    wait_until_started(query)
    after = kinesis.put_records(name, numbered(100, start=100, prefix="after"))

    assert_delivered_exactly(sink.wait_for_rows(query, 200), before + after, name)


@pytest.mark.parametrize("options", [{}, {"initialPosition": "latest"}], ids=["default", "explicit"])
def test_latest_reads_only_records_put_after_the_query_started(kinesis, stream, read_kinesis, sink, options):
    name = stream(1)
    kinesis.put_records(name, numbered(100, prefix="before"))
    query = sink.start(read_kinesis(name, **options))
    wait_until_started(query)
    after = kinesis.put_records(name, numbered(100, start=100, prefix="after"))

    assert_delivered_exactly(sink.wait_for_rows(query, 100), after, name)


@pytest.mark.parametrize("with_format", [True, False], ids=["explicit-format", "default-format"])
def test_at_timestamp_reads_records_arriving_at_or_after_it(kinesis, stream, read_kinesis, sink, with_format):
    name = stream(1)
    earlier = kinesis.put_records(name, numbered(100, prefix="earlier"))
    time.sleep(2)
    start = math.floor(time.time()) + 1  # the next whole second: the format has no fraction of a second
    time.sleep(2)
    later = kinesis.put_records(name, numbered(100, start=100, prefix="later"))
    assert max(p.acknowledged_at for p in earlier) < start <= min(p.sent_at for p in later)

    position = {
        "at_timestamp": datetime.fromtimestamp(start, timezone.utc).strftime("%m/%d/%Y %H:%M:%S +0000")
    }
    if with_format:
        position["format"] = "MM/dd/yyyy HH:mm:ss ZZZ"
    query = sink.start(read_kinesis(name, initialPosition=json.dumps(position)))

    assert_delivered_exactly(sink.wait_for_rows(query, 100), later, name)


def test_initial_position_per_shard_continues_where_another_consumer_stopped(kinesis, stream, read_kinesis, sink):
    name = stream(3)
    puts = kinesis.put_records(name, numbered(600))
    by_shard = defaultdict(list)
    for put in puts:
        by_shard[put.shard_id].append(put)
    first, second, third = sorted(by_shard)
    assert all(len(by_shard[s]) > 30 for s in (first, second, third)), "the keys must spread over the three shards"
    # Another consumer got to the 10th record of the first shard and the 20th of the second; the third is not named.
    after = by_shard[first][9]
    at = by_shard[second][19]
    position = {
        "default": "trim_horizon",
        "shards": {first: {"after_sequence_number": after.sequence_number},
                   second: {"at_sequence_number": at.sequence_number}},
    }
    query = sink.start(read_kinesis(name, initialPosition=json.dumps(position)))
    expected = by_shard[first][10:] + by_shard[second][19:] + by_shard[third]
    wait_until_started(query)
    later = kinesis.put_records(name, numbered(60, start=600, prefix="later"))

    assert_delivered_exactly(sink.wait_for_rows(query, len(expected) + 60), expected + later, name)


def test_initial_position_per_shard_reads_the_children_of_a_named_shard_that_split_since(
    kinesis, stream, read_kinesis, sink
):
    """Another consumer stopped in a shard that split afterwards: the children, not named, start at their
    beginning, not at the default ``latest``, which would skip every record they hold (issue 38)."""
    name = stream(1)
    parent_puts = kinesis.put_records(name, numbered(100))
    [parent] = [s["ShardId"] for s in kinesis.shards(name)]
    kinesis.split_shard(name, parent)
    child_puts = kinesis.put_records(name, numbered(100, start=100, prefix="child"))
    assert len({p.shard_id for p in child_puts} - {parent}) == 2, "the keys must land in both child shards"
    position = {"default": "latest", "shards": {parent: {"after_sequence_number": parent_puts[29].sequence_number}}}

    query = sink.start(read_kinesis(name, initialPosition=json.dumps(position)))
    expected = parent_puts[30:] + child_puts
    assert_delivered_exactly(sink.wait_for_rows(query, len(expected)), expected, name)


def test_initial_position_per_shard_refuses_unknown_shards_and_foreign_sequence_numbers(
    kinesis, stream, read_kinesis, sink
):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(100))
    shards = sorted({p.shard_id for p in puts})
    assert len(shards) == 2

    unknown = {"shards": {"shardId-000000000099": "trim_horizon"}}
    query = sink.start(read_kinesis(name, initialPosition=json.dumps(unknown)))
    error = wait_for_failure(query)
    assert "initialPosition" in error and "'shardId-000000000099'" in error and "does not list" in error, error

    # The second shard's sequence number, asked of the first shard: Kinesis refuses it, the error names the shard.
    foreign = next(p for p in puts if p.shard_id == shards[1])
    wrong = {"shards": {shards[0]: {"at_sequence_number": foreign.sequence_number}}}
    query = sink.start(read_kinesis(name, initialPosition=json.dumps(wrong)))
    error = wait_for_failure(query)
    assert "initialPosition" in error and f"'{shards[0]}'" in error and foreign.sequence_number in error, error


def test_replayed_batch_is_reread_from_kinesis_identically(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(2000))
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"))
    sink.wait_for_rows(query, 2000)
    query.stop()

    commits = sink.checkpoint / "commits"
    last = max(int(path.name) for path in commits.iterdir() if path.name.isdigit())
    original = set(sink.records([last]))  # the batch's output, kept before the replay overwrites it
    assert original, f"the last committed batch {last} holds no records, so replaying it would prove nothing"
    original_files = sorted(p.name for p in sink.batch_dir(last).glob("*.parquet"))
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)

    # Spark now finds batch `last` planned in the offset log but not committed, and runs it again on restart.
    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"))
    deadline = time.monotonic() + COMMIT_WAIT_S
    while not (commits / str(last)).exists():
        assert query.exception() is None, f"query failed while replaying batch {last}: {query.exception()}"
        assert time.monotonic() < deadline, (
            f"batch {last} was not committed again within {COMMIT_WAIT_S:.0f} s"
        )
        time.sleep(0.5)
    records = sink.wait_for_rows(query, 2000)

    assert sorted(p.name for p in sink.batch_dir(last).glob("*.parquet")) != original_files, (
        f"batch {last} was not rewritten"
    )
    assert set(sink.records([last])) == original
    assert_delivered_exactly(records, puts, name)


def test_resharded_stream_is_read_parent_first(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    keys = 20

    def round_of(number: int) -> list[tuple[str, bytes]]:
        return [(f"key-{k}", f"key-{k}:{number}".encode()) for k in range(keys)]

    parent_puts = kinesis.put_records(name, [r for n in range(10) for r in round_of(n)])
    [parent] = [s["ShardId"] for s in kinesis.shards(name)]
    kinesis.split_shard(name, parent)
    child_puts = kinesis.put_records(name, [r for n in range(10, 20) for r in round_of(n)])
    assert {p.shard_id for p in parent_puts} == {parent}
    assert len({p.shard_id for p in child_puts} - {parent}) == 2, "the keys must land in both child shards"

    query = sink.start(read_kinesis(name, initialPosition="trim_horizon"))
    records = sink.wait_for_rows(query, 400)
    assert_delivered_exactly(records, parent_puts + child_puts, name)

    parent_batches = {r.batch_id for r in records if r.shard_id == parent}
    child_batches = {r.batch_id for r in records if r.shard_id != parent}
    assert max(parent_batches) < min(child_batches), (
        f"parent records in batches {sorted(parent_batches)}, child records in {sorted(child_batches)}"
    )
    numbers_by_key = defaultdict(list)
    for record in sorted(records, key=lambda r: (r.batch_id, int(r.sequence_number))):
        numbers_by_key[record.partition_key].append(int(record.data.decode().split(":")[1]))
    for key, numbers in numbers_by_key.items():
        assert numbers == list(range(20)), f"{key}: records delivered in the order {numbers}"


def test_option_names_are_case_insensitive(spark, emulator, kinesis, stream, sink):
    name = stream(1)
    puts = kinesis.put_records(name, numbered(50))
    source = (
        spark.readStream.format("kinesis")
        .option("STREAMNAME", name)
        .option("Region", REGION)
        .option("ENDPOINT", emulator.endpoint)
        .option("awsaccesskey", ACCESS_KEY)
        .option("AWSSECRETKEY", SECRET_KEY)
        .option("InitialPosition", "trim_horizon")
        .load()
    )
    assert_delivered_exactly(sink.wait_for_rows(sink.start(source), 50), puts, name)


def test_missing_stream_fails_at_load(read_kinesis):
    name = "no-such-stream-e2e"
    assert_load_fails(
        lambda: read_kinesis(name, initialPosition="trim_horizon"), re.escape(name), "does not exist"
    )


def test_missing_stream_name_fails_at_load(spark, emulator):
    def load():
        return (
            spark.readStream.format("kinesis")
            .option("region", REGION)
            .option("endpoint", emulator.endpoint)
            .option("awsAccessKey", ACCESS_KEY)
            .option("awsSecretKey", SECRET_KEY)
            .load()
        )

    assert_load_fails(load, "streamName")


@pytest.mark.parametrize(
    ("option", "value", "value_pattern"),
    [
        ("initialPosition", "bogus", "bogus"),
        ("initialPosition", '{"at_timestamp": "not a time"}', "not a time"),
        ("maxRecordsPerFetch", "0", r"(?<![\w.])0(?![\w.])"),
        ("maxRecordsPerFetch", "many", "many"),
    ],
    ids=[
        "initialPosition-bogus",
        "initialPosition-bad-timestamp",
        "maxRecordsPerFetch-zero",
        "maxRecordsPerFetch-nan",
    ],
)
def test_bad_option_fails_at_load(stream, read_kinesis, option, value, value_pattern):
    name = stream(1)
    assert_load_fails(lambda: read_kinesis(name, **{option: value}), option, value_pattern)
