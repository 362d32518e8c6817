"""Write throughput of the connector's sink, through the Kinesis limits proxy (tests-integration/harness/limits_proxy.py)
with Kinesis's real per-shard write limits (1,000 records/s and 1 MiB/s of data and partition keys per shard).

For 100-byte and 10 KB rows, with and without KPL aggregation: a batch DataFrame of rows (2 partitions, the default
sink options otherwise) is written with ``df.write.format("kinesis")`` into a fresh stream of ``--shards`` shards,
and timed from ``save()`` to its return (every row acknowledged). Printed per case:

* rows/s and MB/s (rows' data + partition key bytes, MB = 10^6 bytes);
* the limit: what the shards could take of such rows, ``shards x min(1,000 records/s, 1 MiB/s / row bytes)``
  without aggregation, ``shards x 1 MiB/s / row bytes`` with it (aggregates lift the records/s limit; the bytes
  limit counts the aggregate, a few bytes per row more than the rows), and rows/s as a share of it;
* for the cases without aggregation, the emulator's own ceiling: the same rows put by one plain boto3 client in
  calls of 500, straight to the emulator, into a fresh stream, in the same run; and rows/s as a share of the lower
  of the limit and that ceiling (the emulator is CPU-bound and slows down as its shards fill: at 100-byte rows it
  takes fewer records per second than two shards' quota, so that case measures the emulator);
* Kinesis records written, PutRecords calls and the entries the proxy throttled (from its counters).

A small write first warms the JVM and clients up. Runs in about 2 minutes.

    .venv/bin/python benchmarks/write_throughput.py            # prints a Markdown table, writes benchmarks/write_results.md
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests-integration"))

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY, KinesisEmulator  # noqa: E402
from harness.kinesis import Kinesis  # noqa: E402
from harness.limits_proxy import MIB, LimitsProxy  # noqa: E402
from harness.spark import local_spark  # noqa: E402

WRITE_RECORDS_PER_S = 1000  # per shard
WRITE_BYTES_PER_S = MIB  # per shard


@dataclass(frozen=True)
class Case:
    row_bytes: int  # data + partition key
    aggregation: bool
    rows: int


@dataclass
class Result:
    case: Case
    seconds: float
    limit_rows_s: float
    ceiling_rows_s: float | None
    kinesis_records: int
    calls: int
    throttled: int

    @property
    def rows_s(self) -> float:
        return self.case.rows / self.seconds

    @property
    def mb_s(self) -> float:
        return self.rows_s * self.case.row_bytes / 1e6


def cases(shards: int) -> list[Case]:
    """A few seconds of each at the limit (100-byte rows without aggregation: fewer, the emulator slows as it fills)."""
    def rows(row_bytes: int, aggregation: bool, seconds: float) -> int:
        return int(limit(shards, row_bytes, aggregation) * seconds)

    return [Case(100, False, rows(100, False, 3)), Case(100, True, rows(100, True, 5)),
            Case(10_240, False, rows(10_240, False, 10)), Case(10_240, True, rows(10_240, True, 10))]


def emulator_ceiling(kinesis: Kinesis, shards: int, case: Case) -> float:
    """Rows/s one boto3 client puts of the same rows, in calls of 500, straight into a fresh stream."""
    stream = f"ceiling-{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(stream, shards)
    data = case.row_bytes - 8
    records = [(f"{i:08d}", (f"{i:010d}" + "x" * (data - 10)).encode()) for i in range(case.rows)]
    started = time.monotonic()
    kinesis.put_records(stream, records)
    seconds = time.monotonic() - started
    kinesis.delete_stream(stream)
    return case.rows / seconds


def limit(shards: int, row_bytes: int, aggregation: bool) -> float:
    per_shard = WRITE_BYTES_PER_S / row_bytes
    return shards * (per_shard if aggregation else min(WRITE_RECORDS_PER_S, per_shard))


def frame(spark, case: Case):
    """Rows of exactly ``case.row_bytes`` bytes: an 8-character key and the rest as data."""
    data = case.row_bytes - 8
    return spark.range(0, case.rows, 1, 2).selectExpr(
        "LPAD(CAST(id AS STRING), 8, '0') AS partitionKey",
        f"CONCAT(LPAD(CAST(id AS STRING), 10, '0'), REPEAT('x', {data - 10})) AS data",
    )


def write(df, endpoint: str, stream: str, aggregation: bool) -> float:
    started = time.monotonic()
    (df.write.format("kinesis").option("streamName", stream).option("region", REGION).option("endpoint", endpoint)
       .option("awsAccessKey", ACCESS_KEY).option("awsSecretKey", SECRET_KEY)
       .option("aggregation", str(aggregation).lower()).mode("append").save())
    return time.monotonic() - started


def run(shards: int) -> list[Result]:
    results = []
    with tempfile.TemporaryDirectory() as tmp, KinesisEmulator(log_path=Path(tmp) / "emulator.log") as emulator:
        kinesis = Kinesis(emulator.endpoint)
        spark = local_spark("kinesis-spark-write-benchmark")
        with LimitsProxy(emulator.endpoint, log_path=Path(tmp) / "proxy.log") as proxy:
            warm = f"warm-{uuid.uuid4().hex[:6]}"
            kinesis.create_stream(warm, shards)
            write(frame(spark, Case(100, False, 2000)), proxy.endpoint, warm, False)
            kinesis.delete_stream(warm)
            for case in cases(shards):
                stream = f"bench-{uuid.uuid4().hex[:8]}"
                kinesis.create_stream(stream, shards)
                df = frame(spark, case).cache()
                df.count()  # rows made before the clock starts
                time.sleep(1.5)  # the proxy's 1 s windows forget the previous case
                proxy.reset()
                seconds = write(df, proxy.endpoint, stream, case.aggregation)
                stats = proxy.stats()
                shard_ids = [s["ShardId"] for s in kinesis.shards(stream)]
                per_shard = [proxy.shard_stats(stream, s, "PutRecords", stats) for s in shard_ids]
                ceiling = None if case.aggregation else emulator_ceiling(kinesis, shards, case)
                results.append(Result(case, seconds, limit(shards, case.row_bytes, case.aggregation), ceiling,
                                      kinesis_records=sum(p["records"] for p in per_shard),
                                      calls=proxy.operation_stats("PutRecords", stats)["calls"],
                                      throttled=sum(p["throttled_records"] for p in per_shard)))
                df.unpersist()
                kinesis.delete_stream(stream)
                print(f"  {case}: {results[-1].rows_s:,.0f} rows/s", file=sys.stderr)
        spark.stop()
        kinesis.close()
    return results


def table(results: list[Result], shards: int) -> str:
    lines = [
        f"| row bytes | aggregation | rows | seconds | rows/s | MB/s | limit rows/s ({shards} shards) | % of limit "
        "| emulator ceiling rows/s | % of lower | Kinesis records | PutRecords calls | throttled entries |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ceiling = "–" if r.ceiling_rows_s is None else f"{r.ceiling_rows_s:,.0f}"
        lower = min(r.limit_rows_s, r.ceiling_rows_s or r.limit_rows_s)
        lines.append(
            f"| {r.case.row_bytes:,} | {'on' if r.case.aggregation else 'off'} | {r.case.rows:,} | {r.seconds:.1f} "
            f"| {r.rows_s:,.0f} | {r.mb_s:.2f} | {r.limit_rows_s:,.0f} | {100 * r.rows_s / r.limit_rows_s:.0f}% "
            f"| {ceiling} | {100 * r.rows_s / lower:.0f}% | {r.kinesis_records:,} | {r.calls:,} | {r.throttled:,} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--output", default=str(REPO / "benchmarks" / "write_results.md"))
    args = parser.parse_args()
    results = run(args.shards)
    text = table(results, args.shards)
    print(text)
    header = (
        f"# Sink write throughput\n\n`benchmarks/write_throughput.py --shards {args.shards}`, "
        f"{datetime.now(timezone.utc):%Y-%m-%d}, {platform.machine()}, Spark local[2], through the limits proxy "
        "(1,000 records/s and 1 MiB/s per shard) in front of the emulator.\n\n"
    )
    Path(args.output).write_text(header + text + "\n")


if __name__ == "__main__":
    main()
