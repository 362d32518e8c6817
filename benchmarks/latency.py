"""Put-to-sink latency of micro-batch and real-time mode, beside a raw client's floor, on ferrokinesis.

For every cell (``--shards`` x ``--rate``: by default 2 shards at 100 records/s), each mode gets a fresh stream
and its own reader:

- raw GetRecords: one boto3 thread per shard calls GetRecords every 200 ms (Kinesis's 5 calls/s per shard);
- raw SubscribeToShard: a registered consumer, one boto3 SubscribeToShard event stream per shard;
- micro-batch default: the connector's defaults, Spark's default trigger;
- micro-batch low-latency: ``minFetchPeriod=210ms``, ``maxFetchDuration=200ms``,
  ``trigger(processingTime="0 seconds")``;
- real-time polling: ``trigger(realTime="5 seconds")`` with the connector's defaults (``minFetchPeriod`` 400 ms
  after an empty response, 210 ms after one that brought records), and again with ``minFetchPeriod=200ms``;
- real-time EFO: ``consumerMode=efo`` (its own consumer), the same trigger.

Real-time rows also print, per 100 ms of put time from the nearest batch start, p50 / p99, and the median turnover
(from one batch's deadline to the next batch's start: Spark writes its offset and commit logs and plans the next
batch, and no task reads). Spark's default batch duration is 5 minutes; these rows use its least, 5 seconds, so a
boundary lies in every row's way (a longer batch cannot be timed here: PySpark hands a long batch's rows to the
Python writer that collects them too late).

How: once the reader is up (a probe record is put to each shard every 0.5 s until one from every shard came out of
the sink), a producer puts records at
``--rate`` for ``--seconds``, in ``PutRecords`` calls every 20 ms, spread evenly over the shards. Each record's data
is ``"<time.time() just before its put>:<number>"``: ferrokinesis's arrival timestamps are whole seconds, so the
producer's own clock times each record. Latency = the time the record was processed minus its put time:

- raw clients: ``time.time()`` when the response (or SubscribeToShard event) holding it was parsed;
- Spark queries: ``System.currentTimeMillis()`` in the query's last projection, evaluated per row as the row passes
  it (``reflect('java.lang.System', 'currentTimeMillis')``, a nondeterministic expression), on its way into Spark's
  ``foreach`` sink (one of the four sinks real-time mode admits; its ``memory`` sink is refused: not in the
  allowlist). This is the time a JVM sink would get the row. The Python ForeachWriter also notes ``time.time()``
  when it gets the row: a column of its own, since PySpark hands rows to its Python worker in growing batches
  (docs/real-time.md, Sinks), which measures PySpark's buffering rather than the connector's. The same sink serves
  every Spark mode.

Percentiles are nearest-rank over every measured record (probes and a record's second delivery excluded); p99.9 is
shown where a row has at least 10,000 samples. Everything (ferrokinesis, Spark ``local[2]``, the producer and the raw
readers) runs on this machine's loopback and shares its cores, so the producer and readers' Python time is in every
number.

    .venv/bin/python benchmarks/latency.py                          # 2 shards, 100 records/s, 60 s a mode: ~9 min
    .venv/bin/python benchmarks/latency.py --quick                  # the same, 10 s a mode: ~3 min
    .venv/bin/python benchmarks/latency.py --shards 32 --rate 1000  # the larger cell
    .venv/bin/python benchmarks/latency.py --cells 2x100,32x1000    # both cells in one run (~18 min)
    .venv/bin/python benchmarks/latency.py --modes rt-efo,raw-subscribe

Prints a Markdown table and writes it to benchmarks/latency_results.md (--output). The connector jar is
harness.spark.connector_jar()'s (``KINESIS_SPARK_JAR`` overrides), copied first: the build may replace it.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from read_throughput import REPO, spread_keys, write_results  # noqa: E402

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY  # noqa: E402
from harness.ferrokinesis import JVM_OPTIONS, FerroKinesis  # noqa: E402
from harness.kinesis import Kinesis, boto_client  # noqa: E402
from harness.spark import connector_jar, local_spark  # noqa: E402

PROBE = "p"  # a probe record's number field: "p" and its shard's index
PUT_TICK_S = 0.02
RAW_POLL_S = 0.2  # 5 GetRecords calls per second per shard
REAL_TIME_BATCH = "5 seconds"  # Spark's least batch duration
REAL_TIME_BATCH_S = int(REAL_TIME_BATCH.split()[0])
START_TIMEOUT_S = 120.0
DRAIN_TIMEOUT_S = 30.0
BOUNDARY_BEFORE_S, BOUNDARY_AFTER_S = 0.5, 1.0  # "around a batch's start", for real-time rows
JVM_PASS_THREADS, JVM_PASS_COUNT = 16, 20
# The first micro-batch row at 1,000 shards in a JVM runs slow for tens of seconds while the JIT compiles the fetch path
# under load (benchmarks/latency_scale_results.md). The raw pass's median leaves its own slow first passes out; an
# unmeasured row at each such shard count does so here.
WARM_UP_SHARDS, WARM_UP_AT_SCALE_S = 100, 30.0
LOW_LATENCY = {"minFetchPeriod": "210ms", "maxFetchDuration": "200ms"}


@dataclass(frozen=True)
class Mode:
    name: str
    kind: str  # raw-getrecords, raw-subscribe, raw-jvm-pass, micro-batch, real-time
    options: dict[str, str] = field(default_factory=dict)
    trigger: dict[str, str] | None = None
    floor: str | None = None  # the raw mode this one is compared with


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("raw-getrecords", "raw-getrecords"),
        Mode("raw-subscribe", "raw-subscribe"),
        Mode("raw-jvm-pass", "raw-jvm-pass"),
        Mode("mb-default", "micro-batch", floor="raw-getrecords"),
        Mode("mb-low-latency", "micro-batch", LOW_LATENCY, {"processingTime": "0 seconds"}, "raw-getrecords"),
        Mode("rt-polling", "real-time", floor="raw-getrecords"),
        Mode("rt-polling-200ms", "real-time", {"minFetchPeriod": "200ms"}, floor="raw-getrecords"),
        Mode("rt-efo", "real-time", {"consumerMode": "efo"}, floor="raw-subscribe"),
    )
}
DESCRIPTIONS = {
    "raw-getrecords": "boto3 GetRecords loop, every 200 ms per shard",
    "raw-subscribe": "boto3 SubscribeToShard, one subscription per shard",
    "raw-jvm-pass": f"not a latency: the time of one pass of GetRecords over every shard (LATEST iterators, "
    f"{JVM_PASS_THREADS} threads, {JVM_PASS_COUNT} passes at least 200 ms apart) by a raw client on the connector's "
    "own SDK (benchmarks/RawGetRecordsPass.java); *samples* = passes, *p50* its median, *p99* and *max* its slowest",
    "mb-default": "micro-batch, connector defaults",
    "mb-low-latency": "micro-batch, minFetchPeriod=210ms, maxFetchDuration=200ms, processingTime 0",
    "rt-polling": "real-time polling, defaults (minFetchPeriod 400 ms after an empty response, 210 ms after one "
    "that brought records)",
    "rt-polling-200ms": "real-time polling, minFetchPeriod=200ms",
    "rt-efo": "real-time EFO",
}


@dataclass
class Row:
    shards: int
    rate: float
    mode: str
    produced: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    duplicates: int = 0
    python_ms: list[float] = field(default_factory=list)  # Spark rows: to the Python ForeachWriter's clock
    away_ms: list[float] = field(default_factory=list)  # real-time rows: put away from a batch's start
    near_ms: list[float] = field(default_factory=list)  # real-time rows: put from 0.5 s before to 1 s after one
    boundary: str = ""  # real-time rows: the turnover, and p50 / p99 by put time from the nearest batch start
    start_s: float | None = None  # from the reader's start to a probe out of the sink from every shard
    emulator_cores: float | None = None  # ferrokinesis's CPU while producing and draining, in cores
    batch_ms: list[float] = field(default_factory=list)  # micro-batch: recent batches' triggerExecution
    round_ms: list[float] = field(default_factory=list)  # micro-batch: prefetch rounds' durations, as reported
    errors: list[str] = field(default_factory=list)

    @property
    def samples(self) -> int:
        return len(self.latencies_ms)

    def percentile(self, q: float, python: bool = False, samples: list[float] | None = None) -> float | None:
        samples = samples if samples is not None else self.python_ms if python else self.latencies_ms
        if not samples:
            return None
        ordered = sorted(samples)
        return ordered[max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))]


# ------------------------------------------------------------------------------------------------------
# Readers: each collects (data, seen epoch seconds) pairs


class Reader:
    def start(self) -> None: ...

    def count(self) -> int:
        """How many records (probes included) came out so far."""
        raise NotImplementedError

    def probes_seen(self) -> int:
        """How many shards' probe records came out so far."""
        raise NotImplementedError

    def seen(self) -> list[tuple[str, float]]:
        raise NotImplementedError

    def stop(self) -> None: ...

    def failure(self) -> str | None:
        return None


