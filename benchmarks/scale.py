"""Scale: one polling query over 10, 100 and 1,000 shards of ferrokinesis, and its cost per shard and batch.

The measurement of issue 17 ("Scale and speed: thousands of shards per query, measured on a fast Kinesis").
ferrokinesis (dev/ferrokinesis) holds thousands of shards and serves them faster than a Spark JVM on two
cores reads them, so what grows with the shard count here is the connector's and Spark's work.

For every shard count (``--shards``):

1. a stream of that many shards is created and pre-filled with ``--records-per-shard`` records of
   ``--record-size`` bytes, by PutRecords from ``--fill-threads`` threads (timed apart: not the connector);
2. a query with the connector's default options (``--option`` adds more) reads it from trim_horizon into
   the ``noop`` sink until every record has been through a batch. Then ``--tail-records`` records are put one
   at a time, each read in a batch of its own. Spark commits a batch to its source only when it plans the next
   one: the first tail batch's commit frees the backlog's prefetched blocks before the heap is measured. The
   tail batches plan over every shard of a query that has run a while: what the driver spends per batch from
   then on, without the first two batches' one-off costs (the query's start, code run over every shard for the
   first time); the first tail batch also releases the backlog's blocks;
3. each batch's progress report gives Spark's durations and rows, and the connector's metrics: the
   driver's time in ``latestOffset``, ``planInputPartitions`` and ``commit`` (``driver*Ms``, the latest
   call of each), the consumed offset's JSON size (``offsetBytes``), the blocks the latest prefetch round
   stored (``lastRoundBlocks``, one block-manager RPC each). Each batch's offset log file in the checkpoint
   is measured on disk;
4. memory: the Spark JVM's used heap (local mode: the executors live in it) after a GC before the query,
   its peak sampled every 100 ms while the query reads, and after a GC once the backlog is committed, the
   query still running (what it keeps per shard). CPU: of the Spark JVM and of ferrokinesis, from
   ``start()`` to the batch that completed the backlog.

The connector's newer metrics (``driver*Ms``, ``offsetBytes``, ``lastRoundBlocks``, ``lastRoundMs``) print as
"-" with a jar that does not report them. ferrokinesis answers ListShards with every shard whatever its
``ShardFilter``, so each of the query's listings (one per ``shardFetchInterval``) returns the whole stream.

    .venv/bin/python benchmarks/scale.py            # 10, 100 and 1,000 shards: 2 to 3 minutes on 2 cores
    .venv/bin/python benchmarks/scale.py --quick    # 10 and 100 shards, fewer records: about a minute

Prints Markdown tables and writes them to benchmarks/scale_results.md (--output). The connector jar is
harness.spark.connector_jar()'s (KINESIS_SPARK_JAR overrides), copied first: the build may replace it.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests-integration"))

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY  # noqa: E402
from harness.ferrokinesis import JVM_OPTIONS, FerroKinesis  # noqa: E402
from harness.kinesis import PUT_RECORDS_LIMIT, Kinesis, boto_client  # noqa: E402
from harness.spark import connector_jar, local_spark  # noqa: E402
from read_throughput import write_results  # noqa: E402

DRIVER_CALLS = ("driverLatestOffsetMs", "driverPlanInputPartitionsMs", "driverCommitMs")
# The CPU the query thread used in each of those calls: where it is far below the wall time, the call waited for a
# core (local mode: the executors, their fetch threads and ferrokinesis share the same two).
DRIVER_CPU_CALLS = ("driverLatestOffsetCpuMs", "driverPlanInputPartitionsCpuMs", "driverCommitCpuMs")
HEAP_SAMPLE_S = 0.1
POLL_S = 0.2
PUT_ATTEMPTS = 10
# The connector lists shards in pages of maxShardsPerDescribe (1,000 by default), and ferrokinesis answers
# a second page ResourceNotFound (harness/ferrokinesis.py): a larger stream is listed in one page.
LISTING_PAGE_DEFAULT = 1_000
LISTING_PAGE_MAX = 10_000


@dataclass
class Batch:
    """One micro-batch, as its progress report and the checkpoint's offset log describe it."""

    batch_id: int
    rows: int
    durations_ms: dict[str, int]
    metrics: dict[str, str]
    ended_at: float  # epoch seconds: the trigger's start plus its triggerExecution
    offset_file_bytes: int | None = None
    tail: bool = False  # a batch of one of the records put one at a time after the backlog

    def metric(self, name: str) -> float | None:
        """Return a connector metric as a number, or None when the jar does not report it."""
        try:
            return float(self.metrics[name])
        except (KeyError, ValueError):
            return None

    @property
    def driver_ms(self) -> float | None:
        """The driver's time in the source for this batch: latestOffset + planInputPartitions + commit.

        The first batch has no commit before it; a jar without these metrics has none of them (None).
        """
        return self._sum(DRIVER_CALLS)

    @property
    def driver_cpu_ms(self) -> float | None:
        """The CPU the query thread used in those three calls (None with a jar that does not report it)."""
        return self._sum(DRIVER_CPU_CALLS)

    def _sum(self, names: Sequence[str]) -> float | None:
        parts = [v for v in map(self.metric, names) if v is not None]
        return sum(parts) if parts else None


