"""Retention trimming, played by the limits proxy: records that arrived before its trim horizon are gone, and every
way of reading goes on from the oldest record left, as on AWS (see the proxy's table). A query that resumes after a
record retention took must not read on as if nothing happened: with ``failOnDataLoss`` (the default) it fails naming
the stream, the shard and the position; without it, it counts the loss in ``dataLossEvents`` and reads everything
left, once.

Reproduced before the fix: the resumed query read the records left and went on, and the expired ones were lost
without a word, whatever ``failOnDataLoss`` said (the reader resumed AFTER its last record, and Kinesis does not
refuse that iterator).
"""

from __future__ import annotations

import time

import pytest
from harness.reliability import source_options
from harness.sink import BatchSink, ProgressLog, wait_for_failure
from test_polling_source import assert_delivered_exactly, numbered

SHARD = "shardId-000000000000"
# Between the records that expire and those kept: wider than the emulator's arrival-time precision and clock steps.
GAP_S = 1.5


@pytest.mark.parametrize("fail_on_data_loss", [True, False], ids=["failOnDataLoss", "no-failOnDataLoss"])
def test_a_query_resuming_after_expired_records(fail_on_data_loss, kinesis, stream, read_kinesis, sink, proxy):
    name = stream(1)
    read = kinesis.put_records(name, numbered(40, prefix="read"))
    account = proxy()
    options = {"endpoint": account.endpoint, "initialPosition": "trim_horizon",
               "failOnDataLoss": str(fail_on_data_loss).lower()}
    query = sink.start(read_kinesis(name, **options))
    sink.wait_for_rows(query, 40)
    query.stop()

    kinesis.put_records(name, numbered(30, prefix="expired"))
    time.sleep(GAP_S)
    horizon_ms = time.time() * 1000
    time.sleep(GAP_S)
    kept = kinesis.put_records(name, numbered(25, prefix="kept"))
    account.set_limits(trim_horizon_ms=horizon_ms)

    query = sink.start(read_kinesis(name, **options))
    if fail_on_data_loss:
        message = wait_for_failure(query, timeout_s=90)
        last_read = read[-1].sequence_number
        for part in (f"'{name}'", SHARD, last_read, "failOnDataLoss"):
            assert part in message, f"{part!r} not in the error: {message[:2000]}"
        return
    progress = ProgressLog(query)
    records = sink.wait_for_rows(query, 40 + 25, on_poll=progress.poll)
    assert not [r for r in records if r.data.startswith(b"expired")], "an expired record was read"
    assert_delivered_exactly([r for r in records if r.data.startswith(b"kept")], kept, name)
    assert max(progress.metric("dataLossEvents")) == 1
    assert account.operation_stats("GetRecords")["trimmed_records"] > 0, "the proxy trimmed nothing"



# TestSettings.RetentionMs: the stream's retention as the connector takes it, in place of what DescribeStreamSummary
# says (24 hours at the least on AWS; here the limits proxy's retention_s plays it in seconds).
RETENTION_CONF = "spark.kinesisspark.test.retentionMs"
RETENTION_S = 20
EXPIRED_RECORDS = 250


@pytest.mark.parametrize("fail_on_data_loss", [True, False], ids=["failOnDataLoss", "no-failOnDataLoss"])
def test_retention_overtaking_a_running_query(fail_on_data_loss, kinesis, stream, spark, proxy, cluster_job, tmp_path):
    """A running query lags (every GetRecords call takes 1 s and returns 4 records) when retention (20 s, played by
    the proxy) takes every record it has not read, past the one its reader's iterator points at, so nothing is
    left after the record it read last until new records come: its last response (full) said records followed. With
    ``failOnDataLoss`` it fails naming the stream and the shard; without it, it counts one loss and delivers, once
    each, the expired records it had read (the first ones) and every record put after. Reproduced before the fix:
    the reader went on with the iterator it held, from the oldest record left, and the loss went unreported either
    way."""
    name = stream(1)
    # More than the query reads before retention takes them (4 a second) even when a slow machine starts it 30 s
    # after the put; and few enough that, once caught up, it passes the gap they leave in about 20 s.
    expired = kinesis.put_records(name, numbered(EXPIRED_RECORDS, prefix="expired"))
    put_at = time.monotonic()
    account = proxy(delays_s={"GetRecords": 1.0})
    options = source_options(account.endpoint, name, maxRecordsPerFetch="4",
                             failOnDataLoss=str(fail_on_data_loss).lower())
    root = tmp_path / "job"
    job = cluster_job(root, options, conf={RETENTION_CONF: str(RETENTION_S * 1000)}).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    time.sleep(max(0.0, put_at + RETENTION_S + 1 - time.monotonic()))
    # Retention takes every expired record, all older than RETENTION_S now. A fixed horizon: a moving one would take
    # the records put next too, before the query reads its way past the gap.
    account.set_limits(trim_horizon_ms=time.time() * 1000)
    read_in_time = sum(p["numInputRows"] for p in job.progress())
    # The reader's next call finds its last record gone and nothing after it (the records put next come only once
    # it has: before the fix, that went by as "nothing left to lose").
    deadline = time.monotonic() + 30
    while account.operation_stats("GetRecords")["trimmed_records"] == 0:
        assert time.monotonic() < deadline, "the reader made no call since the trim"
        time.sleep(0.1)
    account.set_limits(delays_s={})  # the query catches up
    kept = kinesis.put_records(name, numbered(25, prefix="kept"))
    if fail_on_data_loss:
        message = job.wait_event(lambda e: e["event"] == "failed", timeout_s=90)["message"]
        for part in (f"'{name}'", SHARD, "failOnDataLoss"):
            assert part in message, f"{part!r} not in the error: {message[:2000]}"
        return
    job.wait_progress(lambda p: sum(x["numInputRows"] for x in job.progress()) >= read_in_time + len(kept))
    time.sleep(3)  # a record delivered twice would show by now
    stopped = job.stop()
    assert stopped is not None, f"the job did not stop cleanly:\n{job.stderr_tail()}"
    records = BatchSink(spark, root).records()
    read = sorted(int(r.data.split(b"-")[1]) for r in records if r.data.startswith(b"expired"))
    assert read == list(range(len(read))), f"expired records read out of order or twice: {read[:40]}"
    assert read_in_time <= len(read) < len(expired), (read_in_time, len(read))
    assert_delivered_exactly([r for r in records if r.data.startswith(b"kept")], kept, name)
    losses = [int(p["sources"][0]["metrics"]["dataLossEvents"]) for p in job.progress()]
    assert max(losses) == 1, losses
