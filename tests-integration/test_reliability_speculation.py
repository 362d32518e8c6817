"""Speculative execution on a Spark standalone cluster: copies of slow tasks deliver nothing twice.

A batch's offsets are fixed by the driver before its tasks run and every task reads a fixed range (see the
architecture's "deterministic replay"), so a speculative copy of a task must return the same records as the
original, and whichever attempt finishes first is the one whose output is committed.

Spark never starts a speculative copy on a host that already runs an attempt of the task, so the test runs on a
standalone cluster with one single-core worker on 127.0.0.1 and one on 127.0.0.2 (see
:mod:`harness.standalone`), not on ``local-cluster``. The rows of one shard are slow on the first host only: a
task of that shard that lands there is overtaken by a copy on the second host, which finishes first, and the
original is killed. The event log proves it happened.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness.cluster_job import SLOW_MS_ENV
from harness.event_log import TaskEnd, task_ends
from harness.producer import KeyedProducer, assert_per_key_order
from harness.reliability import finish, record, source_options
from harness.standalone import StandaloneCluster

pytestmark = pytest.mark.reliability

SLOW_HOST, FAST_HOST = "127.0.0.1", "127.0.0.2"
SLOW_SHARD = "shardId-000000000000"
SPECULATION_WAIT_S = 240.0
# Speculate early and on small stages: a batch has one task per shard, and the slow one is the only one left
# once the others are done. Locality is not waited for, so the slow shard's task lands on either host.
SPECULATION = {
    "spark.speculation": "true",
    "spark.speculation.interval": "100ms",
    "spark.speculation.multiplier": "2",
    "spark.speculation.quantile": "0.5",
    "spark.speculation.minTaskRuntime": "500ms",
    # Judge tasks by duration alone (the efficiency check would also weigh records read per second).
    "spark.speculation.efficiency.enabled": "false",
    "spark.locality.wait": "0s",
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
}


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[StandaloneCluster]:
    """The two-host cluster; requested before ``cluster_job``, so it stops after the job does."""
    with StandaloneCluster(tmp_path / "cluster", {FAST_HOST: {SLOW_MS_ENV: "0"}}, memory="768m") as cluster:
        yield cluster


def speculative_wins(events: Path) -> list[TaskEnd]:
    return [t for t in task_ends(events) if t.speculative and t.reason == "Success"]


def test_speculative_copies_of_slow_tasks_deliver_exactly_once(
    kinesis, emulator, stream, spark, tmp_path, standalone, cluster_job
):
    name = stream(4)
    events = tmp_path / "events"
    events.mkdir()
    conf = {
        **SPECULATION,
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        "spark.eventLog.compress": "false",
    }
    # One task per shard (no coalescing of small blocks), and one shard per prefetch task.
    options = source_options(emulator.endpoint, name, coalesceThresholdBlockSize="1", shardsPerTask="1")
    producer = KeyedProducer(emulator.endpoint, name).start()
    # Batches of a few hundred rows per shard: on the slow host the slow shard's task takes ~50 ms a row, long
    # after the others are done, so its copy on the other host (no sleep there) finishes well before it.
    job = cluster_job(
        tmp_path / "job", options, conf=conf, master=standalone.url, trigger_s=3, slow_shard=SLOW_SHARD, slow_ms=50
    ).start()
    job.wait_progress(lambda p: p["numInputRows"] > 0)
    deadline = time.monotonic() + SPECULATION_WAIT_S
    while not speculative_wins(events):
        assert time.monotonic() < deadline, (
            f"no speculative attempt finished first within {SPECULATION_WAIT_S:.0f} s; speculative attempts: "
            f"{[t for t in task_ends(events) if t.speculative]}"
        )
        assert job.process is not None and job.process.poll() is None, f"the job ended:\n{job.stderr_tail()}"
        time.sleep(2)
    producer.wait_rounds(20)
    rows, puts, delivery = finish(job, producer, kinesis, name, spark, tmp_path / "job")

    ends = task_ends(events)
    speculative = [t for t in ends if t.speculative]
    won = [t for t in speculative if t.reason == "Success"]
    overtaken = [
        t for t in ends
        if not t.speculative and t.reason == "TaskKilled" and any((w.stage, w.index) == (t.stage, t.index) for w in won)
    ]
    # The slow shard's copies win on the fast host. A copy may also win elsewhere when an original was slow for
    # another reason (a JVM's first tasks load classes): speculation doing its job, not a failure.
    assert any(t.host == FAST_HOST for t in won), f"no speculative copy won on the fast host: {won}"
    assert overtaken, f"no original attempt was killed after its copy finished: {ends}"
    record(
        f"speculation on (one slow host of two, {SPECULATION['spark.speculation.multiplier']}x the median)",
        f"{len(speculative)} speculative attempts; {len(won)} finished first, their originals killed "
        f"({len(overtaken)})",
        delivery,
        None,
    )
    delivery.assert_exactly_once()
    assert_per_key_order(rows, puts)
