"""Write throughput of the connector's sink at Kinesis's per-shard write limits, through the limits proxy
(tests-integration/harness/limits_proxy.py: 1,000 records/s and 1 MiB/s of data and partition keys per shard, over
1 s windows, refusing the excess with ProvisionedThroughputExceededException as Kinesis does) in front of ferrokinesis
(dev/ferrokinesis: fast enough that the proxy's limits, not the emulator, are the ceiling).

Each case writes a cached batch DataFrame with ``df.write.format("kinesis")`` into a fresh stream, timed from
``save()`` to its return (every row acknowledged), for:

* rows of 100 B, 1 KB and 10 KB (data + partition key), KPL aggregation off and on;
* 2 and 8 shards;
* 1 and 4 writer tasks per shard: the DataFrame has shards x tasks partitions, and partition p's rows carry
  partition keys that Kinesis places in shard p mod shards, so each shard is written by exactly that many tasks
  at once (Spark runs ``local[shards x tasks]``). Tasks of one executor share a shard's pacer; with
  ``--executors 2`` the tasks run on two executor JVMs (``local-cluster``), whose pacers find each other only
  through the throttling they cause.

Printed per case: rows/s over ``save()``; the share of the shards' limit used (the busier of records/s and bytes/s
as Kinesis counts them: for aggregates it counts the aggregate, a few bytes per row more than the rows), over the
time the sink was writing (from the first to the last PutRecords that stored data, at the proxy) and over the
whole ``save()`` (Spark's job start and end included); the entries the proxy throttled, as a share of the
Kinesis records written; and the CPU seconds that the Spark JVM, the proxy and the emulator used during ``save()``
(all three share this machine's cores: when their sum nears cores x seconds, the writers run short of CPU, which on
AWS, where Kinesis runs elsewhere, they would not). ``--baseline`` adds, for
2 shards and 1 task per shard, the same cases with ``pacing=false`` (the sink before pacing: it found each shard's
rate by being refused).

    .venv/bin/python benchmarks/write_throughput.py --baseline   # about 15 minutes; writes benchmarks/write_results.md
    .venv/bin/python benchmarks/write_throughput.py --shards 2 --tasks 1 --row-bytes 100 --seconds 10  # one quick case
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests-integration"))

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY  # noqa: E402
from harness.ferrokinesis import JVM_OPTIONS, FerroKinesis  # noqa: E402
from harness.kinesis import Kinesis  # noqa: E402
from harness.limits_proxy import MIB, LimitsProxy  # noqa: E402
from harness.spark import local_spark  # noqa: E402

WRITE_RECORDS_PER_S = 1000  # per shard
WRITE_BYTES_PER_S = MIB  # per shard
KEY_CHARS = 8
KEYS_PER_SHARD = 64


@dataclass(frozen=True)
class Case:
    shards: int
    tasks_per_shard: int
    row_bytes: int  # data + partition key
    aggregation: bool
    pacing: bool = True


@dataclass
class Result:
    case: Case
    rows: int
    seconds: float
    kinesis_records: int
    kinesis_bytes: int
    calls: int
    throttled: int
    writing_seconds: float  # first to last PutRecords that stored data, at the proxy
    # Per shard: (records, bytes, seconds from its first to its last PutRecords that stored data).
    shard_spans: list[tuple[int, int, float]] = field(default_factory=list)
    # CPU seconds during save(): the Spark JVM, the proxy, the emulator.
    cpu: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def rows_s(self) -> float:
        return self.rows / self.seconds

    def share_over(self, seconds: float) -> float:
        """How busy the shards were kept over ``seconds``: the binding one of their two limits."""
        records = self.kinesis_records / seconds / (self.case.shards * WRITE_RECORDS_PER_S)
        size = self.kinesis_bytes / seconds / (self.case.shards * WRITE_BYTES_PER_S)
        return max(records, size)

    @property
    def share(self) -> float:
        """While the sink was writing: from its first stored PutRecords to its last, at the proxy."""
        return self.share_over(self.writing_seconds)

    @property
    def wall_share(self) -> float:
        """Over the whole ``save()``, Spark's job start and end included."""
        return self.share_over(self.seconds)

    @property
    def shard_shares(self) -> list[float]:
        """Each shard's share while it was written (first to last of its stored PutRecords): a shard whose rows
        ran out before the others' does not count as idle."""
        return [
            max(records / (span * WRITE_RECORDS_PER_S), size / (span * WRITE_BYTES_PER_S))
            for records, size, span in self.shard_spans
            if span > 0
        ]

    @property
    def per_shard_text(self) -> str:
        """The mean and the lowest of :attr:`shard_shares`, as percentages."""
        shares = self.shard_shares
        if not shares:
            return "-"
        return f"{100 * sum(shares) / len(shares):.1f}% / {100 * min(shares):.1f}%"

    @property
    def cpu_text(self) -> str:
        return " / ".join(f"{seconds:.1f}" for seconds in self.cpu)

    @property
    def throttled_share(self) -> float:
        return self.throttled / max(1, self.kinesis_records)


