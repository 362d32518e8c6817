"""The awslabs connector's own README examples, run unchanged in ``spark-shell`` against the emulator, with our jar
in place of theirs: what a user who switches connectors sees.

The examples are quoted in ``awslabs_readme/``; only what the README leaves to its reader (the endpoint, the folder
watched for ``STOP_LOCK``, imports) comes from ``preamble.scala``. Credentials come from the environment, through the
default provider chain, as the README assumes.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import boto3
import pyspark
import pytest

from harness.emulator import ACCESS_KEY, SECRET_KEY
from harness.spark import connector_jar

EXAMPLES = Path(__file__).parent / "awslabs_readme"
SPARK_HOME = Path(pyspark.__file__).parent
# The README's region and stream name, kept as they are.
README_REGION = "us-east-2"
README_STREAM = "teststream"
AWSLABS_SCHEMA = [
    "|-- data: binary (nullable = true)",
    "|-- streamName: string (nullable = true)",
    "|-- partitionKey: string (nullable = true)",
    "|-- sequenceNumber: string (nullable = true)",
    "|-- approximateArrivalTimestamp: timestamp (nullable = true)",
]


class SparkShell:
    """A ``spark-shell`` that pastes the given files in order, its stdout captured in a file to read while it runs."""

    def __init__(self, scripts: list[Path], env: dict[str, str], out: Path) -> None:
        self.out = out
        commands = "".join(f":paste {script}\n" for script in scripts) + ":quit\n"
        args = [
            str(SPARK_HOME / "bin" / "spark-shell"),
            "--master", "local[2]",
            "--driver-memory", "1g",
            "--jars", str(connector_jar()),
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.sql.shuffle.partitions=2",
            "--conf", "spark.driver.host=127.0.0.1",
            "--conf", "spark.driver.bindAddress=127.0.0.1",
        ]  # fmt: skip
        self._stdout = out.open("wb")
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=self._stdout,
            stderr=subprocess.STDOUT,
            env={**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1", **env},
        )
        assert self.process.stdin is not None
        self.process.stdin.write(commands.encode())
        self.process.stdin.close()

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def wait_for(self, what: str, found, timeout: float):  # noqa: ANN001, ANN201 (a predicate on the output)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = found(self.output())
            if result:
                return result
            if self.process.poll() is not None:
                break
            time.sleep(1)
        pytest.fail(f"spark-shell: no {what} within {timeout:.0f} s; its output:\n{self.output()[-6000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stdout.close()


def last_console_counts(output: str) -> dict[str, int] | None:
    """The (data, count) rows of the last batch the console sink printed, or None before the first one."""
    batches = re.split(r"^Batch: \d+\s*$", output, flags=re.MULTILINE)
    if len(batches) < 2:
        return None
    rows = re.findall(r"^\|([^|]*)\|\s*(\d+)\|\s*$", batches[-1], flags=re.MULTILINE)
    return {data.strip(): int(count) for data, count in rows}


@pytest.fixture
def readme_stream(emulator):  # noqa: ANN001, ANN201
    """The README's stream, ``teststream`` in ``us-east-2``, with one shard; a boto3 client for it."""
    client = boto3.client(
        "kinesis",
        endpoint_url=emulator.endpoint,
        region_name=README_REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    client.create_stream(StreamName=README_STREAM, ShardCount=1)
    client.get_waiter("stream_exists").wait(StreamName=README_STREAM, WaiterConfig={"Delay": 0.2})
    yield client
    client.delete_stream(StreamName=README_STREAM, EnforceConsumerDeletion=True)


def test_getrecords_source_and_graceful_shutdown_examples(emulator, readme_stream, tmp_path):
    stop_dir = tmp_path / "stop"
    stop_dir.mkdir()
    shell = SparkShell(
        [EXAMPLES / "preamble.scala", EXAMPLES / "source_getrecords.scala"],
        {
            "AWSLABS_ENDPOINT_URL": emulator.endpoint,
            "AWSLABS_STOP_DIR": str(stop_dir),
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        },
        tmp_path / "spark-shell.out",
    )
    try:
        # "LATEST": records count only once the query has started, which the console shows as its first batch.
        shell.wait_for("first batch", lambda out: last_console_counts(out) is not None, timeout=240)
        words = [f"word-{n}" for n in range(10)]
        produced = Counter(words * 3)
        for i, word in enumerate(words * 3):
            readme_stream.put_record(StreamName=README_STREAM, Data=word.encode(), PartitionKey=f"key-{i}")
        counts = shell.wait_for(
            "batch with every record counted",
            lambda out: (c := last_console_counts(out)) and sum(c.values()) >= len(words) * 3 and c,
            timeout=120,
        )
        assert counts == dict(produced)

        # The README's graceful shutdown: the query stops when STOP_LOCK appears, which it then deletes.
        (stop_dir / "STOP_LOCK").touch()
        assert shell.process.wait(timeout=120) == 0
        assert not (stop_dir / "STOP_LOCK").exists()
    finally:
        shell.stop()

    output = shell.output()
    assert not re.search(r"^\S*: error:|^error:", output, flags=re.MULTILINE), output[-6000:]
    schema = [line.strip() for line in output.splitlines() if line.strip().startswith("|-- ")]
    assert schema[: len(AWSLABS_SCHEMA)] == AWSLABS_SCHEMA, output[-6000:]