@dataclass(frozen=True)
class Round:
    """One prefetch round: the blocks it stored (one block-manager RPC each) and how long it took."""

    blocks: int
    ms: int


@dataclass
class Case:
    """What one shard count measured."""

    shards: int
    records: int = 0
    record_size: int = 0
    fill_s: float | None = None
    read_s: float | None = None
    batches: list[Batch] = field(default_factory=list)
    heap_base: int | None = None
    heap_peak: int | None = None
    heap_kept: int | None = None
    spark_cpu_s: float | None = None
    emulator_cpu_s: float | None = None
    rounds: dict[int, Round] = field(default_factory=dict)
    backlog_rounds: int | None = None  # fetchRounds when the backlog's last batch reported
    errors: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        """Records per second of the backlog read."""
        return None if not self.read_s else self.records / self.read_s

    def per_batch(self, value: Callable[[Batch], float | None]) -> list[float]:
        """Return ``value`` of every batch that has it."""
        return [v for v in map(value, self.batches) if v is not None]

    @property
    def kept(self) -> int | None:
        """Bytes of heap kept above the base before the query."""
        return None if self.heap_kept is None or self.heap_base is None else self.heap_kept - self.heap_base

    def heap_text(self, heap: int | None) -> str:
        """Return the heap above the base before the query: MiB, and KiB per shard."""
        if heap is None or self.heap_base is None:
            return "-"
        above = heap - self.heap_base
        return f"{above / 2**20:,.1f} ({above / self.shards / 1024:,.1f})"


# ------------------------------------------------------------------------------------------------------
# Processes