def cpu_seconds(pid: int, with_children: bool = False) -> float:
    """User plus system CPU time of a process so far (Linux ``/proc/<pid>/stat``, fields 14 and 15, in clock ticks),
    and with ``with_children`` that of the processes it started and that still run (``local-cluster``'s executors)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat") if with_children else [Path(f"/proc/{pid}/stat")]:
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if stat.parent.name == str(pid) or (with_children and _descends(int(stat.parent.name), pid)):
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            return False
        if pid == ancestor:
            return True
    return False


@dataclass(frozen=True)
class Processes:
    """The processes whose CPU time a case reports: the Spark JVM (with its executor JVMs), the proxy, the emulator."""

    spark: int
    proxy: int
    emulator: int

    def cpu(self) -> tuple[float, float, float]:
        return cpu_seconds(self.spark, with_children=True), cpu_seconds(self.proxy), cpu_seconds(self.emulator)


def rows_for(case: Case, seconds: float) -> int:
    """Rows that keep the case's shards at their limit for about ``seconds``."""
    per_shard = WRITE_BYTES_PER_S / case.row_bytes
    if not case.aggregation:
        per_shard = min(WRITE_RECORDS_PER_S, per_shard)
    return int(case.shards * per_shard * seconds)


def keys_by_shard(shards: list[dict]) -> list[list[str]]:
    """For each shard (in the listing's order), partition keys of ``KEY_CHARS`` characters that Kinesis places in
    it: the MD5 of the key, as a 128-bit number, within the shard's hash key range."""
    ranges = [(int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"])) for s in shards]
    pools: list[list[str]] = [[] for _ in shards]
    n = 0
    while min(len(p) for p in pools) < KEYS_PER_SHARD:
        key = f"k{n:0{KEY_CHARS - 1}d}"
        n += 1
        hashed = int.from_bytes(hashlib.md5(key.encode()).digest(), "big")
        for i, (low, high) in enumerate(ranges):
            if low <= hashed <= high and len(pools[i]) < KEYS_PER_SHARD:
                pools[i].append(key)
    return pools


def frame(spark, case: Case, rows: int, pools: list[list[str]]):
    """Rows of exactly ``case.row_bytes`` bytes in ``shards x tasks`` partitions; partition p's keys go to shard p mod
    shards."""
    from pyspark.sql import functions as F

    data = case.row_bytes - KEY_CHARS
    keys = F.array(*[F.array(*[F.lit(k) for k in pool]) for pool in pools])
    partitions = case.shards * case.tasks_per_shard
    return (
        spark.range(0, rows, 1, partitions)
        .withColumn("shard", F.spark_partition_id() % case.shards)
        .select(
            F.element_at(F.element_at(keys, F.col("shard") + 1), (F.col("id") % KEYS_PER_SHARD + 1).cast("int"))
            .alias("partitionKey"),
            F.concat(F.lpad(F.col("id").cast("string"), 10, "0"), F.lit("x" * (data - 10))).alias("data"),
        )
    )


def write(df, endpoint: str, stream: str, case: Case) -> float:
    started = time.monotonic()
    (df.write.format("kinesis").option("streamName", stream).option("region", REGION).option("endpoint", endpoint)
       .option("awsAccessKey", ACCESS_KEY).option("awsSecretKey", SECRET_KEY)
       .option("aggregation", str(case.aggregation).lower()).option("pacing", str(case.pacing).lower())
       .mode("append").save())
    return time.monotonic() - started


def run_case(spark, kinesis: Kinesis, proxy: LimitsProxy, case: Case, seconds: float, processes: Processes) -> Result:
    stream = f"bench-{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(stream, case.shards)
    shards = kinesis.shards(stream)
    rows = rows_for(case, seconds)
    df = frame(spark, case, rows, keys_by_shard(shards)).cache()
    df.count()  # rows made before the clock starts
    time.sleep(1.5)  # the proxy's 1 s windows forget the previous case
    proxy.reset()
    cpu_before = processes.cpu()
    elapsed = write(df, proxy.endpoint, stream, case)
    cpu = tuple(after - before for after, before in zip(processes.cpu(), cpu_before, strict=True))
    stats = proxy.stats()
    per_shard = [proxy.shard_stats(stream, s["ShardId"], "PutRecords", stats) for s in shards]
    puts = proxy.operation_stats("PutRecords", stats)
    df.unpersist()
    kinesis.delete_stream(stream)
    return Result(case, rows, elapsed, kinesis_records=sum(p["records"] for p in per_shard),
                  kinesis_bytes=sum(p["bytes"] for p in per_shard), calls=int(puts["calls"]),
                  throttled=sum(p["throttled_records"] for p in per_shard), writing_seconds=puts["data_span_s"],
                  shard_spans=[(p["records"], p["bytes"], p["data_span_ms"] / 1000) for p in per_shard],
                  cpu=cpu)  # type: ignore[arg-type]


def spark_session(slots: int, executors: int):
    conf = {"spark.driver.extraJavaOptions": JVM_OPTIONS, "spark.driver.memory": "4g"}
    if executors > 1:
        conf["spark.executor.extraJavaOptions"] = JVM_OPTIONS
        per_executor = -(-slots // executors)
        master = f"local-cluster[{executors},{per_executor},2048]"
    else:
        master = f"local[{slots}]"
    return local_spark("kinesis-spark-write-benchmark", master=master, conf=conf)


def run(cases: list[Case], seconds: float, executors: int) -> list[Result]:
    results = []
    slots = max(c.shards * c.tasks_per_shard for c in cases)
    with tempfile.TemporaryDirectory() as tmp, FerroKinesis(log_path=Path(tmp) / "ferrokinesis.log") as emulator:
        kinesis = Kinesis(emulator.endpoint)
        spark = spark_session(slots, executors)
        with LimitsProxy(emulator.endpoint, log_path=Path(tmp) / "proxy.log") as proxy:
            processes = Processes(spark._jvm.java.lang.ProcessHandle.current().pid(), proxy.pid, emulator.pid)
            # The JVM's JIT and the clients warmed up, for both paths, with as many writer tasks as the run's
            # largest shard count: a JIT compiling beside a measured case takes the cores the proxy and the emulator
            # need.
            warm_shards = max(c.shards for c in cases)
            for aggregation in (False, True):
                run_case(spark, kinesis, proxy, Case(warm_shards, 1, 100, aggregation), 3, processes)
            for case in cases:
                results.append(run_case(spark, kinesis, proxy, case, seconds, processes))
                r = results[-1]
                print(f"  {case}: {r.rows_s:,.0f} rows/s, {100 * r.share:.1f}% of the limit "
                      f"({100 * r.wall_share:.1f}% over save(); per shard while written {r.per_shard_text}), "
                      f"{100 * r.throttled_share:.2f}% throttled; CPU s Spark / proxy / emulator {r.cpu_text}", file=sys.stderr, flush=True)
        spark.stop()
        kinesis.close()
    return results


def table(results: list[Result]) -> str:
    lines = [
        "| shards | tasks per shard | row bytes | aggregation | pacing | rows | seconds | rows/s | Kinesis records/s "
        "| Kinesis MB/s | % of limit, writing | % of limit, save() | % of limit per shard, mean / lowest | PutRecords calls | throttled entries "
        "| throttled / written | CPU s: Spark / proxy / emulator |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.case
        lines.append(
            f"| {c.shards} | {c.tasks_per_shard} | {c.row_bytes:,} | {'on' if c.aggregation else 'off'} "
            f"| {'on' if c.pacing else 'off'} | {r.rows:,} | {r.seconds:.1f} | {r.rows_s:,.0f} "
            f"| {r.kinesis_records / r.seconds:,.0f} | {r.kinesis_bytes / r.seconds / 1e6:.2f} "
            f"| {100 * r.share:.1f}% | {100 * r.wall_share:.1f}% | {r.per_shard_text} | {r.calls:,} | {r.throttled:,} "
            f"| {100 * r.throttled_share:.2f}% | {r.cpu_text} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 4], help="writer tasks per shard")
    parser.add_argument("--row-bytes", type=int, nargs="+", default=[100, 1024, 10_240])
    parser.add_argument("--aggregation", choices=["on", "off", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=20.0, help="each case's length at the limit")
    parser.add_argument("--executors", type=int, default=1, help="2: a local-cluster of two executor JVMs")
    parser.add_argument("--baseline", action="store_true", help="also pacing=false, 2 shards, 1 task per shard")
    parser.add_argument("--output", help="Markdown file for the table (default: print only, unless the full matrix)")
    args = parser.parse_args()
    aggregation = {"on": [True], "off": [False], "both": [False, True]}[args.aggregation]
    cases = [Case(s, t, b, a) for s in args.shards for t in args.tasks for b in args.row_bytes for a in aggregation]
    if args.baseline:
        cases = [Case(2, 1, b, a, pacing=False) for b in args.row_bytes for a in aggregation] + cases
    results = run(cases, args.seconds, args.executors)
    text = table(results)
    print(text)
    command = "benchmarks/write_throughput.py " + " ".join(sys.argv[1:])
    output = args.output or (str(REPO / "benchmarks" / "write_results.md") if len(sys.argv) == 2 and args.baseline
                             else None)
    if output:
        header = (
            f"# Sink write throughput\n\n`{command.strip()}`, {datetime.now(timezone.utc):%Y-%m-%d}, "
            f"{platform.machine()}, {os.cpu_count()} cores, Spark {'local-cluster' if args.executors > 1 else 'local'}"
            ", through the limits proxy (1,000 records/s and 1 MiB/s per shard) in front of ferrokinesis.\n\n"
        )
        Path(output).write_text(header + text + "\n")


if __name__ == "__main__":
    main()