class RawReader(Reader):
    """One thread per shard; subclasses read a shard until ``self.stopping``."""

    def __init__(self, endpoint: str, stream: str, shard_ids: list[str]) -> None:
        self.endpoint, self.stream, self.shard_ids = endpoint, stream, shard_ids
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.records: list[tuple[str, float]] = []
        self.probes: set[str] = set()
        self.errors: list[str] = []
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        for shard_id in self.shard_ids:
            thread = threading.Thread(target=self._run, args=(shard_id,), daemon=True, name=f"raw-{shard_id}")
            thread.start()
            self.threads.append(thread)

    def _run(self, shard_id: str) -> None:
        try:
            self.read(shard_id)
        except Exception as error:
            if not self.stopping.is_set():
                self.errors.append(f"{shard_id}: {type(error).__name__}: {error}")
                traceback.print_exc()

    def read(self, shard_id: str) -> None:
        raise NotImplementedError

    def take(self, records: list[dict]) -> None:
        now = time.time()
        batch = [(bytes(r["Data"]).decode("ascii", "replace"), now) for r in records]
        with self.lock:
            self.records.extend(batch)
            self.probes |= {data.split(":")[1] for data, _ in batch if data.split(":")[1].startswith(PROBE)}

    def count(self) -> int:
        with self.lock:
            return len(self.records)

    def probes_seen(self) -> int:
        with self.lock:
            return len(self.probes)

    def seen(self) -> list[tuple[str, float]]:
        with self.lock:
            return list(self.records)

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(10)

    def failure(self) -> str | None:
        return self.errors[0] if self.errors else None


