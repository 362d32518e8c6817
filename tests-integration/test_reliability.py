"""Faults on a Spark local cluster (two executor JVMs): nothing lost and nothing repeated in the sink's committed
output, with a producer writing keyed, numbered records throughout.

Marked ``reliability`` (``pytest -m reliability`` runs only these; ``-m "not reliability"`` skips them); CI runs
them with the rest. Each test adds a row to ``target/test-reports/reliability.md`` (see :mod:`harness.reliability`):
the fault, what happened, records lost and duplicated, and the time from the fault until the query delivered records
again.
"""

from __future__ import annotations

import time

import pytest
from harness.producer import KeyedProducer, assert_per_key_order
from harness.reliability import delivered_after, finish, record, source_options

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("mode", ["polling", "efo"])
def test_executor_killed_while_holding_prefetched_blocks(kinesis, emulator, stream, spark, tmp_path, cluster_job, mode):
    """With ``efo`` the killed executors also held the subscriptions: new executors subscribe again."""
    name = stream(4)
    producer = KeyedProducer(emulator.endpoint, name).start()
    # A long trigger: between batches, the executors' prefetchers fill their buffers.
    options = source_options(emulator.endpoint, name, consumerMode=mode)
    job = cluster_job(tmp_path / "job", options, trigger_s=8).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    job.wait_progress(lambda p: float(p["sources"][0]["metrics"].get("bufferedRecords", 0)) > 0)
    time.sleep(3)  # the prefetchers keep adding blocks after the report
    killed_at = time.time()
    assert len(job.kill_executors()) == 2
    recovery = delivered_after(job, killed_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job")
    assert "is gone; re-reading" in job.executor_logs(), "no task had to re-read a lost block"
    record(f"both executor JVMs killed (SIGKILL) while holding prefetched blocks ({mode})",
           "blocks re-read from Kinesis by the next batch; query continued", delivery, recovery)
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)


def test_driver_killed_mid_batch_restarts_from_checkpoint(kinesis, emulator, stream, spark, tmp_path, cluster_job):
    name = stream(2)
    producer = KeyedProducer(emulator.endpoint, name).start()
    # Rows of one shard cost 20 ms each in their task, so a batch runs for seconds: the kill lands inside one.
    job = cluster_job(
        tmp_path / "job", source_options(emulator.endpoint, name), slow_shard="shardId-000000000000", slow_ms=20
    ).start()
    batch = job.wait_progress(lambda p: p["numInputRows"] > 100)
    time.sleep(1.0)
    killed_at = time.time()
    job.kill()
    # The kill fell inside a batch: one was planned (in the offset log) but not committed.
    checkpoint = tmp_path / "job" / "checkpoint"
    planned = max(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    committed = max(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    assert planned == committed + 1 and planned > batch["batchId"], (planned, committed, batch["batchId"])

    job.start()
    recovery = delivered_after(job, killed_at)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job")
    record("driver process group killed (SIGKILL) mid-batch, restarted from the checkpoint",
           f"batch {planned} ran again after the restart; query continued", delivery, recovery)
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)

