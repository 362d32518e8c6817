"""Makes the awslabs checkpoints kept here, with the real awslabs connector: run by hand, never by the tests.

For each of the awslabs connector's two places for its shard positions (``hdfs``: files under the checkpoint;
``dynamodb``: a DynamoDB table on moto), in ``<variant>/``:

1. kinesis-local, persisting into ``<variant>/kinesis-data/``, gets stream ``awslabs-switch`` with two shards
   (retention raised to a year, so that replays long after keep every record) and, in each shard, plain records
   and KPL aggregates of five user records;
2. the awslabs connector's query (``awslabs_query.py``, ``spark-submit`` of Spark 4.1 with the awslabs jar alone)
   reads it from TRIM_HORIZON, six user records per shard and batch (so both batches end inside an
   aggregate), until ``BATCHES`` batches have committed, and
   stops; its checkpoint location is kept as ``<variant>/checkpoint/``, the rows of its committed batches as
   ``<variant>/awslabs-read.jsonl`` (rows of a batch it had not committed are dropped: Spark runs that batch again);
3. for ``dynamodb``, the table's items are kept as ``<variant>/dynamodb-items.json``;
4. after the query stopped, shard 1 is split and more records are put in every open shard: the switched query must
   finish shard 1 from where awslabs left it, then read its children.

``<variant>/produced.jsonl`` holds every user record put, in order: ``[shard, sequence number, sub-sequence number or
null, partition key, base64 data]``.

Usage (from tests-integration, with the repository's .venv; see README.md here for the awslabs build):
    python awslabs_checkpoints/make.py --awslabs-jar JAR --spark-submit SPARK_HOME/bin/spark-submit
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY, KinesisEmulator  # noqa: E402
from harness.kinesis import Kinesis  # noqa: E402
from harness.kpl_producer import Producer, in_shard, users  # noqa: E402
from harness.moto import MotoServer  # noqa: E402

HERE = Path(__file__).resolve().parent
STREAM = "awslabs-switch"
TABLE = "kdsc_us-east-1_awslabs-switch"
BATCHES = 2
SETTINGS = {"SHOULD_PERSIST_DATA": "true", "PERSIST_INTERVAL": "500ms"}


def produce(producer: Producer, tag: str) -> None:
    """In each shard, in turn: two plain records, an aggregate of five, a plain record, an aggregate of five."""
    for shard in producer.shards:
        for i in range(2):
            producer.put_plain(shard, f"{tag}-{shard}-p{i}", f"{tag}-{shard}-p{i}".encode())
        producer.put_aggregate(shard, in_shard(producer, shard, users(f"{tag}-{shard}-a", 5)))
        producer.put_plain(shard, f"{tag}-{shard}-p2", f"{tag}-{shard}-p2".encode())
        producer.put_aggregate(shard, in_shard(producer, shard, users(f"{tag}-{shard}-b", 5)))


def make(variant: str, awslabs_jar: Path, spark_submit: str) -> None:
    out = HERE / variant
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    settings = {**SETTINGS, "PERSIST_PATH": str(out / "kinesis-data")}
    logs = Path("/tmp/awslabs-make") / variant
    logs.mkdir(parents=True, exist_ok=True)
    with KinesisEmulator(logs / "emulator.log", settings) as emulator, MotoServer(logs / "moto.log") as moto:
        kinesis = Kinesis(emulator.endpoint)
        kinesis.create_stream(STREAM, 2)
        kinesis.wait_active(STREAM)
        kinesis.client.increase_stream_retention_period(StreamName=STREAM, RetentionPeriodHours=8760)
        producer = Producer(kinesis, STREAM)
        produce(producer, "before")

        env = {
            **os.environ,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            # The awslabs connector has no DynamoDB endpoint option: the SDK's own setting points it at moto.
            "AWS_ENDPOINT_URL_DYNAMODB": moto.endpoint,
            "SPARK_LOCAL_IP": "127.0.0.1",
            # spark-submit finds its Spark through the Python beside it.
            "PATH": f"{Path(spark_submit).resolve().parent}{os.pathsep}{os.environ['PATH']}",
        }
        checkpoint, rows = out / "checkpoint", logs / "rows"
        shutil.rmtree(rows, ignore_errors=True)
        committer = "DYNAMODB" if variant == "dynamodb" else "HDFS"
        args = [emulator.endpoint, STREAM, str(checkpoint), str(rows), str(BATCHES), committer]
        if variant == "dynamodb":
            args.append(TABLE)
        subprocess.run(
            [spark_submit, "--master", "local[2]", "--jars", str(awslabs_jar), str(HERE / "awslabs_query.py"), *args],
            env=env,
            check=True,
            stdout=open(logs / "awslabs.log", "wb"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )
        committed = max(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
        read = []
        for batch in range(committed + 1):
            path = rows / f"batch-{batch}.jsonl"
            if path.is_file():
                read.extend(path.read_text().splitlines())
        (out / "awslabs-read.jsonl").write_text("".join(line + "\n" for line in read))
        if variant == "dynamodb":
            items = moto.client("dynamodb").scan(TableName=TABLE, ConsistentRead=True)["Items"]
            (out / "dynamodb-items.json").write_text(json.dumps(items, indent=1, sort_keys=True) + "\n")

        # After the old query stopped: shard 1 splits, and every open shard gets more.
        kinesis.split_shard(STREAM, producer.shards[1])
        kinesis.wait_active(STREAM)
        producer = reopen(kinesis, producer)
        produce(producer, "after")
        kinesis.close()
        # The emulator writes its data file every PERSIST_INTERVAL: let it write the last puts before it stops.
        time.sleep(3)
        (out / "produced.jsonl").write_text(
            "".join(
                json.dumps([s, seq, sub, key, base64.b64encode(data).decode()]) + "\n"
                for s, seq, sub, key, data in producer.expected
            )
        )
    stored = json.loads((out / "kinesis-data" / "kinesis-data.json").read_text())["streams"]
    records = sum(len(records) for stream in stored.values() for records in stream["shards"].values())
    put = len({(row[0], row[1]) for row in producer.expected})
    assert records == put, f"the emulator's data file holds {records} records of the {put} put"
    # Spark's local file system leaves checksum files; they carry nothing the start reads.
    for crc in checkpoint.rglob("*.crc"):
        crc.unlink()
    print(f"{variant}: {committed + 1} batches committed, {len(read)} rows read by awslabs", flush=True)


def reopen(kinesis: Kinesis, old: Producer) -> Producer:
    """A producer for the stream's open shards now, that keeps the rows put so far."""
    fresh = Producer(kinesis, old.name)
    open_ids = {s["ShardId"] for s in kinesis.open_shards(old.name)}
    fresh.ranges = {k: v for k, v in fresh.ranges.items() if k in open_ids}
    fresh.expected = old.expected
    return fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--awslabs-jar", type=Path, required=True)
    parser.add_argument("--spark-submit", required=True)
    parser.add_argument("--variant", choices=["hdfs", "dynamodb"], action="append")
    args = parser.parse_args()
    for variant in args.variant or ["hdfs", "dynamodb"]:
        make(variant, args.awslabs_jar, args.spark_submit)


if __name__ == "__main__":
    main()
