"""Where a batch's tasks read their blocks, on a Spark local cluster of two executor JVMs.

Prefetched records stay on the executor whose task fetched them. When the blocks are small, the source packs the
slices of several shards into one partition (``coalesceThresholdBlockSize``); the partition prefers the executor that
holds most of its bytes, so any slice whose blocks live on the other executor is read over the network. The source
counts both kinds of read (``blockReadsLocal``, ``blockReadsRemote``).
"""

from __future__ import annotations

import time

from harness.cluster import SPARK_WORK
from harness.producer import KeyedProducer
from harness.reliability import source_options

MIN_READS = 60


def block_reads(progress: dict) -> tuple[int, int]:
    metrics = progress["sources"][0]["metrics"]
    return int(metrics.get("blockReadsLocal", 0)), int(metrics.get("blockReadsRemote", 0))


def test_packed_partitions_read_their_blocks_on_the_executor_that_holds_them(emulator, stream, tmp_path, cluster_job):
    name = stream(8)
    producer = KeyedProducer(emulator.endpoint, name, interval_s=0.2).start()
    # Every block counts as small, so every batch is packed; a task per shard spreads the blocks over both executors.
    options = source_options(emulator.endpoint, name, coalesceThresholdBlockSize="1000000000", shardsPerTask="1",
                             maxFetchDuration="1s")
    # What is checked is how partitions are packed, not how soon Spark gives up waiting for the preferred executor
    # (3 s by default): both executors are on one host, so a task that waited longer would run on the other one.
    job = cluster_job(tmp_path / "job", options, conf={"spark.locality.wait": "30s"}, trigger_s=2).start()
    try:
        deadline = time.monotonic() + 240
        while True:
            reports = job.progress()
            local, remote = block_reads(reports[-1]) if reports else (0, 0)
            if local + remote >= MIN_READS:
                break
            assert time.monotonic() < deadline, f"only {local + remote} block reads after 240 s: {job.stderr_tail()}"
            time.sleep(1.0)
    finally:
        producer.stop()
    # Executors log each block they store (MemoryStore, INFO); a replaced executor would add a third directory.
    holders = [d.name for d in sorted((SPARK_WORK / job.app_id).iterdir())
               if (d / "stderr").exists() and "MemoryStore: Block input-" in (d / "stderr").read_text(errors="replace")]
    assert len(holders) >= 2, f"blocks were stored on executors {holders} only: the test needs both"
    assert local / (local + remote) >= 0.9, f"{local} local and {remote} remote block reads"
