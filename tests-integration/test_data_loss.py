"""failOnDataLoss: a stream deleted, or deleted and created again under the same name, while the query runs
or while it is stopped. With the default (true) the query fails, naming the stream and what to do; with false
it logs, counts ``dataLossEvents`` and reads the new stream from its oldest record, repeating nothing.

Retention trimming cannot be produced on the emulator (its shortest retention is 24 hours); it goes through
the same policy object and is covered by the Scala suites (StartReconcilerSuite, PollingShardReaderSuite).
"""

from __future__ import annotations

import time

from harness.sink import ProgressLog, wait_for_failure, wait_until_started
from test_polling_source import assert_delivered_exactly, numbered

# The emulator stamps creation times to the second or finer; keep two lives of one name apart.
RECREATE_GAP_S = 1.5
FAST = {"initialPosition": "trim_horizon", "shardFetchInterval": "1s"}


def recreate(kinesis, name: str, shards: int) -> None:
    kinesis.delete_and_wait(name)
    time.sleep(RECREATE_GAP_S)
    kinesis.create_stream(name, shards)


def test_recreated_stream_fails_the_restarted_query(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    kinesis.put_records(name, numbered(200))
    query = sink.start(read_kinesis(name, **FAST))
    sink.wait_for_rows(query, 200)
    query.stop()

    recreate(kinesis, name, 2)
    kinesis.put_records(name, numbered(50, start=200))
    message = wait_for_failure(sink.start(read_kinesis(name, **FAST)))
    for expected in (f"'{name}'", "deleted and created again", "failOnDataLoss"):
        assert expected in message, f"{expected!r} not in the error: {message[:1500]}"


def test_recreated_stream_is_read_afresh_without_failOnDataLoss(kinesis, stream, read_kinesis, sink):
    name = stream(2)
    old = kinesis.put_records(name, numbered(200))
    query = sink.start(read_kinesis(name, **FAST))
    sink.wait_for_rows(query, 200)
    query.stop()

    recreate(kinesis, name, 3)
    new = kinesis.put_records(name, numbered(300, start=200))
    query = sink.start(read_kinesis(name, failOnDataLoss="false", **FAST))
    progress = ProgressLog(query)
    records = sink.wait_for_rows(query, 500, on_poll=progress.poll)
    assert_delivered_exactly([r for r in records if r.data in {p.data for p in old}], old, name)
    assert_delivered_exactly([r for r in records if r.data in {p.data for p in new}], new, name)
    # One loss: the restarted query's first plan finds the checkpoint's stream replaced (StartReconciler) and
    # reports it once; nothing of the old stream is fetched after the restart, so no reader reports it again.
    assert max(progress.metric("dataLossEvents")) == 1, progress.metric("dataLossEvents")


def test_stream_deleted_while_running_fails_the_query(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    kinesis.put_records(name, numbered(100))
    query = sink.start(read_kinesis(name, **FAST))
    sink.wait_for_rows(query, 100)

    kinesis.delete_and_wait(name)
    message = wait_for_failure(query, timeout_s=60)
    assert f"'{name}'" in message and "deleted" in message, message[:1500]


def test_stream_recreated_while_running_is_followed_without_failOnDataLoss(kinesis, stream, read_kinesis, sink):
    name = stream(1)
    old = kinesis.put_records(name, numbered(100))
    query = sink.start(read_kinesis(name, failOnDataLoss="false", **FAST))
    progress = ProgressLog(query)
    sink.wait_for_rows(query, 100)

    recreate(kinesis, name, 2)
    new = kinesis.put_records(name, numbered(200, start=100))
    records = sink.wait_for_rows(query, 300, on_poll=progress.poll)
    assert_delivered_exactly([r for r in records if r.data in {p.data for p in old}], old, name)
    assert_delivered_exactly([r for r in records if r.data in {p.data for p in new}], new, name)
    # How many of its observers report the one deletion depends on timing, each at most once: the plan that finds
    # the stream replaced (StartReconciler: always, as the new stream's records are read only after it), the
    # listing that finds the stream missing (ShardDiscovery.streamMissing: if one falls in the 1.5 s the stream is
    # gone), and the reader of the old stream's one shard (PollingShardReader.streamReplaced: if it calls then).
    events = progress.metric("dataLossEvents")
    assert 1 <= max(events) <= 3, events

