"""The awslabs connector's own README examples, run unchanged in ``spark-shell`` against the emulator, with our jar
in place of theirs: what a user who switches connectors sees.

The examples are quoted in ``awslabs_readme/``, one file per README section; only what the README leaves to its reader
(the endpoint, the folder watched for ``STOP_LOCK``, imports) comes from ``preamble.scala``. Credentials come from the
environment, through the default provider chain, as the README assumes.

The README's sink example cannot run as printed, with their connector or ours: it asks for ``outputMode("append")``
on a ``groupBy`` without a watermark, which Spark itself refuses at ``start()``, and its ``groupBy("data").count()``
drops the ``partitionKey`` column the line above made. The test pastes it unchanged and checks that the user is told
what is wrong before anything runs, then pastes it without that one line and checks every record arrives.
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

from harness.awslabs_deaggregation import deaggregated_by_awslabs
from harness.emulator import ACCESS_KEY, SECRET_KEY
from harness.kinesis import Kinesis
from harness.spark import connector_jar

EXAMPLES = Path(__file__).parent / "awslabs_readme"
SPARK_HOME = Path(pyspark.__file__).parent
# The README's region and stream name, kept as they are.
README_REGION = "us-east-2"
README_STREAM = "teststream"
README_CONSUMER = "TestConsumer"
# The sink example's stream, region and the two literals that only make sense on AWS.
SINK_STREAM = "sparkSinkTest"
SINK_ENDPOINT_LITERAL = '"https://kinesis.us-east-1.amazonaws.com"'
SINK_CHECKPOINT_LITERAL = '"/path/to/checkpoint"'
SINK_GROUP_BY_LINE = '  .groupBy("data").count()\n'
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
    client.get_waiter("stream_not_exists").wait(StreamName=README_STREAM, WaiterConfig={"Delay": 0.2})


def readme_shell(endpoint: str, tmp_path: Path, examples: list[Path]) -> SparkShell:
    """A spark-shell running preamble.scala, ``examples``, then the README's graceful shutdown, which waits for
    ``STOP_LOCK`` in ``tmp_path / "stop"``; the keys are in the environment, for the default provider chain."""
    (tmp_path / "stop").mkdir()
    environment = {
        "AWSLABS_ENDPOINT_URL": endpoint,
        "AWSLABS_STOP_DIR": str(tmp_path / "stop"),
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    }
    scripts = [EXAMPLES / "preamble.scala", *examples, EXAMPLES / "graceful_shutdown.scala"]
    return SparkShell(scripts, environment, tmp_path / "spark-shell.out")


def stop_gracefully(shell: SparkShell, stop_dir: Path) -> None:
    """The README's graceful shutdown: the query stops when STOP_LOCK appears, which it then deletes."""
    (stop_dir / "STOP_LOCK").touch()
    assert shell.process.wait(timeout=120) == 0, shell.output()[-6000:]
    assert not (stop_dir / "STOP_LOCK").exists()


def assert_no_compile_error(output: str) -> None:
    assert not re.search(r"^\S*: error:|^error:", output, flags=re.MULTILINE), output[-6000:]


def test_getrecords_source_and_graceful_shutdown_examples(emulator, readme_stream, tmp_path):
    shell = readme_shell(
        emulator.endpoint, tmp_path, [EXAMPLES / "source_getrecords.scala", EXAMPLES / "query_console.scala"]
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

        stop_gracefully(shell, tmp_path / "stop")
    finally:
        shell.stop()

    output = shell.output()
    assert_no_compile_error(output)
    schema = [line.strip() for line in output.splitlines() if line.strip().startswith("|-- ")]
    assert schema[: len(AWSLABS_SCHEMA)] == AWSLABS_SCHEMA, output[-6000:]


def sink_example(endpoint: str, checkpoint: Path, *, group_by: bool) -> str:
    """The README's sink example with its AWS endpoint and checkpoint literals replaced, and without its groupBy
    line unless ``group_by``."""
    text = (EXAMPLES / "sink.scala").read_text()
    assert SINK_ENDPOINT_LITERAL in text and SINK_CHECKPOINT_LITERAL in text and SINK_GROUP_BY_LINE in text
    text = text.replace(SINK_ENDPOINT_LITERAL, f'"{endpoint}"').replace(SINK_CHECKPOINT_LITERAL, f'"{checkpoint}"')
    return text if group_by else text.replace(SINK_GROUP_BY_LINE, "")


def test_subscribetoshard_source_and_sink_examples(emulator, kinesis, readme_stream, tmp_path):
    kinesis.create_stream(SINK_STREAM, 2)  # in us-east-1, the sink example's region
    scripts = {
        "sink_as_printed.scala": sink_example(emulator.endpoint, tmp_path / "checkpoint-1", group_by=True),
        "sink_without_group_by.scala": sink_example(emulator.endpoint, tmp_path / "checkpoint-2", group_by=False),
        # The shutdown example stops "query"; the sink example started one without naming it.
        "name_the_query.scala": "val query = spark.streams.active.head\n",
    }
    for name, text in scripts.items():
        (tmp_path / name).write_text(text)
    shell = readme_shell(
        emulator.endpoint,
        tmp_path,
        [EXAMPLES / "source_subscribetoshard.scala"] + [tmp_path / name for name in scripts],
    )
    try:
        # As printed, the rows have no partitionKey: the sink says so at start(), before Spark would refuse the
        # append mode, and names the option that gives rows random keys.
        shell.wait_for(
            "refusal of the example as printed",
            lambda out: "has no column 'partitionKey'" in out and "'partitionKeyFallback'" in out,
            timeout=240,
        )
        # "LATEST" from the moment the query starts: probe until one of ours comes through, then count from there.
        deadline = time.monotonic() + 180
        probes = 0
        while not deaggregated_by_awslabs(kinesis.read_all(SINK_STREAM)):
            assert time.monotonic() < deadline and shell.process.poll() is None, shell.output()[-6000:]
            readme_stream.put_record(StreamName=README_STREAM, Data=f"probe-{probes}".encode(), PartitionKey="p")
            probes += 1
            time.sleep(2)
        words = [f"word-{n}".encode() for n in range(40)]
        for i, word in enumerate(words):
            readme_stream.put_record(StreamName=README_STREAM, Data=word, PartitionKey=f"key-{i}")
        written: Counter = Counter()
        deadline = time.monotonic() + 120
        while sum(written[w] for w in words) < len(words) and time.monotonic() < deadline:
            time.sleep(2)
            written = Counter()
            for (_, data), count in deaggregated_by_awslabs(kinesis.read_all(SINK_STREAM)).items():
                written[data] += count
        assert {w: written[w] for w in words} == dict.fromkeys(words, 1)
        assert set(written) - set(words) <= {f"probe-{n}".encode() for n in range(probes)}
        # The example's partition keys are rand() as a string; a consumer of the README's stream is reused by name.
        keys = [key for (key, _) in deaggregated_by_awslabs(kinesis.read_all(SINK_STREAM))]
        assert all(0.0 <= float(key) < 1.0 for key in keys), keys[:5]
        assert {c["ConsumerName"] for c in consumers_of(readme_stream)} == {README_CONSUMER}
        stop_gracefully(shell, tmp_path / "stop")
    finally:
        shell.stop()
        kinesis.delete_and_wait(SINK_STREAM)
    assert_no_compile_error(shell.output())


def consumers_of(client) -> list[dict]:  # noqa: ANN001 (a boto3 client)
    arn = client.describe_stream_summary(StreamName=README_STREAM)["StreamDescriptionSummary"]["StreamARN"]
    return client.list_stream_consumers(StreamARN=arn)["Consumers"]