class RawGetRecords(RawReader):
    def read(self, shard_id: str) -> None:
        client = boto_client(self.endpoint)
        try:
            iterator = client.get_shard_iterator(
                StreamName=self.stream, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            next_at = time.monotonic()
            while not self.stopping.is_set():
                response = client.get_records(ShardIterator=iterator, Limit=10_000)
                self.take(response["Records"])
                iterator = response["NextShardIterator"]
                next_at += RAW_POLL_S
                self.stopping.wait(max(0.0, next_at - time.monotonic()))
        finally:
            client.close()


class RawSubscribe(RawReader):
    def __init__(self, endpoint: str, stream: str, shard_ids: list[str]) -> None:
        super().__init__(endpoint, stream, shard_ids)
        client = boto_client(endpoint)
        try:
            arn = client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
            consumer = client.register_stream_consumer(StreamARN=arn, ConsumerName=f"raw-{uuid.uuid4().hex[:8]}")
            self.consumer_arn = consumer["Consumer"]["ConsumerARN"]
            deadline = time.monotonic() + 30
            while client.describe_stream_consumer(ConsumerARN=self.consumer_arn)["ConsumerDescription"][
                "ConsumerStatus"
            ] != "ACTIVE":
                if time.monotonic() > deadline:
                    raise TimeoutError("the raw consumer is not ACTIVE after 30 s")
                time.sleep(0.2)
        finally:
            client.close()

    def read(self, shard_id: str) -> None:
        client = boto_client(self.endpoint)
        position = {"Type": "TRIM_HORIZON"}
        try:
            while not self.stopping.is_set():  # a subscription ends after 5 minutes: subscribe again from where it was
                response = client.subscribe_to_shard(
                    ConsumerARN=self.consumer_arn, ShardId=shard_id, StartingPosition=position
                )
                for event in response["EventStream"]:
                    if self.stopping.is_set():
                        break
                    shard_event = event.get("SubscribeToShardEvent")
                    if shard_event is None:
                        continue
                    self.take(shard_event["Records"])
                    position = {"Type": "AT_SEQUENCE_NUMBER",
                                "SequenceNumber": shard_event["ContinuationSequenceNumber"]}
        finally:
            client.close()


class RowFiles:
    """Spark's ``foreach`` sink (a ForeachWriter, pickled to the Python workers): each task appends every row, with
    the JVM's processing time and its own, to a file of its own."""

    def __init__(self, root: str) -> None:
        self.root = root

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.file = open(f"{self.root}/{epoch_id}-{partition_id}-{uuid.uuid4().hex}.tsv", "a")  # noqa: SIM115
        return True

    def process(self, row) -> None:  # noqa: ANN001 (a pyspark Row)
        self.file.write(f"{row.data}\t{row.seen_ms}\t{time.time():.6f}\n")
        self.file.flush()

    def close(self, error: BaseException | None) -> None:
        self.file.close()


class SparkReader(Reader):
    """A connector query into Spark's ``foreach`` sink. A row's processing time is the JVM's clock in the query's
    last projection (``seen_ms``); the Python ForeachWriter's own clock is kept apart (PySpark buffers rows on their
    way to Python)."""

    def __init__(self, spark, endpoint: str, stream: str, mode: Mode, work: Path, shards: int) -> None:
        self.spark, self.endpoint, self.stream, self.mode, self.shards = spark, endpoint, stream, mode, shards
        name = f"latency-{uuid.uuid4().hex[:10]}"
        self.checkpoint = work / name / "checkpoint"
        self.out = work / name / "rows"
        self.out.mkdir(parents=True)
        self.query = None

    def start(self) -> None:
        from pyspark.sql import functions as F

        load = (
            self.spark.readStream.format("kinesis")
            .option("streamName", self.stream)
            .option("region", REGION)
            .option("endpoint", self.endpoint)
            .option("awsAccessKey", ACCESS_KEY)
            .option("awsSecretKey", SECRET_KEY)
            .option("initialPosition", "trim_horizon")
        )
        options = dict(self.mode.options)
        if self.shards > 1000:  # ferrokinesis refuses a listing's second page (harness/ferrokinesis.py): one page
            options["maxShardsPerDescribe"] = str(self.shards)
        if options.get("consumerMode") == "efo":
            options["consumerName"] = f"bench-{uuid.uuid4().hex[:8]}"
        for key, value in options.items():
            load = load.option(key, value)
        rows = load.load().select(
            F.col("data").cast("string").alias("data"),
            F.expr("reflect('java.lang.System', 'currentTimeMillis')").alias("seen_ms"),
        )
        writer = rows.writeStream.foreach(RowFiles(str(self.out)))
        writer = writer.option("checkpointLocation", str(self.checkpoint))
        if self.mode.kind == "real-time":
            writer = writer.outputMode("update").trigger(realTime=REAL_TIME_BATCH)
        elif self.mode.trigger:
            writer = writer.trigger(**self.mode.trigger)
        self.query = writer.start()

    def _lines(self) -> list[list[str]]:
        lines = []
        for path in self.out.glob("*.tsv"):
            text = path.read_text()
            lines += [line.split("\t") for line in text[: text.rfind("\n") + 1].splitlines()]
        return lines

    def count(self) -> int:
        return len(self._lines())

    def probes_seen(self) -> int:
        return len({data.split(":")[1] for data, _ in self.seen() if data.split(":")[1].startswith(PROBE)})

    def seen(self) -> list[tuple[str, float]]:
        return [(data, int(ms) / 1000) for data, ms, _ in self._lines()]

    def batch_starts(self) -> list[float]:
        """Epoch seconds each batch in the query's recent progress started."""
        starts = []
        for progress in (self.query.recentProgress if self.query is not None else []) or []:
            stamp = progress.get("timestamp")
            if stamp:
                starts.append(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
        return sorted(starts)

    def batch_timings(self) -> tuple[list[float], list[float]]:
        """Micro-batch: each recent batch's ``triggerExecution`` ms (those that read records) and the latest prefetch
        round's duration as each batch reported it (the source's ``lastRoundMs``)."""
        batches, rounds = [], []
        for progress in (self.query.recentProgress if self.query is not None else []) or []:
            if progress.get("numInputRows", 0) > 0:
                batches.append(float(progress["durationMs"]["triggerExecution"]))
            metrics = (progress.get("sources") or [{}])[0].get("metrics") or {}
            if metrics.get("lastRoundMs") not in (None, "0"):
                rounds.append(float(metrics["lastRoundMs"]))
        return batches, rounds

    def batch_phases(self) -> dict[str, float]:
        """The median of each of Spark's ``durationMs`` phases over the recent batches that read records
        (where a batch's time goes: planning, the offset log, the sink, the commit), and of the source's own driver
        calls (its ``driver*Ms`` metrics: wall and CPU of ``latestOffset``, ``planInputPartitions``, ``commit``)."""
        phases: dict[str, list[float]] = {}
        for progress in (self.query.recentProgress if self.query is not None else []) or []:
            if progress.get("numInputRows", 0) > 0:
                for phase, ms in (progress.get("durationMs") or {}).items():
                    phases.setdefault(phase, []).append(float(ms))
                metrics = (progress.get("sources") or [{}])[0].get("metrics") or {}
                for name, ms in metrics.items():
                    if name.startswith("driver") and name.endswith("Ms"):
                        phases.setdefault(name, []).append(float(ms))
        return {phase: sorted(v)[len(v) // 2] for phase, v in sorted(phases.items())}

    def python_seen(self) -> list[tuple[str, float]]:
        """When the Python ForeachWriter got each row."""
        return [(data, float(at)) for data, _, at in self._lines()]

    def stop(self) -> None:
        if self.query is not None:
            with contextlib.suppress(Exception):
                self.query.stop()

    def failure(self) -> str | None:
        if self.query is None:
            return None
        error = self.query.exception()
        if error is not None:
            return str(error)
        return None if self.query.isActive else "the query stopped"


# ------------------------------------------------------------------------------------------------------
# Producing and measuring


class Producer:
    def __init__(self, endpoint: str, stream: str, keys: list[str]) -> None:
        self.client = boto_client(endpoint)
        self.stream, self.keys = stream, keys
        self.number = 0

    def put(self, count: int) -> None:
        entries = []
        for _ in range(count):
            entries.append({"PartitionKey": self.keys[self.number % len(self.keys)],
                            "Data": f"{time.time():.6f}:{self.number}".encode()})
            self.number += 1
        self._put(entries)

    def probe(self, shards: int) -> None:
        """One probe record to each shard (``spread_keys`` gives the shards' keys in turn), 500 a call (PutRecords'
        most)."""
        for first in range(0, shards, 500):
            self._put([{"PartitionKey": self.keys[i], "Data": f"{time.time():.6f}:{PROBE}{i}".encode()}
                       for i in range(first, min(shards, first + 500))])

    def _put(self, entries: list[dict]) -> None:
        response = self.client.put_records(StreamName=self.stream, Records=entries)
        if response.get("FailedRecordCount"):
            raise RuntimeError(f"producer: {response['FailedRecordCount']} of {len(entries)} records failed")

    def run(self, rate: float, seconds: float) -> None:
        """``rate`` records/s for ``seconds``, a PutRecords call every 20 ms (the fraction carried over)."""
        owed = 0.0
        next_at = time.monotonic()
        end = next_at + seconds
        while next_at < end:
            owed += rate * PUT_TICK_S
            count = int(owed)
            if count:
                self.put(count)
                owed -= count
            next_at += PUT_TICK_S
            time.sleep(max(0.0, next_at - time.monotonic()))

    def close(self) -> None:
        self.client.close()


def wait(condition: Callable[[], bool], reader: Reader, timeout_s: float, what: str,
         between: Callable[[], None] | None = None, poll_s: float = 0.5) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        failure = reader.failure()
        if failure:
            raise RuntimeError(f"{what}: the reader failed: {failure}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not done after {timeout_s:.0f} s")
        if between is not None:
            between()
        time.sleep(poll_s)


def measure(bench: Bench, row: Row, mode: Mode) -> None:
    kinesis, endpoint = bench.kinesis, bench.endpoint
    stream = f"lat-{mode.name}-{row.shards}-{uuid.uuid4().hex[:6]}"
    kinesis.create_stream(stream, row.shards)
    producer = Producer(endpoint, stream, spread_keys(kinesis, stream))
    shard_ids = [s["ShardId"] for s in kinesis.shards(stream)]
    if mode.kind == "raw-jvm-pass":
        try:
            row.latencies_ms = jvm_passes(bench, stream)
            row.produced = row.samples
        except Exception as error:
            row.errors.append(f"{type(error).__name__}: {str(error).strip().splitlines()[0][:400]}")
        finally:
            producer.close()
            with contextlib.suppress(Exception):
                kinesis.delete_stream(stream)
        return
    if mode.kind == "raw-getrecords":
        reader: Reader = RawGetRecords(endpoint, stream, shard_ids)
    elif mode.kind == "raw-subscribe":
        reader = RawSubscribe(endpoint, stream, shard_ids)
    else:
        reader = SparkReader(bench.spark, endpoint, stream, mode, bench.work, row.shards)
    try:
        started = time.monotonic()
        reader.start()
        # Probes to every shard until one from each came out of the sink: the reader (query, every subscription) is
        # up and reading every shard.
        # A pass over 10,000 shards of ferrokinesis alone takes about 20 s (raw-jvm-pass): more shards, longer start.
        start_timeout = START_TIMEOUT_S + row.shards * 0.05
        wait(lambda: reader.probes_seen() >= row.shards, reader, start_timeout, "the reader's start",
             lambda: producer.probe(row.shards))
        row.start_s = time.monotonic() - started
        cpu_before, wall_before = process_cpu_s(bench.emulator_pid), time.monotonic()
        producer.run(row.rate, bench.args.seconds)
        row.produced = producer.number
        measured = lambda: sum(1 for data, _ in reader.seen() if PROBE not in data)  # noqa: E731
        drain = DRAIN_TIMEOUT_S + (10 if mode.kind == "real-time" else 0) + row.shards * 0.05
        wait(lambda: measured() >= row.produced, reader, drain, "the drain", poll_s=1.0)
        row.emulator_cores = (process_cpu_s(bench.emulator_pid) - cpu_before) / (time.monotonic() - wall_before)
    except Exception as error:  # keep going: the table says what failed
        row.errors.append(f"{type(error).__name__}: {str(error).strip().splitlines()[0][:400]}")
        traceback.print_exc()
        row.produced = row.produced or producer.number
    finally:
        seen: list[tuple[str, float]] = []
        python_seen: list[tuple[str, float]] = []
        starts: list[float] = []
        try:
            seen = reader.seen()
            if isinstance(reader, SparkReader):
                python_seen = reader.python_seen()
                if mode.kind == "real-time":
                    starts = reader.batch_starts()
                else:
                    row.batch_ms, row.round_ms = reader.batch_timings()
                phases = reader.batch_phases()
                if phases:
                    print(f"  {mode.name}: median ms of the batches that read records, per phase: "
                          + ", ".join(f"{k} {v:,.0f}" for k, v in phases.items()), flush=True)
        except Exception as error:  # e.g. a query that never started has no table
            row.errors.append(f"collecting: {type(error).__name__}: {str(error).strip().splitlines()[0][:200]}")
        reader.stop()
        producer.close()
        with contextlib.suppress(Exception):
            kinesis.delete_stream(stream)
    first, row.duplicates = first_latencies(seen)
    row.latencies_ms = [s * 1000 for s in first.values()]
    row.python_ms = [s * 1000 for s in first_latencies(python_seen)[0].values()]
    if starts:  # real-time: split by whether the record was put around a batch's start (a batch boundary)
        profile: dict[int, list[float]] = {}  # latencies by put time from the nearest batch start, in 100 ms steps
        for data, at in seen:
            put, number = data.split(":", 1)
            if not number.startswith(PROBE):
                offset = min((float(put) - s for s in starts), key=abs)
                near = -BOUNDARY_BEFORE_S <= offset <= BOUNDARY_AFTER_S
                (row.near_ms if near else row.away_ms).append((at - float(put)) * 1000)
                if near:
                    profile.setdefault(math.floor(offset * 10), []).append((at - float(put)) * 1000)
        gaps = sorted((b - a) * 1000 - REAL_TIME_BATCH_S * 1000 for a, b in itertools.pairwise(starts))
        row.boundary = (
            f"turnover {gaps[len(gaps) // 2]:.0f} ms (median of {len(gaps)}); " if gaps else "") + ", ".join(
            f"{step * 100:+d}: {row.percentile(0.5, samples=v):.0f} / {row.percentile(0.99, samples=v):.0f}"
            for step, v in sorted(profile.items()))
        print(f"  {mode.name}: around batch starts: {row.boundary}", flush=True)
    if len(first) < row.produced and not row.errors:
        row.errors.append(f"{row.produced - len(first)} of {row.produced} records not seen")


def jvm_passes(bench: Bench, stream: str) -> list[float]:
    """Times of passes of GetRecords over every shard of ``stream`` by benchmarks/RawGetRecordsPass.java."""
    import pyspark

    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else shutil.which("java")
    # The SDK logs through SLF4J, which Spark provides to the connector: its API (no provider: nothing printed).
    spark_jars = Path(pyspark.__file__).parent / "jars"
    logging_jars = [str(j) for pattern in ("slf4j-api-*.jar", "jcl-over-slf4j-*.jar") for j in spark_jars.glob(pattern)]
    command = [str(java), JVM_OPTIONS, "-cp", os.pathsep.join([str(bench.jar), *logging_jars]),
               str(REPO / "benchmarks" / "RawGetRecordsPass.java"), bench.endpoint, stream, str(JVM_PASS_THREADS),
               str(JVM_PASS_COUNT)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"RawGetRecordsPass failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return [float(line.split()[2]) for line in done.stdout.splitlines() if line.startswith("pass ")]


def process_cpu_s(pid: int) -> float:
    """CPU seconds a process has used (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_latencies(seen: list[tuple[str, float]]) -> tuple[dict[str, float], int]:
    """Record number -> seconds from its put to its first delivery (probes left out), and how many came again."""
    first: dict[str, float] = {}
    duplicates = 0
    for data, at in seen:
        put, number = data.split(":", 1)
        if number.startswith(PROBE):
            continue
        if number in first:
            duplicates += 1
            first[number] = min(first[number], at - float(put))
        else:
            first[number] = at - float(put)
    return first, duplicates


# ------------------------------------------------------------------------------------------------------
# Report


def fmt(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def table(rows: list[Row]) -> str:
    header = (
        "| shards | records/s | mode | samples | p50 ms | p99 ms | p99.9 ms | max ms | start s | lost / dup "
        "| ferrokinesis CPU (cores) | Python writer p50 / p99 ms | real-time p99 ms: near batch start (n) / away "
        "| micro-batch p50 ms: batch / round |"
    )
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for r in rows:
        lost = r.produced - r.samples
        cells = [
            str(r.shards),
            f"{r.rate:,g}",
            r.mode,
            f"{r.samples:,}",
            fmt(r.percentile(0.5)),
            fmt(r.percentile(0.99)),
            fmt(r.percentile(0.999)) if r.samples >= 10_000 else "–",
            fmt(max(r.latencies_ms) if r.latencies_ms else None),
            fmt(r.start_s, 1),
            f"{lost} / {r.duplicates}" + (" ⚠" if r.errors else ""),
            fmt(r.emulator_cores, 2),
            f"{fmt(r.percentile(0.5, True))} / {fmt(r.percentile(0.99, True))}" if r.python_ms else "–",
            f"{fmt(r.percentile(0.99, samples=r.near_ms))} ({len(r.near_ms):,}) / "
            f"{fmt(r.percentile(0.99, samples=r.away_ms))}" if r.near_ms or r.away_ms else "–",
            f"{fmt(r.percentile(0.5, samples=r.batch_ms))} / {fmt(r.percentile(0.5, samples=r.round_ms))}"
            if r.batch_ms or r.round_ms else "–",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def goals(rows: list[Row]) -> list[str]:
    """The issue's goals, against the rows of each cell."""
    out = []
    for (shards, rate), group in itertools.groupby(rows, key=lambda r: (r.shards, r.rate)):
        by_mode = {r.mode: r for r in group if r.samples}
        cell = f"{shards} shards, {rate:,g} records/s"
        efo, raw = by_mode.get("rt-efo"), by_mode.get("raw-subscribe")
        if efo and raw:
            gap = efo.percentile(0.5) - raw.percentile(0.5)
            p99 = efo.percentile(0.99)
            ok = gap <= 20 and p99 <= 200
            out.append(
                f"- {cell}: real-time EFO p50 {gap:+,.0f} ms from raw SubscribeToShard's (goal: within 20 ms), "
                f"p99 {p99:,.0f} ms (goal: at most 200 ms): {'met' if ok else 'not met'}."
            )
        mb, jvm_pass = by_mode.get("mb-default"), by_mode.get("raw-jvm-pass")
        if mb and jvm_pass and shards >= 1000:  # the goal is set for many shards, where a pass takes long
            ratio = mb.percentile(0.5) / jvm_pass.percentile(0.5)
            out.append(
                f"- {cell}: micro-batch p50 {mb.percentile(0.5):,.0f} ms, {ratio:.1f}x a raw JVM pass over every shard "
                f"({jvm_pass.percentile(0.5):,.0f} ms; goal: within 1.5x): {'met' if ratio <= 1.5 else 'not met'}."
            )
        for name in ("rt-polling", "rt-polling-200ms"):
            r = by_mode.get(name)
            if r:
                p50, p99 = r.percentile(0.5), r.percentile(0.99)
                ok = p50 <= 150 and p99 <= 400
                out.append(
                    f"- {cell}: {name} p50 {p50:,.0f} ms (goal: at most 150), p99 {p99:,.0f} ms (goal: at most "
                    f"400): {'met' if ok else 'not met'}."
                )
    efo = {r.shards: r for r in rows if r.mode == "rt-efo" and r.samples}
    small = min(efo, default=None)
    for shards in sorted(k for k in efo if small is not None and k >= 1000 and small < 1000):
        ratio = efo[shards].percentile(0.5) / efo[small].percentile(0.5)
        out.append(
            f"- real-time EFO at {shards:,} shards: p50 {ratio:.1f}x its {small}-shard p50 (goal: within 1.5x): "
            f"{'met' if ratio <= 1.5 else 'not met'}."
        )
    return out


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head


def report(rows: list[Row], args, jar_line: str, started: datetime, elapsed_s: float) -> str:
    errors = [f"- {r.shards} shards, {r.rate:g}/s, {r.mode}: {e}" for r in rows for e in r.errors]
    not_run = [m for m in MODES if m not in args.modes]
    parts = [
        "# Put-to-sink latency: micro-batch and real-time mode beside a raw client",
        "",
        f"Run {started:%Y-%m-%d %H:%M} UTC, {elapsed_s / 60:.1f} min, at commit {git_commit()}, on "
        f"{os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()}); "
        f"`.venv/bin/python benchmarks/latency.py {' '.join(sys.argv[1:])}`.",
        f"ferrokinesis on 127.0.0.1; Spark `{args.master}`; a fresh stream per row; {args.seconds:g} s of producing "
        f"per row after the reader is up; before the first row of each shard count of {WARM_UP_SHARDS:,} or more, an "
        f"unmeasured {WARM_UP_AT_SCALE_S:g} s micro-batch row of it (the JIT's warm-up). " + jar_line,
        "",
        table(rows),
        "",
        "*mode*: " + "; ".join(f"`{m}` = {DESCRIPTIONS[m]}" for m in args.modes) + ". *latency* = time the record "
        "was processed minus the producer's clock just before its PutRecords call (raw: when boto3 parsed the "
        "response or event; Spark: `System.currentTimeMillis()` in the query's last projection, as the row passes on "
        "to the `foreach` sink). *Python writer* = the same records timed by `time.time()` in the Python "
        "ForeachWriter's `process()` (PySpark buffers rows on their way to Python). *near batch start* = real-time "
        "records put from 0.5 s before to 1 s after a batch's start (the progress report's `timestamp`), *away* = the "
        "others. *micro-batch p50: batch / round* = the median `triggerExecution` of the recent batches that read "
        "records (Spark keeps the last 100 progress reports), and the median of the prefetch round durations those "
        "reports carry (the source's `lastRoundMs`: one round's fetch, from its Spark job's submission to its last "
        "result). "
        "*p99.9* only where a row has 10,000 samples. *start s* = from starting the reader until a probe record put "
        "to each shard came out of it. *lost / dup* = measured records never seen / seen twice.",
        "",
        "Goals (issue): real-time EFO within 20 ms of the raw client's p50 and at most 200 ms p99; real-time polling "
        "at most 150 ms p50 and 400 ms p99.",
        "",
        *(goals(rows) or ["- no row to judge them by."]),
        "",
        "Reading the numbers:",
        "",
        "- ferrokinesis's SubscribeToShard looks for new records every 200 ms and pushes an event each time "
        "(`POLL_INTERVAL_MS` in its `subscribe_to_shard.rs`), so on it any EFO reader's floor is about 100 ms p50 and "
        "200 ms max, plus the producer's call; Kinesis itself pushes within about 70 ms. The raw GetRecords loop calls "
        "every 200 ms: its floor is likewise about half that period.",
        "- *ferrokinesis CPU*: the emulator's own CPU while the row produced and drained, in cores of the 2. Each "
        "ferrokinesis subscription copies its stream's whole description every 200 ms (`store.get_stream` in its poll "
        "loop), so its work grows with shards x subscriptions: at 1,000 shards EFO it takes most of the machine, and "
        "every EFO reader's latency there (the raw client's too) measures the emulator, not the reader.",
        "- Everything shares 2 cores (ferrokinesis, Spark, the Python producer and readers); runs vary by tens of "
        "percent, and the tail is where that shows most.",
        "- *Python writer*: in real-time mode a Python `foreach` sink gets rows seconds late (PySpark's buffering, "
        "docs/real-time.md, Sinks); a JVM sink gets them at the *p50 / p99* columns' time. In micro-batch mode the "
        "sink is part of each batch, so the Python writer's time also delays the next batch: the micro-batch rows "
        "include that cost, as they would with any sink that slow.",
        "- Spark's `memory` sink is refused in real-time mode (`OPERATOR_OR_SINK_NOT_IN_ALLOWLIST`), hence `foreach`. "
        "Stopping a real-time query logs Spark ERROR lines (`InterruptedException`, the cut batch's commit aborted): "
        "expected when a query stops mid-batch.",
    ]
    boundaries = [f"- {r.shards} shards, {r.mode}: {r.boundary}" for r in rows if r.boundary]
    if boundaries:
        parts += ["", "Real-time rows around batch boundaries: the turnover (from one batch's deadline to the next "
                  "batch's start, when Spark writes its offset and commit logs and plans the next batch, and no task "
                  "reads), then p50 / p99 ms by put time from the nearest batch start, in 100 ms steps:", "",
                  *boundaries]
    if not_run:
        parts += ["", "Not run in this run: " + ", ".join(f"`{m}`" for m in not_run) + "."]
    if errors:
        parts += ["", "Problems:", *errors]
    return "\n".join(parts) + "\n"


# ------------------------------------------------------------------------------------------------------


@dataclass
class Bench:
    args: argparse.Namespace
    spark: object
    kinesis: Kinesis
    endpoint: str
    work: Path
    emulator_pid: int
    jar: Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", default="2", help="comma-separated shard counts (2)")
    parser.add_argument("--rate", default="100", help="comma-separated records/s put over the stream (100)")
    parser.add_argument("--cells", default=None, help="SHARDSxRATE pairs instead, e.g. 2x100,32x1000")
    parser.add_argument("--seconds", type=float, default=None, help="seconds of producing per row (60; quick: 10)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"subset of {','.join(MODES)}")
    parser.add_argument("--master", default="local[2]", help="Spark master (local[2])")
    parser.add_argument("--quick", action="store_true", help="10 s of producing per row: about 3 minutes")
    parser.add_argument("--output", default=str(REPO / "benchmarks" / "latency_results.md"), help="Markdown output")
    args = parser.parse_args(argv)
    if args.cells:
        args.cells = [(int(c.split("x")[0]), float(c.split("x")[1])) for c in args.cells.split(",")]
    else:
        args.cells = list(itertools.product([int(s) for s in args.shards.split(",")],
                                            [float(r) for r in args.rate.split(",")]))
    args.seconds = args.seconds or (10.0 if args.quick else 60.0)
    args.modes = [m for m in args.modes.split(",") if m]
    unknown = set(args.modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes: {sorted(unknown)}")
    return args


def warm_up(bench: Bench, shards: int = 1, rate: float = 50, seconds: float = 3.0) -> Row:
    """An unmeasured micro-batch read: first, so class loading is not charged to the first row; and before the first
    row at :data:`WARM_UP_SHARDS` or more, so the JIT compiling the fetch path is not either (see the constant)."""
    started = time.monotonic()
    row = Row(shards, rate, "warm-up")
    measured, bench.args.seconds = bench.args.seconds, seconds
    try:
        measure(bench, row, MODES["mb-default"])
    finally:
        bench.args.seconds = measured
    print(f"warm-up at {shards} shard(s) took {time.monotonic() - started:.1f} s", flush=True)
    return row


def summary(row: Row) -> str:
    return (
        f"    {row.samples:,} samples, p50 {fmt(row.percentile(0.5))} ms, p99 {fmt(row.percentile(0.99))} ms, "
        f"max {fmt(max(row.latencies_ms) if row.latencies_ms else None)} ms, start {fmt(row.start_s, 1)} s"
        + (f"; problems: {row.errors}" if row.errors else "")
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Stopped by a signal (timeout, kill), leave through the context managers: they stop Spark and the emulator,
    # which would otherwise go on in its own session, loading the next run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started_at = datetime.now(timezone.utc)
    clock = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="kinesis-latency-"))
    source_jar = connector_jar()
    jar = work / "kinesis-spark-connector.jar"
    shutil.copy(source_jar, jar)
    built = datetime.fromtimestamp(source_jar.stat().st_mtime, timezone.utc)
    jar_line = f"Connector jar: `{source_jar}` (built {built:%Y-%m-%d %H:%M} UTC)."
    print(f"{jar_line} Work dir {work}", flush=True)
    rows: list[Row] = []
    warmed: set[int] = set()
    with FerroKinesis(log_path=work / "ferrokinesis.log") as emulator:
        kinesis = Kinesis(emulator.endpoint)
        conf = {"spark.driver.extraJavaOptions": JVM_OPTIONS, "spark.executor.extraJavaOptions": JVM_OPTIONS}
        spark = local_spark("kinesis-spark-latency", jar=jar, master=args.master, conf=conf)
        spark.sparkContext.setLogLevel("ERROR")  # stopping queries logs harmless interruptions at WARN
        bench = Bench(args, spark, kinesis, emulator.endpoint, work, emulator.pid, jar)
        try:
            if any(MODES[m].kind in ("micro-batch", "real-time") for m in args.modes):
                warm_up(bench)
            for shards, rate in args.cells:
                if shards >= WARM_UP_SHARDS and shards not in warmed and any(
                        MODES[m].kind in ("micro-batch", "real-time") for m in args.modes):
                    warmed.add(shards)
                    print(summary(warm_up(bench, shards, rate, WARM_UP_AT_SCALE_S)), flush=True)
                for name in args.modes:
                    row = Row(shards, rate, name)
                    rows.append(row)
                    print(f"  {shards} shards, {rate:g} records/s, {name} ...", flush=True)
                    measure(bench, row, MODES[name])
                    print(summary(row), flush=True)
        finally:
            spark.stop()
            kinesis.close()

    text = report(rows, args, jar_line, started_at, time.monotonic() - clock)
    return write_results(text, args.output, any(r.errors for r in rows), work)


if __name__ == "__main__":
    sys.exit(main())