def cpu_seconds(pid: int) -> float:
    """Return a process's user and system CPU time so far (``/proc/<pid>/stat``, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class HeapSampler:
    """The Spark JVM's used heap, through its MemoryMXBean: after a GC, or its peak sampled in a thread."""

    def __init__(self, spark: Any) -> None:
        jvm = spark.sparkContext._jvm
        self._memory = jvm.java.lang.management.ManagementFactory.getMemoryMXBean()
        self._system = jvm.java.lang.System
        self.pid = int(jvm.java.lang.ProcessHandle.current().pid())
        self.peak = 0
        self._stop = threading.Event()

    def used(self) -> int:
        """Return the used heap now, in bytes."""
        return int(self._memory.getHeapMemoryUsage().getUsed())

    def after_gc(self) -> int:
        """Return the used heap after a full collection, in bytes."""
        # Twice: what the first collection finalizes and enqueues is freed by the second.
        self._system.gc()
        self._system.gc()
        time.sleep(0.2)
        return self.used()

    @contextlib.contextmanager
    def sampling(self) -> Iterator[None]:
        """Keep ``peak`` at the most used heap seen, every 100 ms, within the block."""
        self.peak = self.used()
        self._stop.clear()
        thread = threading.Thread(target=self._run, name="heap-sampler", daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(HEAP_SAMPLE_S):
            try:
                self.peak = max(self.peak, self.used())
            except Exception:  # the JVM is going away; the peak so far stands
                return


# ------------------------------------------------------------------------------------------------------
# The stream


def fill(endpoint: str, stream: str, hash_keys: list[str], per_shard: int, size: int, threads: int) -> float:
    """Put ``per_shard`` records of ``size`` bytes into every shard, round robin; return the seconds taken.

    Each record names its shard's starting hash key (``ExplicitHashKey``). Calls of 500 records from
    ``threads`` threads, each with its own client: boto3 spends most of a call in Python, so the threads
    overlap one call's serialization with another's wait for the emulator.
    """
    total = per_shard * len(hash_keys)
    starts = iter(range(0, total, PUT_RECORDS_LIMIT))
    lock = threading.Lock()

    def put_calls(client: Any) -> None:
        while True:
            with lock:
                start = next(starts, None)
            if start is None:
                return
            entries = [
                {
                    "PartitionKey": "k",
                    "ExplicitHashKey": hash_keys[i % len(hash_keys)],
                    "Data": (b"%010d" % i).ljust(size, b"."),
                }
                for i in range(start, min(start + PUT_RECORDS_LIMIT, total))
            ]
            put_entries(client, stream, entries)

    # Made here: boto3's default session does not make clients safely from several threads at once.
    clients = [boto_client(endpoint) for _ in range(threads)]
    try:
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            for future in [pool.submit(put_calls, client) for client in clients]:
                future.result()
        return time.perf_counter() - started
    finally:
        for client in clients:
            client.close()


def put_entries(client: Any, stream: str, entries: list[dict[str, Any]]) -> None:
    """Put entries with PutRecords, again for those a call refused, until all are stored."""
    for attempt in range(PUT_ATTEMPTS):
        response = client.put_records(StreamName=stream, Records=entries)
        if not response.get("FailedRecordCount"):
            return
        entries = [e for e, r in zip(entries, response["Records"], strict=True) if "ErrorCode" in r]
        time.sleep(min(0.1 * 2**attempt, 2.0))
    raise RuntimeError(f"{len(entries)} records to {stream} still refused after {PUT_ATTEMPTS} attempts")


# ------------------------------------------------------------------------------------------------------
# The query


def start_query(
    spark: Any, endpoint: str, stream: str, shards: int, options: dict[str, str], checkpoint: Path
) -> Any:
    """Start a query that reads the stream from trim_horizon into the ``noop`` sink."""
    reader = (
        spark.readStream.format("kinesis")
        .option("streamName", stream)
        .option("region", REGION)
        .option("endpoint", endpoint)
        .option("awsAccessKey", ACCESS_KEY)
        .option("awsSecretKey", SECRET_KEY)
        .option("initialPosition", "trim_horizon")
    )
    if shards > LISTING_PAGE_DEFAULT:
        reader = reader.option("maxShardsPerDescribe", str(min(shards, LISTING_PAGE_MAX)))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load().writeStream.format("noop").option("checkpointLocation", str(checkpoint)).start()


def epoch_seconds(timestamp: str) -> float:
    """Return a progress report's timestamp (``2026-11-25T16:27:13.123Z``) in epoch seconds."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def as_batch(progress: Any) -> Batch | None:
    """Return the batch a progress report describes; None for a trigger that found nothing to read."""
    # A dict (PySpark 3.5) or a dict subclass (4.x); both are indexed by the progress JSON's names.
    durations = {k: int(v) for k, v in (progress["durationMs"] or {}).items()}
    if "addBatch" not in durations:
        return None
    sources = progress["sources"] or [{"metrics": {}}]
    return Batch(
        batch_id=int(progress["batchId"]),
        rows=int(progress["numInputRows"] or 0),
        durations_ms=durations,
        metrics={k: str(v) for k, v in (sources[0]["metrics"] or {}).items()},
        ended_at=epoch_seconds(progress["timestamp"]) + durations.get("triggerExecution", 0) / 1000,
    )


class RoundLog:
    """The prefetch rounds a query's source reported, by number (its ``fetchRounds`` count).

    A progress report shows only the latest round, and rounds run while batches do, so most go unreported:
    the source's gauges in Spark's metrics system (``kinesis.source.<query id>``, a fresh snapshot at most
    once a second) are read between reports as well. Rounds shorter than a second may still be missed.
    """

    def __init__(self, spark: Any, query_id: str) -> None:
        self._metrics = spark.sparkContext._jvm.org.apache.spark.SparkEnv.get().metricsSystem()
        self._source = f"kinesis.source.{query_id}"
        self.rounds: dict[int, Round] = {}

    def note(self, values: dict[str, float | None]) -> None:
        """Note the latest round, from the source's fetchRounds, lastRoundBlocks and lastRoundMs."""
        number, blocks, ms = (values.get(k) for k in ("fetchRounds", "lastRoundBlocks", "lastRoundMs"))
        if number is None or blocks is None or ms is None or math.isnan(number + blocks + ms) or not number:
            return  # a jar without these metrics, or no round yet
        self.rounds.setdefault(int(number), Round(int(blocks), int(ms)))

    def poll(self) -> None:
        """Note the latest round from the source's gauges, if the jar registers them."""
        sources = self._metrics.getSourcesByName(self._source)
        if sources.isEmpty():
            return
        gauges = sources.head().metricRegistry().getGauges()
        names = ("fetchRounds", "lastRoundBlocks", "lastRoundMs")
        self.note({n: None if gauges.get(n) is None else float(gauges.get(n).getValue()) for n in names})


class BatchLog:
    """A query's batches by id.

    Taken from ``lastProgress`` while the query runs, and from ``recentProgress`` when a poll finds batches
    missed: each report carries three offsets of the whole stream, too much to fetch every poll.
    """

    def __init__(self, query: Any, rounds: RoundLog) -> None:
        self.query = query
        self.rounds = rounds
        self.batches: dict[int, Batch] = {}

    @property
    def rows(self) -> int:
        """Rows of the batches seen so far."""
        return sum(b.rows for b in self.batches.values())

    def poll(self) -> None:
        """Add the latest batch, and the ones before it that ended since the previous poll; note rounds."""
        self.rounds.poll()
        progress = self.query.lastProgress
        batch = None if progress is None else as_batch(progress)
        if batch is None:
            return
        if batch.batch_id > max(self.batches, default=-1) + 1:
            self.collect()
        self.batches.setdefault(batch.batch_id, batch)

    def collect(self) -> None:
        """Add every batch Spark still reports (the latest 100)."""
        for progress in self.query.recentProgress or []:
            batch = as_batch(progress)
            if batch is not None:
                self.batches.setdefault(batch.batch_id, batch)

    def wait_for_rows(self, rows: int, timeout_s: float, what: str) -> Batch:
        """Poll until the batches hold ``rows`` rows; return the batch that completed them."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.poll()
            total = 0
            for batch in sorted(self.batches.values(), key=lambda b: b.batch_id):
                total += batch.rows
                if total >= rows:
                    return batch
            error = self.query.exception()
            if error is not None:
                raise RuntimeError(f"the query failed during {what}: {str(error)[:500]}")
            if not self.query.isActive:
                raise RuntimeError(f"the query stopped during {what}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: {self.rows:,} of {rows:,} rows after {timeout_s:.0f} s")
            time.sleep(POLL_S)


def note_offset_files(batches: list[Batch], checkpoint: Path) -> None:
    """Note each batch's offset log entry size (``offsets/<id>``: Spark's metadata, the source's offset)."""
    for batch in batches:
        with contextlib.suppress(OSError):  # Spark deletes entries beyond minBatchesToRetain (100)
            batch.offset_file_bytes = (checkpoint / "offsets" / str(batch.batch_id)).stat().st_size


@dataclass
class Bench:
    """What every case needs: the run's arguments and the running processes."""

    args: argparse.Namespace
    spark: Any
    kinesis: Kinesis
    endpoint: str
    heap: HeapSampler
    spark_pid: int
    emulator_pid: int
    work: Path


def run_case(bench: Bench, case: Case, per_shard: int, tails: int) -> None:
    """Create and fill a stream of ``case.shards`` shards, read it with a query, note what it cost.

    Then ``tails`` records are put one at a time, each once the one before was read: the first tail batch commits
    the backlog's (the heap kept is measured after it), and every tail batch plans over all the shards of a query
    that has run a while, which is what the driver spends per batch from then on.
    """
    args = bench.args
    stream = f"scale-{case.shards}-{uuid.uuid4().hex[:6]}"
    checkpoint = bench.work / f"checkpoint-{stream}"
    case.records, case.record_size = case.shards * per_shard, args.record_size
    bench.kinesis.create_stream(stream, case.shards)
    query = None
    try:
        hash_keys = [s["HashKeyRange"]["StartingHashKey"] for s in bench.kinesis.shards(stream)]
        case.fill_s = fill(bench.endpoint, stream, hash_keys, per_shard, args.record_size, args.fill_threads)
        print(f"  filled {case.records:,} records in {case.fill_s:.1f} s", flush=True)

        case.heap_base = bench.heap.after_gc()
        spark_cpu, emulator_cpu = cpu_seconds(bench.spark_pid), cpu_seconds(bench.emulator_pid)
        started = time.time()
        with bench.heap.sampling():
            query = start_query(bench.spark, bench.endpoint, stream, case.shards, args.options, checkpoint)
            log = BatchLog(query, RoundLog(bench.spark, str(query.id)))
            timeout_s = args.timeout or max(120.0, case.records / 5_000)
            done = log.wait_for_rows(case.records, timeout_s, "the backlog")
        case.spark_cpu_s = cpu_seconds(bench.spark_pid) - spark_cpu
        case.emulator_cpu_s = cpu_seconds(bench.emulator_pid) - emulator_cpu
        case.heap_peak = bench.heap.peak
        case.read_s = done.ended_at - started
        rounds = done.metric("fetchRounds")
        case.backlog_rounds = None if rounds is None else int(rounds)

        for i in range(tails):
            tail = {"PartitionKey": f"tail-{i}", "Data": b"tail".ljust(args.record_size, b".")}
            put_entries(bench.kinesis.client, stream, [tail])
            log.wait_for_rows(case.records + i + 1, 120.0, f"tail record {i + 1}").tail = True
            if i == 0:
                case.heap_kept = bench.heap.after_gc()
        log.collect()
        case.batches = sorted(log.batches.values(), key=lambda b: b.batch_id)
        for batch in case.batches:
            log.rounds.note({k: batch.metric(k) for k in ("fetchRounds", "lastRoundBlocks", "lastRoundMs")})
        case.rounds = dict(sorted(log.rounds.rounds.items()))
        note_offset_files(case.batches, checkpoint)
        if log.rows != case.records + tails:
            case.errors.append(f"read {log.rows:,} rows, expected {case.records + tails:,}")
    except Exception as error:  # keep going: the table says what failed
        case.errors.append(f"{type(error).__name__}: {str(error).splitlines()[0][:300]}")
        traceback.print_exc()
    finally:
        if query is not None:
            with contextlib.suppress(Exception):  # already stopped or failed
                query.stop()
        with contextlib.suppress(Exception):
            bench.kinesis.delete_stream(stream)
        shutil.rmtree(checkpoint, ignore_errors=True)


def warm_up(bench: Bench) -> None:
    """Read a small stream first: class loading and the JIT's first work are not charged to a case."""
    started = time.perf_counter()
    case = Case(4)
    run_case(bench, case, 100, tails=1)
    if case.errors:
        raise RuntimeError(f"the warm-up read failed: {case.errors}")
    print(f"warm-up read took {time.perf_counter() - started:.1f} s", flush=True)


# ------------------------------------------------------------------------------------------------------
# Report


def fmt(value: float | None, digits: int = 0) -> str:
    """Format a number with thousands separators; "-" for None."""
    return "-" if value is None else f"{value:,.{digits}f}"


def median(values: Sequence[float]) -> float | None:
    """Return the median, or None of nothing."""
    return statistics.median(values) if values else None


def row(cells: list[str]) -> str:
    """Return a Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def summary_table(cases: list[Case]) -> str:
    """Return the table of one row per shard count."""
    header = [
        "shards",
        "records",
        "fill rec/s",
        "read s",
        "rec/s",
        "MB/s",
        "batches",
        "driver ms/batch median (max)",
        "driver CPU ms/batch median (max)",
        "tail batches: driver ms median (max)",
        "offset file bytes (per shard)",
        "offsetBytes",
        "blocks/round median (max)",
        "heap MB peak (KB/shard)",
        "heap MB kept (KB/shard)",
        "Spark CPU s per M records",
        "ferrokinesis CPU s",
    ]
    lines = [row(header), row(["---"] * len(header))]
    for c in cases:
        driver = c.per_batch(lambda b: b.driver_ms)
        driver_cpu = c.per_batch(lambda b: b.driver_cpu_ms)
        steady = [v for v in (b.driver_ms for b in c.batches if b.tail) if v is not None]
        files = c.per_batch(lambda b: b.offset_file_bytes)
        offset_metric = c.per_batch(lambda b: b.metric("offsetBytes"))
        # The backlog's rounds that stored any: neither those that found the shards caught up, nor the tail's.
        blocks = [r.blocks for n, r in c.rounds.items() if r.blocks > 0 and n <= (c.backlog_rounds or 0)]
        cells = [
            f"{c.shards:,}",
            f"{c.records:,}",
            fmt(c.records / c.fill_s if c.fill_s else None),
            fmt(c.read_s, 1),
            fmt(c.rate),
            fmt(None if c.rate is None else c.rate * c.record_size / 1e6, 2),
            str(len(c.batches)),
            f"{median(driver):,.1f} ({max(driver):,.1f})" if driver else "-",
            f"{median(driver_cpu):,.1f} ({max(driver_cpu):,.1f})" if driver_cpu else "-",
            f"{median(steady):,.1f} ({max(steady):,.1f})" if steady else "-",
            f"{files[-1]:,.0f} ({files[-1] / c.shards:,.1f})" if files else "-",
            fmt(offset_metric[-1] if offset_metric else None),
            f"{fmt(median(blocks))} ({fmt(max(blocks))})" if blocks else "-",
            c.heap_text(c.heap_peak),
            c.heap_text(c.heap_kept),
            fmt(c.spark_cpu_s / c.records * 1e6 if c.spark_cpu_s is not None and c.records else None, 1),
            fmt(c.emulator_cpu_s, 1),
        ]
        if c.errors:
            cells[4] += " ⚠"
        lines.append(row(cells))
    return "\n".join(lines)


def batch_table(case: Case, limit: int) -> str:
    """Return the table of one row per batch: the first and last ``limit / 2`` of them."""
    header = [
        "batch",
        "rows",
        "trigger ms",
        "addBatch ms",
        "latestOffset ms",
        "planInputPartitions ms",
        "commit ms",
        "driver CPU ms",
        "offsetBytes",
        "offset file bytes",
        "fetchRounds",
        "lastRoundBlocks",
        "lastRoundMs",
        "activeShards",
        "bufferedBytes",
    ]
    lines = [row(header), row(["---"] * len(header))]
    batches: list[Batch | None] = list(case.batches)
    if len(batches) > limit:
        half = limit // 2
        batches = [*case.batches[:half], None, *case.batches[-half:]]
    for b in batches:
        if b is None:
            lines.append(row([f"… {len(case.batches) - 2 * (limit // 2)} more", *[""] * (len(header) - 1)]))
            continue
        cells = [
            f"{b.batch_id}{' (tail)' if b.tail else ''}",
            f"{b.rows:,}",
            fmt(b.durations_ms.get("triggerExecution")),
            fmt(b.durations_ms.get("addBatch")),
            *(fmt(b.metric(name), 1) for name in DRIVER_CALLS),
            fmt(b.driver_cpu_ms, 1),
            fmt(b.metric("offsetBytes")),
            fmt(b.offset_file_bytes),
            fmt(b.metric("fetchRounds")),
            fmt(b.metric("lastRoundBlocks")),
            fmt(b.metric("lastRoundMs")),
            fmt(b.metric("activeShards")),
            fmt(b.metric("bufferedBytes")),
        ]
        lines.append(row(cells))
    return "\n".join(lines)


def rounds_line(case: Case, limit: int = 20) -> str:
    """Return the prefetch rounds seen: each one's blocks and milliseconds."""
    seen = [f"#{n}: {r.blocks:,} blocks, {r.ms:,} ms" for n, r in case.rounds.items()][:limit]
    more = len(case.rounds) - len(seen)
    return f"Prefetch rounds seen ({len(case.rounds)} of {max(case.rounds)}): {'; '.join(seen)}" + (
        f"; and {more} more." if more else "."
    )


def marginal_heap(cases: list[Case]) -> list[str]:
    """Return a line on the heap kept per shard added from a shard count to the next (fixed costs cancel)."""
    steps = [
        f"{a.shards:,} to {b.shards:,} shards: {(b.kept - a.kept) / (b.shards - a.shards) / 1024:,.1f} KB"
        for a, b in itertools.pairwise(cases)
        if a.kept is not None and b.kept is not None and b.shards != a.shards
    ]
    return [f"Heap kept per shard added: {'; '.join(steps)}.", ""] if steps else []


COLUMNS = [
    "- *fill rec/s*: the pre-fill with boto3 PutRecords (not the connector).",
    "- *read s*, *rec/s*, *MB/s*: from `start()` to the end of the batch that completed the backlog (the "
    "query's start, its shard listing and first prefetch round included); MB of record data.",
    "- *batches*: the batches that ran: the first fixes the start positions and reads nothing, the last "
    "`--tail-records` are the tail records', one each. *driver ms/batch*: per batch, the connector's "
    "`driverLatestOffsetMs` + `driverPlanInputPartitionsMs` + `driverCommitMs` (the latest call of each when the "
    "batch reported: the "
    "commit is the previous batch's), median and max over the batches. *driver CPU ms/batch*: the CPU the "
    "query thread used in those calls (`driver*CpuMs`); for the rest of the wall time it waited (for a core, "
    "a lock or the garbage collector). *tail batches*: the driver's time in the tail batches alone.",
    "- *offset file bytes*: the checkpoint's `offsets/<batch>` of the last batch (Spark's metadata and the "
    "source's offset JSON); *offsetBytes*: the connector's metric (the consumed offset's JSON), last batch.",
    "- *blocks/round*: `lastRoundBlocks` (blocks a prefetch round stored, one block-manager RPC each) of "
    "the backlog's rounds seen (in progress reports, and the source's gauges in Spark's metrics system read "
    "every 200 ms) that stored any: a round that finds every shard caught up stores none.",
    "- *heap*: the Spark JVM's used heap (local mode: driver and executors) above what it used after a GC "
    "before the query, in MB and per shard: *peak* sampled every 100 ms while the backlog was read "
    "(prefetched records included), *kept* after a GC once the backlog was committed, the query running. "
    "Kept includes what Spark's status store holds of the query's jobs (each prefetch round is one).",
    "- *Spark CPU s per M records*: the Spark JVM's CPU time from `start()` to the backlog's last batch, per "
    "million records; *ferrokinesis CPU s*: the emulator's over the same time. Both share the cores.",
]


def report(
    cases: list[Case], args: argparse.Namespace, notes: list[str], started: datetime, elapsed_s: float
) -> str:
    """Return the Markdown report: command, summary, column notes, and each shard count's batches."""
    options = ", ".join(f"`{k}={v}`" for k, v in args.options.items()) or "the connector's defaults"
    parts = [
        "# Scale: shards per query on ferrokinesis",
        "",
        f"`{' '.join(['benchmarks/scale.py', *sys.argv[1:]])}`",
        "",
        f"Run {started:%Y-%m-%d %H:%M} UTC, {elapsed_s / 60:.1f} min, on {os.cpu_count()} cores "
        f"({platform.machine()}, Python {platform.python_version()}); Spark `{args.master}`, driver memory "
        f"4g. Records of {args.record_size} bytes, {args.records_per_shard:,} per shard; options: {options}; "
        "sink `noop`.",
        "",
        summary_table(cases),
        "",
        *marginal_heap(cases),
        *COLUMNS,
        "",
        *notes,
    ]
    for case in cases:
        if case.batches:
            parts += ["", f"## {case.shards:,} shards: batches", "", batch_table(case, args.batch_rows)]
        if case.rounds:
            parts += ["", rounds_line(case)]
    problems = [f"- {c.shards} shards: {e}" for c in cases for e in c.errors]
    if problems:
        parts += ["", "Problems:", *problems]
    return "\n".join(parts) + "\n"


# ------------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line; ``--quick`` changes the defaults of --shards and --records-per-shard."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--shards", type=int, nargs="+", help="shard counts (10 100 1000; --quick: 10 100)")
    parser.add_argument("--records-per-shard", type=int, help="records put per shard (1500; --quick: 300)")
    parser.add_argument("--record-size", type=int, default=100, help="bytes per record (100)")
    parser.add_argument("--fill-threads", type=int, default=4, help="threads putting the pre-fill (4)")
    parser.add_argument("--master", default="local[2]", help="Spark master (local[2])")
    parser.add_argument("--timeout", type=float, help="seconds for a backlog read (default: from its size)")
    parser.add_argument("--batch-rows", type=int, default=30, help="most batches listed per shard count (30)")
    parser.add_argument(
        "--tail-records", type=int, default=10, help="records put one at a time after the backlog, a batch each (10)"
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a source option on top of the defaults (repeatable), e.g. maxRecordsPerTrigger=100000",
    )
    parser.add_argument("--quick", action="store_true", help="10 and 100 shards, 300 records per shard")
    parser.add_argument(
        "--output", default=str(REPO / "benchmarks" / "scale_results.md"), help="the report's file"
    )
    args = parser.parse_args(argv)
    args.shards = args.shards or ([10, 100] if args.quick else [10, 100, 1000])
    args.records_per_shard = args.records_per_shard or (300 if args.quick else 1_500)
    if args.tail_records < 1:
        parser.error(f"--tail-records {args.tail_records}: at least 1 (the first tail batch commits the backlog)")
    malformed = [o for o in args.option if "=" not in o]
    if malformed:
        parser.error(f"--option takes KEY=VALUE: {malformed}")
    args.options = dict(o.split("=", 1) for o in args.option)
    return args


def main(argv: list[str] | None = None) -> int:
    """Run every shard count, print the report and write it to ``--output``; 1 if a case failed."""
    args = parse_args(argv)
    started_at = datetime.now(timezone.utc)
    clock = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="kinesis-scale-"))
    source_jar = connector_jar()
    jar = work / "kinesis-spark-connector.jar"
    shutil.copy(source_jar, jar)
    built = datetime.fromtimestamp(source_jar.stat().st_mtime, timezone.utc)
    jar_line = f"Connector jar: {source_jar} (built {built:%Y-%m-%d %H:%M} UTC)."
    print(f"{jar_line} Work dir {work}", flush=True)
    notes = [f"- {jar_line}"]
    cases: list[Case] = []

    with FerroKinesis(log_path=work / "ferrokinesis.log") as emulator:
        kinesis = Kinesis(emulator.endpoint)
        conf = {
            "spark.driver.extraJavaOptions": JVM_OPTIONS,
            "spark.executor.extraJavaOptions": JVM_OPTIONS,
            "spark.driver.memory": "4g",
        }
        spark = local_spark("kinesis-spark-scale", jar=jar, master=args.master, conf=conf)
        spark.sparkContext.setLogLevel("ERROR")  # stopping queries logs harmless interruptions at WARN
        heap = HeapSampler(spark)
        bench = Bench(args, spark, kinesis, emulator.endpoint, heap, heap.pid, emulator.pid, work)
        try:
            warm_up(bench)
            for shards in args.shards:
                print(f"{shards:,} shards ...", flush=True)
                case = Case(shards)
                cases.append(case)
                run_case(bench, case, args.records_per_shard, args.tail_records)
                driver = median(case.per_batch(lambda b: b.driver_ms))
                driver_cpu = median(case.per_batch(lambda b: b.driver_cpu_ms))
                print(
                    f"  read in {fmt(case.read_s, 1)} s ({fmt(case.rate)} records/s), "
                    f"{len(case.batches)} batches, driver ms/batch median {fmt(driver, 1)} (CPU {fmt(driver_cpu, 1)})"
                    + (f"; problems: {case.errors}" if case.errors else ""),
                    flush=True,
                )
        finally:
            spark.stop()
            kinesis.close()

    text = report(cases, args, notes, started_at, time.monotonic() - clock)
    return write_results(text, args.output, any(c.errors for c in cases), work)


if __name__ == "__main__":
    sys.exit(main())
