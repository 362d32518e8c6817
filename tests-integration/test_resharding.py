"""Resharding while the query runs and while it is stopped: every record exactly once, per key in order.

A producer keeps putting keyed, numbered records (harness.producer) while the test splits, merges and
rescales the stream. Kinesis routes each key to exactly one open shard at a time, so per-key order holds only
if the source reads a parent to its end before any child, which is what these tests check.
"""

from __future__ import annotations

import json
import time

from harness.kinesis import Kinesis
from harness.producer import KeyedProducer, assert_per_key_order
from harness.sink import wait_until_started
from test_polling_source import assert_delivered_exactly

# A short listing interval so the source sees each reshard within a second or two.
FAST_DISCOVERY = {"initialPosition": "trim_horizon", "shardFetchInterval": "1s"}


def wait_for_some_rows(sink, count: int, timeout_s: float = 120.0) -> None:
    """Until the sink holds at least ``count`` rows (the query has committed batches before a stop)."""
    deadline = time.monotonic() + timeout_s
    while len(sink.records()) < count:
        assert time.monotonic() < deadline, f"fewer than {count} rows after {timeout_s:.0f} s"
        time.sleep(0.5)


def reshard_all_ways(kinesis: Kinesis, name: str, producer: KeyedProducer, rounds: int = 10) -> None:
    """Split, merge, scale up and scale down, with ``rounds`` of records produced before, between and after each."""
    producer.wait_rounds(rounds)
    kinesis.split_shard(name, kinesis.open_shards(name)[0]["ShardId"])  # 2 -> 3
    producer.wait_rounds(rounds)
    kinesis.merge_adjacent(name, 1)  # 3 -> 2
    producer.wait_rounds(rounds)
    kinesis.update_shard_count(name, 4)  # 2 -> 4
    producer.wait_rounds(rounds)
    kinesis.update_shard_count(name, 2)  # 4 -> 2
    producer.wait_rounds(rounds)


def read_while_resharding(emulator, kinesis, stream, read_kinesis, sink, **options: str) -> None:
    """A query with ``options`` reads a 2-shard stream that is split, merged and rescaled under a keyed producer:
    every record exactly once, per key in order, every shard read."""
    name = stream(2)
    producer = KeyedProducer(emulator.endpoint, name).start()
    query = sink.start(read_kinesis(name, **FAST_DISCOVERY, **options))
    wait_until_started(query)

    reshard_all_ways(kinesis, name, producer)
    puts = producer.stop()

    shards = kinesis.shards(name)
    assert len(shards) > 6, f"the stream should have been resharded several times: {len(shards)} shards"
    records = sink.wait_for_rows(query, len(puts), timeout_s=240)
    assert_delivered_exactly(records, puts, name)
    assert_per_key_order(records, puts)
    assert len({r.shard_id for r in records}) == len({p.shard_id for p in puts}), "every shard written was read"


def test_split_merge_and_rescaling_while_running(emulator, kinesis, stream, read_kinesis, sink):
    read_while_resharding(emulator, kinesis, stream, read_kinesis, sink)


def test_reshard_while_stopped_is_read_in_order_after_restart(emulator, kinesis, stream, read_kinesis, sink):
    name = stream(2)
    producer = KeyedProducer(emulator.endpoint, name).start()
    query = sink.start(read_kinesis(name, **FAST_DISCOVERY))
    producer.wait_rounds(15)
    wait_for_some_rows(sink, 200)
    query.stop()

    # While the query is down: the stream is split and merged and records keep coming, so children are born
    # and filled while nobody reads; they must start at TRIM_HORIZON, after their parents' tails.
    reshard_all_ways(kinesis, name, producer)
    puts = producer.stop()

    query = sink.start(read_kinesis(name, **FAST_DISCOVERY))
    records = sink.wait_for_rows(query, len(puts))
    assert_delivered_exactly(records, puts, name)
    assert_per_key_order(records, puts)


def test_restart_in_the_middle_of_resharding(emulator, kinesis, stream, read_kinesis, sink):
    """A stop/restart between a split and a merge, with reading and resharding interleaved on both sides."""
    name = stream(2)
    producer = KeyedProducer(emulator.endpoint, name).start()
    query = sink.start(read_kinesis(name, **FAST_DISCOVERY))
    producer.wait_rounds(10)
    kinesis.split_shard(name, kinesis.open_shards(name)[1]["ShardId"])
    producer.wait_rounds(10)
    wait_for_some_rows(sink, 300)
    query.stop()

    kinesis.merge_adjacent(name, 0)
    producer.wait_rounds(10)
    query = sink.start(read_kinesis(name, **FAST_DISCOVERY))
    producer.wait_rounds(10)
    kinesis.update_shard_count(name, 3)
    producer.wait_rounds(10)
    puts = producer.stop()

    records = sink.wait_for_rows(query, len(puts))
    assert_delivered_exactly(records, puts, name)
    assert_per_key_order(records, puts)


def test_a_finished_parent_leaves_the_offset_once_its_children_read_and_is_never_read_again(
    emulator, kinesis, stream, read_kinesis, sink
):
    """The offset drops a split parent once both children have read a record; a restart does not read it again."""
    name = stream(1)
    producer = KeyedProducer(emulator.endpoint, name).start()
    query = sink.start(read_kinesis(name, **FAST_DISCOVERY))
    producer.wait_rounds(5)
    parent = kinesis.open_shards(name)[0]["ShardId"]
    kinesis.split_shard(name, parent)
    producer.wait_rounds(10)

    parent_key = str(int(parent.rsplit("-", 1)[1]))  # the offset names shards by their number
    deadline = time.monotonic() + 120
    while True:
        progress = query.lastProgress
        held = json.loads(progress["sources"][0]["endOffset"])["streams"].get(name, {}) if progress else {}
        if len(held) == 2 and parent_key not in held:
            break
        assert time.monotonic() < deadline, f"the finished parent stayed in the offset: {held}"
        time.sleep(0.5)
    query.stop()

    producer.wait_rounds(5)
    query = sink.start(read_kinesis(name, **FAST_DISCOVERY))
    producer.wait_rounds(5)
    puts = producer.stop()
    records = sink.wait_for_rows(query, len(puts))
    assert_delivered_exactly(records, puts, name)
    assert_per_key_order(records, puts)
