"""Every script in examples/ runs, as a user would run it (``python examples/<name>.py ...``, credentials from
the environment), against the emulator, and prints what it should.

The write-then-read example (also run on every other Spark line, ``line_smoke``) needs the sink, and the enhanced
fan-out one ``consumerMode=efo``: every connector jar has both, so an error from either fails its test.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.jobs import run_checked
from harness.spark import REPO_ROOT
from pyspark.sql import functions as F

EXAMPLES = REPO_ROOT / "examples"
EXAMPLE_TIMEOUT_S = 600


def example_env() -> dict[str, str]:
    """Credentials for the AWS SDK's default chain, and a small local Spark, as a user's shell would set them."""
    return {
        **os.environ,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_SUBMIT_ARGS": "--master local[2] --conf spark.ui.enabled=false pyspark-shell",
    }


def run_example(name: str, *args: str, cwd) -> str:
    result = run_checked(
        [sys.executable, str(EXAMPLES / name), *args], env=example_env(), cwd=cwd, timeout=EXAMPLE_TIMEOUT_S
    )
    return result.stdout


def test_available_now_batch_reads_what_arrived_since_the_last_run(spark, kinesis, stream, emulator, tmp_path):
    name = stream(2)
    first = [(f"key-{i % 3}", f"first-{i}".encode()) for i in range(30)]
    kinesis.put_records(name, first)
    args = ["--stream", name, "--region", REGION, "--endpoint", emulator.endpoint]
    args += ["--checkpoint", str(tmp_path / "checkpoint"), "--output", str(tmp_path / "counts")]

    assert "read 30 records in this run" in run_example("available_now_batch.py", *args, cwd=tmp_path)
    second = [(f"key-{i % 4}", f"second-{i}".encode()) for i in range(20)]
    kinesis.put_records(name, second)
    assert "read 20 records in this run" in run_example("available_now_batch.py", *args, cwd=tmp_path)

    counts = spark.read.parquet(str(tmp_path / "counts")).groupBy("partitionKey").agg(F.sum("records").alias("n"))
    assert {row.partitionKey: row.n for row in counts.collect()} == Counter(key for key, _ in first + second)


@pytest.mark.line_smoke
def test_write_then_read_round_trip(stream, emulator, tmp_path):
    name = stream(2)
    out = run_example(
        "write_then_read.py", "--stream", name, "--region", REGION, "--endpoint", emulator.endpoint,
        "--records", "200", cwd=tmp_path,
    )  # fmt: skip
    assert "wrote 200 records" in out
    assert "round trip OK: 200 records read back, each once, with their partition keys" in out


def test_efo_read(kinesis, stream, emulator, tmp_path):
    name = stream(2)
    kinesis.put_records(name, [(f"key-{i}", f"efo-{i}".encode()) for i in range(50)])
    out = run_example(
        "efo_read.py", "--stream", name, "--region", REGION, "--endpoint", emulator.endpoint,
        "--consumer", "example-consumer", "--expect", "50", cwd=tmp_path,
    )  # fmt: skip
    assert "read 50 records with enhanced fan-out" in out
    arn = kinesis.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]
    consumers = kinesis.client.list_stream_consumers(StreamARN=arn)["Consumers"]
    assert not [c for c in consumers if "example-consumer" in c["ConsumerName"]], consumers  # deregistered


def test_demo_word_count(tmp_path):
    out = run_example("demo_word_count.py", cwd=tmp_path)
    assert "OK: " in out and "words counted, exactly as sent." in out
