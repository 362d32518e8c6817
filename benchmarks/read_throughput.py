"""Read throughput, end-to-end latency and memory of the connector's polling source, against the local
Kinesis emulator directly and through the Kinesis limits proxy (tests-integration/harness/limits_proxy.py).

For every shard count, every option setting (the connector's defaults, and the Databricks low-latency
settings minFetchPeriod=210ms, maxFetchDuration=200ms) and both paths (emulator direct, limits proxy):

(a) ceiling: the emulator's raw read rate with plain boto3 clients (one per shard, at most 4 at once),
    measured in the same run on the same pre-filled stream, and shards x 2 MiB/s (Kinesis's read limit);
    the lower of the two. Both paths share it: the ceiling is what real Kinesis could give on this machine.
(b) throughput: a query reads the pre-filled stream from trim_horizon into a counting foreachBatch sink;
    records/s and MB/s from the query's start to the batch that completes the count, and as a share of (a);
    the best of --repeats (2) reads, each with a fresh checkpoint.
(c) latency: a producer puts timestamped records at a steady, modest rate into a fresh stream (directly to
    the emulator) while a query runs; foreachBatch computes now - put time for every record; p50 and p99.
(d) memory: the driver JVM's heap (local mode: the executors live in it), sampled every 100 ms through
    MemoryMXBean over (b) and (c), after a GC at the start of each setting; and the connector's largest
    ``bufferedBytes`` progress metric.

Through the proxy, its counters give the connector's GetRecords calls, how many were throttled, and the most
calls any shard got in one second.

The Spark session is the harness's local[2] one with a copy of the connector jar (the build may replace the
jar while this runs).

    .venv/bin/python benchmarks/read_throughput.py            # the default matrix: about 5-6 minutes
    .venv/bin/python benchmarks/read_throughput.py --quick    # 1 and 4 shards, less data: about 2 minutes

Prints a Markdown table and writes it to benchmarks/results.md (--output).
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import hashlib
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests-integration"))

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY, KinesisEmulator  # noqa: E402
from harness.kinesis import Kinesis, boto_client  # noqa: E402
from harness.limits_proxy import MIB, LimitsProxy  # noqa: E402
from harness.spark import connector_jar, local_spark  # noqa: E402

SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "low-latency": {"minFetchPeriod": "210ms", "maxFetchDuration": "200ms"},
}
PATHS = ("direct", "proxy")
KINESIS_READ_BYTES_PER_S = 2 * MIB  # per shard
CEILING_READERS = 4
CEILING_LIMIT = 1000
HEAP_SAMPLE_S = 0.1


@dataclass
class Row:
    shards: int
    setting: str
    path: str
    ceiling_records_s: float = 0.0
    ceiling_mb_s: float = 0.0
    records_s: float | None = None
    mb_s: float | None = None
    first_batch_s: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    latency_records: int = 0
    heap_peak_mb: float | None = None
    heap_base_mb: float | None = None
    buffered_mb: float | None = None
    get_records_calls: int | None = None
    throttled: int | None = None
    max_calls_1s: int | None = None
    proxy_cpu_s: float | None = None
    errors: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------------
# Streams


def spread_keys(kinesis: Kinesis, stream: str, per_shard: int = 16) -> list[str]:
    """Partition keys that hash evenly over the stream's shards (``per_shard`` for each), interleaved."""
    shards = sorted(
        (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
        for s in kinesis.shards(stream)
    )
    starts = [low for low, _ in shards]
    buckets: list[list[str]] = [[] for _ in shards]
    unfilled = len(shards)
    i = 0
    while unfilled:  # found by bisection and counted: thousands of shards take seconds, not an hour
        key = f"key-{i}"
        hash_key = int.from_bytes(hashlib.md5(key.encode()).digest(), "big")
        index = bisect.bisect_right(starts, hash_key) - 1
        if index >= 0 and hash_key <= shards[index][1] and len(buckets[index]) < per_shard:
            buckets[index].append(key)
            unfilled -= len(buckets[index]) == per_shard
        i += 1
    return [bucket[j] for j in range(per_shard) for bucket in buckets]


def fill(kinesis: Kinesis, stream: str, count: int, size: int) -> float:
    """Put ``count`` records of ``size`` bytes, evenly over the shards; returns records/s."""
    keys = spread_keys(kinesis, stream)
    started = time.perf_counter()
    kinesis.put_records(
        stream, ((keys[i % len(keys)], (b"%010d" % i).ljust(size, b".")) for i in range(count))
    )
    return count / (time.perf_counter() - started)


def raw_read_rate(endpoint: str, stream: str, shard_ids: list[str], expected: int) -> float:
    """Records/s of plain boto3 clients reading every shard from TRIM_HORIZON to its end."""

    def read(shard_id: str) -> int:
        client = boto_client(endpoint)
        try:
            iterator = client.get_shard_iterator(
                StreamName=stream, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            records = 0
            while True:
                response = client.get_records(ShardIterator=iterator, Limit=CEILING_LIMIT)
                records += len(response["Records"])
                iterator = response["NextShardIterator"]
                if not response["Records"]:
                    return records
        finally:
            client.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(min(len(shard_ids), CEILING_READERS)) as pool:
        records = sum(pool.map(read, shard_ids))
    elapsed = time.perf_counter() - started
    if records != expected:
        raise RuntimeError(f"raw read of {stream} returned {records} records, expected {expected}")
    return records / elapsed


# ------------------------------------------------------------------------------------------------------
# Spark side


class HeapSampler:
    """Samples the driver JVM's used heap every 100 ms (local mode: the executors run in the driver)."""

    def __init__(self, spark) -> None:
        jvm = spark.sparkContext._jvm
        self._management = jvm.java.lang.management.ManagementFactory
        self._system = jvm.java.lang.System
        self.peak = 0
        self.base = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def used(self) -> int:
        return int(self._management.getMemoryMXBean().getHeapMemoryUsage().getUsed())

    def start(self) -> None:
        self._system.gc()
        time.sleep(0.2)
        self.base = self.peak = self.used()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="heap-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(HEAP_SAMPLE_S):
            try:
                self.peak = max(self.peak, self.used())
            except Exception:  # the JVM is busy shutting down; the last peak stands
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)


def reader(spark, endpoint: str, stream: str, options: dict[str, str]):
    load = (
        spark.readStream.format("kinesis")
        .option("streamName", stream)
        .option("region", REGION)
        .option("endpoint", endpoint)
        .option("awsAccessKey", ACCESS_KEY)
        .option("awsSecretKey", SECRET_KEY)
        .option("initialPosition", "trim_horizon")
    )
    for key, value in options.items():
        load = load.option(key, value)
    return load.load()


def note_buffered(query, row: Row, batch_id: int | None = None) -> None:
    """Raise ``row.buffered_mb`` to the largest ``bufferedBytes`` metric in the query's recent progress,
    after waiting (briefly) for the progress report of ``batch_id``: a batch's report comes after its sink."""
    deadline = time.monotonic() + 5.0
    while batch_id is not None and time.monotonic() < deadline:
        last = query.lastProgress
        if last is not None and last.get("batchId", -1) >= batch_id:
            break
        time.sleep(0.05)
    for progress in query.recentProgress or []:
        for source in progress.get("sources", []):
            value = (source.get("metrics") or {}).get("bufferedBytes")
            try:
                mb = float(value) / 1e6
            except (TypeError, ValueError):
                continue
            row.buffered_mb = mb if row.buffered_mb is None else max(row.buffered_mb, mb)


def stop_query(query) -> None:
    with contextlib.suppress(Exception):  # already stopped or failed
        query.stop()


def wait_for(done, query, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if query.exception() is not None:
            raise RuntimeError(f"query failed during {what}: {str(query.exception())[:500]}")
        if not query.isActive:
            raise RuntimeError(f"query stopped during {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not done after {timeout_s:.0f} s; status {query.status}")
        time.sleep(0.05)


def measure_throughput(
    spark, endpoint: str, stream: str, options: dict, expected: int, size: int, work: Path, row: Row
) -> None:
    """(b): read the pre-filled stream from trim_horizon; records/s from start to the completing batch.
    Called once per repeat with a fresh checkpoint; the row keeps the best repeat."""
    from pyspark.sql import functions as F

    seen = {"records": 0, "bytes": 0, "first": None, "done": None, "batch": None}
    lock = threading.Lock()

    def count(batch, batch_id: int) -> None:
        records, size_sum = batch.agg(F.count("*"), F.coalesce(F.sum(F.length("data")), F.lit(0))).first()
        now = time.perf_counter()
        with lock:
            seen["records"] += records
            seen["bytes"] += size_sum
            if records and seen["first"] is None:
                seen["first"] = now
            if seen["records"] >= expected and seen["done"] is None:
                seen["done"] = now
                seen["batch"] = batch_id

    started = time.perf_counter()
    query = (
        reader(spark, endpoint, stream, options)
        .writeStream.foreachBatch(count)
        .option("checkpointLocation", str(work / f"throughput-{uuid.uuid4().hex[:8]}"))
        .start()
    )
    try:
        wait_for(lambda: seen["done"] is not None, query, max(120.0, expected / 100), "the throughput read")
        note_buffered(query, row, seen["batch"])
    finally:
        stop_query(query)
    if seen["records"] != expected:
        row.errors.append(f"throughput: read {seen['records']} records, expected {expected}")
    elapsed = seen["done"] - started
    if row.records_s is None or seen["records"] / elapsed > row.records_s:  # the best of the repeats
        row.records_s = seen["records"] / elapsed
        row.mb_s = seen["bytes"] / elapsed / 1e6
        row.first_batch_s = seen["first"] - started if seen["first"] else None


def measure_latency(
    spark,
    kinesis: Kinesis,
    endpoint: str,
    stream: str,
    options: dict,
    size: int,
    rate: float,
    seconds: float,
    work: Path,
    row: Row,
) -> None:
    """(c): put timestamped records at ``rate``/s for ``seconds`` while the query runs; now - put time."""
    from pyspark.sql import functions as F

    latencies: list[float] = []
    lock = threading.Lock()

    def timestamps(batch, batch_id: int) -> None:
        rows = batch.select(F.substring_index(F.col("data").cast("string"), " ", 1).alias("t")).collect()
        now = time.time()
        with lock:
            latencies.extend(now - float(r.t) for r in rows)

    keys = spread_keys(kinesis, stream)
    query = (
        reader(spark, endpoint, stream, options)
        .writeStream.foreachBatch(timestamps)
        .option("checkpointLocation", str(work / f"latency-{uuid.uuid4().hex[:8]}"))
        .start()
    )
    produced = 0
    try:
        wait_for(lambda: query.lastProgress is not None, query, 120.0, "the latency query's start")
        producer = boto_client(kinesis.client.meta.endpoint_url)
        try:
            tick = 0.1
            per_tick = max(1, round(rate * tick))
            next_at = time.monotonic()
            end = next_at + seconds
            while next_at < end:
                entries = []
                for _ in range(per_tick):
                    data = f"{time.time():.6f} ".encode().ljust(size, b".")
                    entries.append({"PartitionKey": keys[produced % len(keys)], "Data": data})
                    produced += 1
                response = producer.put_records(StreamName=stream, Records=entries)
                if response.get("FailedRecordCount"):
                    raise RuntimeError(f"producer: {response['FailedRecordCount']} records failed")
                next_at += tick
                time.sleep(max(0.0, next_at - time.monotonic()))
        finally:
            producer.close()
        wait_for(lambda: len(latencies) >= produced, query, 120.0, "the latency drain")
        note_buffered(query, row)
    finally:
        stop_query(query)
    if len(latencies) != produced:
        row.errors.append(f"latency: saw {len(latencies)} records, produced {produced}")
    ordered = sorted(latencies)
    row.latency_records = len(ordered)
    row.p50_ms = statistics.median(ordered) * 1000
    row.p99_ms = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000


def options_known(jar: Path) -> str:
    """Whether the jar's option names include the low-latency options (else the connector ignores them)."""
    import zipfile

    try:
        with zipfile.ZipFile(jar) as archive:
            names = archive.read("io/kinesisspark/KinesisOptionKeys$.class")
    except (KeyError, OSError, zipfile.BadZipFile):
        return "Could not tell which options it reads."
    options = sorted({key for setting in SETTINGS.values() for key in setting})
    known = [o for o in options if o.encode() in names]
    unknown = [o for o in options if o not in known]
    if not unknown:
        return f"It reads {', '.join(options)}."
    return f"It does not read {', '.join(unknown)} yet, so the low-latency rows run with the defaults" + (
        f" (it reads {', '.join(known)})." if known else "."
    )


def warm_up(spark, kinesis: Kinesis, endpoint: str, size: int, work: Path) -> None:
    """One small read first, so class loading and JIT warm-up are not charged to the first measurement."""
    stream = f"bench-warm-up-{uuid.uuid4().hex[:6]}"
    kinesis.create_stream(stream, 1)
    fill(kinesis, stream, 200, size)
    started = time.perf_counter()
    measure_throughput(spark, endpoint, stream, {}, 200, size, work, Row(1, "warm-up", "direct"))
    kinesis.delete_stream(stream)
    print(f"warm-up read took {time.perf_counter() - started:.1f} s", flush=True)


# ------------------------------------------------------------------------------------------------------
# Report


COLUMNS = (
    "Columns: *ceiling* = min(emulator raw read rate with boto3, shards x 2 MiB/s); *connector rec/s* = "
    "the best of {repeats} reads from start() until the last record reached the sink; *first batch* = "
    "seconds from start() to the first non-empty batch; *latency* = time foreachBatch saw a record minus "
    "the time it was put; *peak heap* = the driver JVM's used heap, sampled every 100 ms (after a GC at the "
    "start, in parentheses); *max buffered* = the connector's largest `bufferedBytes` metric; the next two "
    "columns come from the proxy's counters (all GetRecords calls of both phases); *proxy CPU s* = CPU time "
    "of the proxy process (it shares the cores with the JVM and the emulator)."
)
READING = [
    "- A shard's backlog of up to 10,000 records comes back in one GetRecords call (maxRecordsPerFetch "
    "defaults to 10,000), and Kinesis's read budget only delays the *next* call on the shard. With a few "
    "MB per shard the 2 MiB/s limit therefore never slows the read, and a row can exceed 100% of the "
    "ceiling. The limit bites when a shard holds more than one call's worth (e.g. `--shards 1 "
    "--records-per-shard 12000`).",
    "- The raw rate in the ceiling is boto3's (Python, JSON); the connector reads CBOR from the JVM, which "
    "can be faster on the same emulator. All processes share the machine's cores, so the emulator's rate "
    "drops while Spark works.",
    "- Latency is a prefetch round (up to `maxFetchDuration`, calls `minFetchPeriod` apart) plus one "
    "micro-batch; the producer writes directly to the emulator in both paths.",
    "- Run-to-run noise on this machine is large (tens of percent) for reads this short: the emulator, "
    "Spark and the proxy share 2 cores.",
]


def fmt(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def table(rows: list[Row]) -> str:
    header = (
        "| shards | setting | path | ceiling rec/s (MB/s) | connector rec/s | MB/s | % of ceiling "
        "| first batch s | latency p50 ms | p99 ms | peak heap MB (start) | max buffered MB "
        "| GetRecords calls / throttled | max GetRecords/s/shard | proxy CPU s |"
    )
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for r in rows:
        share = (
            None
            if r.records_s is None or not r.ceiling_records_s
            else 100 * r.records_s / r.ceiling_records_s
        )
        calls = "–" if r.get_records_calls is None else f"{r.get_records_calls:,} / {r.throttled:,}"
        heap = "–" if r.heap_peak_mb is None else f"{r.heap_peak_mb:,.0f} ({r.heap_base_mb:,.0f})"
        cells = [
            str(r.shards),
            r.setting,
            r.path,
            f"{r.ceiling_records_s:,.0f} ({r.ceiling_mb_s:.1f})",
            fmt(r.records_s),
            fmt(r.mb_s, 2),
            fmt(share) + ("%" if share is not None else ""),
            fmt(r.first_batch_s, 1),
            fmt(r.p50_ms),
            fmt(r.p99_ms),
            heap,
            fmt(r.buffered_mb, 1),
            calls,
            fmt(r.max_calls_1s),
            fmt(r.proxy_cpu_s, 1),
        ]
        if r.errors:
            cells[4] = cells[4] + " ⚠"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(rows: list[Row], args, notes: list[str], started: datetime, elapsed_s: float) -> str:
    errors = [f"- {r.shards} shards, {r.setting}, {r.path}: {e}" for r in rows for e in r.errors]
    observations = [f"- {r.shards} shards, {r.setting}, {r.path}: {o}" for r in rows for o in r.observations]
    parts = [
        "# Read throughput of the polling source",
        "",
        f"Run {started:%Y-%m-%d %H:%M} UTC, {elapsed_s / 60:.1f} min, on {os.cpu_count()} cores "
        f"({platform.machine()}, Python {platform.python_version()}); "
        f"`benchmarks/read_throughput.py {' '.join(sys.argv[1:])}`.",
        f"Records of {args.record_size} bytes, {args.records_per_shard:,} per shard pre-filled; latency: "
        f"{args.latency_rate:g} records/s for {args.latency_seconds:g} s into a fresh stream. "
        "Emulator: kinesis-local (slow, CPU-bound, no limits). Proxy: Kinesis's per-shard limits "
        "(5 GetRecords/s, 2 MiB/s read, 5 GetShardIterator/s).",
        "",
        table(rows),
        "",
        COLUMNS.format(repeats=args.repeats),
        "",
        "Reading the numbers:",
        "",
        *READING,
        "",
        *notes,
    ]
    if observations:
        parts += ["", "Observations:", *observations]
    if errors:
        parts += ["", "Problems:", *errors]
    return "\n".join(parts) + "\n"


# ------------------------------------------------------------------------------------------------------


def write_results(text: str, output: str, failed: bool, work: Path) -> int:
    """Prints a benchmark's report and writes it to ``output``; keeps its work directory (logs) only if a row failed.
    Returns the program's exit status. Every benchmark ends this way."""
    print()
    print(text)
    Path(output).write_text(text)
    print(f"written to {output}")
    if failed:
        print(f"logs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", default=None, help="comma-separated shard counts (default 1,4,8)")
    parser.add_argument(
        "--records-per-shard", type=int, default=None, help="pre-filled records per shard (2000)"
    )
    parser.add_argument("--record-size", type=int, default=1024, help="bytes per record (1024)")
    parser.add_argument(
        "--latency-rate", type=float, default=100.0, help="records/s put during latency (100)"
    )
    parser.add_argument("--latency-seconds", type=float, default=None, help="seconds of producing (15)")
    parser.add_argument("--repeats", type=int, default=2, help="throughput reads per row, best kept (2)")
    parser.add_argument("--settings", default=",".join(SETTINGS), help=f"subset of {','.join(SETTINGS)}")
    parser.add_argument("--paths", default=",".join(PATHS), help=f"subset of {','.join(PATHS)}")
    parser.add_argument("--quick", action="store_true", help="1 and 4 shards, 500 records/shard, 6 s latency")
    parser.add_argument(
        "--output", default=str(REPO / "benchmarks" / "results.md"), help="Markdown output file"
    )
    args = parser.parse_args(argv)
    args.shards = [int(s) for s in (args.shards or ("1,4" if args.quick else "1,4,8")).split(",")]
    args.records_per_shard = args.records_per_shard or (500 if args.quick else 2000)
    args.latency_seconds = args.latency_seconds or (6.0 if args.quick else 15.0)
    args.settings = [s for s in args.settings.split(",") if s]
    args.paths = [p for p in args.paths.split(",") if p]
    unknown = set(args.settings) - set(SETTINGS) | set(args.paths) - set(PATHS)
    if unknown:
        parser.error(f"unknown settings or paths: {sorted(unknown)}")
    return args


@dataclass
class Bench:
    """What every measurement needs: the running processes and the run's arguments."""

    args: argparse.Namespace
    spark: object
    kinesis: Kinesis
    proxy: LimitsProxy
    heap: HeapSampler
    endpoints: dict[str, str]
    work: Path


def prepare_stream(bench: Bench, shards: int, notes: list[str]) -> tuple[str, int, float]:
    """Create and fill the stream of ``shards`` shards; returns (name, records, ceiling in records/s)."""
    args = bench.args
    stream = f"bench-{shards}-{uuid.uuid4().hex[:6]}"
    bench.kinesis.create_stream(stream, shards)
    expected = shards * args.records_per_shard
    put_rate = fill(bench.kinesis, stream, expected, args.record_size)
    shard_ids = [s["ShardId"] for s in bench.kinesis.shards(stream)]
    raw = max(raw_read_rate(bench.endpoints["direct"], stream, shard_ids, expected) for _ in range(2))
    limit_rate = shards * KINESIS_READ_BYTES_PER_S / args.record_size
    line = (
        f"{shards} shards: filled {expected:,} records at {put_rate:,.0f}/s; emulator raw read "
        f"{raw:,.0f} records/s, Kinesis limit {limit_rate:,.0f} records/s"
    )
    notes.append(f"- {line}.")
    print(line, flush=True)
    return stream, expected, min(raw, limit_rate)


def measure_row(bench: Bench, row: Row, stream: str, expected: int) -> None:
    """(b), (c) and (d) for one row, plus the proxy's counters; failures are recorded in the row."""
    args, options, endpoint = bench.args, SETTINGS[row.setting], bench.endpoints[row.path]
    bench.proxy.reset()
    proxy_cpu = bench.proxy.cpu_seconds()
    bench.heap.start()
    latency_stream = f"bench-lat-{row.shards}-{uuid.uuid4().hex[:6]}"
    try:
        for _ in range(args.repeats):
            measure_throughput(
                bench.spark, endpoint, stream, options, expected, args.record_size, bench.work, row
            )
        bench.kinesis.create_stream(latency_stream, row.shards)
        measure_latency(
            bench.spark,
            bench.kinesis,
            endpoint,
            latency_stream,
            options,
            args.record_size,
            args.latency_rate,
            args.latency_seconds,
            bench.work,
            row,
        )
    except Exception as error:  # keep going: the table says what failed
        row.errors.append(f"{type(error).__name__}: {str(error).splitlines()[0][:300]}")
        traceback.print_exc()
    finally:
        bench.heap.stop()
        row.heap_peak_mb, row.heap_base_mb = bench.heap.peak / MIB, bench.heap.base / MIB
        with contextlib.suppress(Exception):
            bench.kinesis.delete_stream(latency_stream)
    if row.path == "proxy":
        note_proxy_counters(bench.proxy, row, proxy_cpu)


def note_proxy_counters(proxy: LimitsProxy, row: Row, cpu_before: float | None) -> None:
    cpu = proxy.cpu_seconds()
    if cpu is not None and cpu_before is not None:
        row.proxy_cpu_s = cpu - cpu_before
    stats = proxy.stats()
    total = proxy.operation_stats("GetRecords", stats)
    row.get_records_calls, row.throttled = total["calls"], total["throttled_calls"]
    row.max_calls_1s = max(
        (
            operations.get("GetRecords", {}).get("max_calls_1s", 0)
            for shards in stats["streams"].values()
            for operations in shards.values()
        ),
        default=0,
    )
    iterators = proxy.operation_stats("GetShardIterator", stats)
    if iterators["throttled_calls"]:
        row.observations.append(
            f"{iterators['throttled_calls']} of {iterators['calls']} GetShardIterator calls throttled "
            "(5/s per shard)"
        )


def summary(row: Row) -> str:
    text = (
        f"    {fmt(row.records_s)} records/s ({fmt(row.mb_s, 2)} MB/s), first batch "
        f"{fmt(row.first_batch_s, 1)} s, latency p50 {fmt(row.p50_ms)} ms p99 {fmt(row.p99_ms)} ms, "
        f"peak heap {fmt(row.heap_peak_mb)} MB"
    )
    if row.path == "proxy":
        text += f", GetRecords {row.get_records_calls} calls, {row.throttled} throttled"
    return text + (f"; problems: {row.errors}" if row.errors else "")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started_at = datetime.now(timezone.utc)
    clock = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="kinesis-bench-"))
    notes: list[str] = []
    rows: list[Row] = []
    jar = work / "kinesis-spark-connector.jar"
    source_jar = connector_jar()
    shutil.copy(source_jar, jar)
    shown = source_jar.relative_to(REPO) if source_jar.is_relative_to(REPO) else source_jar
    built = datetime.fromtimestamp(source_jar.stat().st_mtime, timezone.utc)
    jar_line = f"Connector jar: {shown} (built {built:%Y-%m-%d %H:%M} UTC)."
    print(f"{jar_line} Work dir {work}", flush=True)
    notes.append(f"- {jar_line} {options_known(source_jar)}")

    with (
        KinesisEmulator(log_path=work / "emulator.log") as emulator,
        LimitsProxy(emulator.endpoint, log_path=work / "proxy.log") as proxy,
    ):
        kinesis = Kinesis(emulator.endpoint)
        spark = local_spark("kinesis-spark-read-throughput", jar=jar)
        spark.sparkContext.setLogLevel("ERROR")  # stopping queries logs harmless interruptions at WARN
        endpoints = {"direct": emulator.endpoint, "proxy": proxy.endpoint}
        bench = Bench(args, spark, kinesis, proxy, HeapSampler(spark), endpoints, work)
        try:
            warm_up(spark, kinesis, emulator.endpoint, args.record_size, work)
            for shards in args.shards:
                stream, expected, ceiling = prepare_stream(bench, shards, notes)
                for setting in args.settings:
                    for path in args.paths:
                        row = Row(shards, setting, path, ceiling, ceiling * args.record_size / 1e6)
                        rows.append(row)
                        print(f"  {shards} shards, {setting}, {path} ...", flush=True)
                        measure_row(bench, row, stream, expected)
                        print(summary(row), flush=True)
                kinesis.delete_stream(stream)
        finally:
            spark.stop()
            kinesis.close()

    text = report(rows, args, notes, started_at, time.monotonic() - clock)
    return write_results(text, args.output, any(r.errors for r in rows), work)


if __name__ == "__main__":
    sys.exit(main())
