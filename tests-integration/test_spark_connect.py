"""Spark Connect as a way in: a real Connect server (the pyspark wheel's server class, the connector jar on
``--jars``) on 127.0.0.1, and client code in a ``pyspark-client`` environment (``dev/python-env.sh
--connect-client``: no JVM, no full pyspark) calling each public function of the package (``jobs/connect_client.py``).
Reading and writing work, with the jar on the server's ``--jars`` or added by the session (``spark.addArtifacts``);
what needs a JVM in the client's process refuses with the package's SparkConnectError saying what to do (the
consumer manager, real-time writes; real-time reads work, a merge across tasks ending the batch early as it does
without Connect); the connector's errors arrive as the package's errors, with the connector's message alone.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from harness.connect import client_python, start_connect_server
from harness.jobs import job_result, run_checked
from harness.producer import KeyedProducer
from harness.real_time import RealTimeSink, batch_at
from harness.spark import connector_jar

CLIENT_JOB = Path(__file__).resolve().parent / "jobs" / "connect_client.py"
MERGE_JOB = Path(__file__).resolve().parent / "jobs" / "connect_real_time_merge.py"


def run_client(server_jar: Path | None, client_jar: Path | None, kinesis, stream, emulator, tmp_path) -> dict:
    """Start a server (with ``server_jar`` on ``--jars``, if any), put 30 records into a new stream, run the
    client job (adding ``client_jar`` with ``addArtifacts``, if any) and return what it reported."""
    source, out = stream(2), stream(1)
    puts = kinesis.put_records(source, [(f"key-{i}", f"record-{i}".encode()) for i in range(30)])
    assert len(puts) == 30
    server = start_connect_server(server_jar, tmp_path)
    try:
        command = [str(client_python()), str(CLIENT_JOB), server.url, emulator.endpoint, source, out]
        result = job_result(run_checked([*command, *([str(client_jar)] if client_jar else [])], cwd=tmp_path,
                                        timeout=600))
    finally:
        server.stop()
    result["written"] = sorted(r["Data"].decode() for r in kinesis.read_all(out))
    return result


def assert_reads_and_writes(result: dict) -> None:
    read = result["read"]
    assert "returned" in read, read
    assert read["returned"]["columns"] == [
        "partitionKey", "data", "stream", "shardId", "sequenceNumber", "approximateArrivalTimestamp",
    ]  # fmt: skip
    assert read["returned"]["rows"] == sorted([f"key-{i}", f"record-{i}"] for i in range(30))
    assert result["write"] == {"returned": "saved"}, result["write"]
    # The streaming write's progress counts the records its commit messages report.
    metrics = result["stream_write"].get("returned")
    assert metrics and sum(int(m.get("recordsWritten", 0)) for m in metrics) == 30, result["stream_write"]
    assert result["written"] == sorted([f"written-{i}" for i in range(20)] + [f"record-{i}" for i in range(30)])


def test_the_package_from_a_pyspark_client_environment(kinesis, stream, emulator, tmp_path):
    # The client environment has pyspark-client and no full pyspark: what a Connect user has.
    listed = run_checked([str(client_python()), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"])
    packages = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert "pyspark-client" in packages and "pyspark" not in packages, packages

    result = run_client(connector_jar(), None, kinesis, stream, emulator, tmp_path)

    configure = result["configure"]
    assert configure.get("error") == "SparkConnectError", configure
    assert "--packages" in configure["message"] and "kinesis-spark_2.13" in configure["message"]

    missing = result["missing_stream"]
    assert missing.get("error") == "StreamNotFoundError", missing
    assert "no-such-stream" in missing["message"] and "JVM stacktrace" not in missing["message"]

    option = result["bad_option"]
    assert option.get("error") == "KinesisOptionError", option
    assert option["message"] == "Invalid value '0' for option 'maxRecordsPerFetch': expected an integer from 1 to 10000."

    manager = result["consumer_manager"]
    assert manager.get("error") == "SparkConnectError", manager
    assert "aws kinesis list-stream-consumers" in manager["message"]

    # Real-time mode reads through Connect; the real-time writer needs the client's JVM, and says so.
    read_real_time = result["real_time_read"]
    assert read_real_time == {"returned": sorted(f"record-{i}" for i in range(30))}, read_real_time
    refused = result["real_time_write"]
    assert refused.get("error") == "SparkConnectError" and "KinesisForeachWriter" in refused["message"], refused

    assert_reads_and_writes(result)


def test_a_jar_added_by_the_session_with_add_artifacts(kinesis, stream, emulator, tmp_path):
    # The server starts without the connector; the client's session adds it. Its classes then live in a session
    # class loader while Spark returns task results and commit messages through another: reads, writes and the
    # sink's metrics must not notice.
    result = run_client(None, connector_jar(), kinesis, stream, emulator, tmp_path)
    assert_reads_and_writes(result)


@pytest.mark.real_time
def test_a_real_time_query_through_connect_ends_its_batch_for_a_merge_across_tasks(kinesis, stream, emulator,
                                                                                   tmp_path):
    """The server (local[2]) reads the stream's two shards in two tasks; their merge, whose parents end in different
    tasks, ends the 40 s batch early, so the next batch reads the merged shard within seconds. (Before, the stream
    looked for its query from the default session to count its sources, found none through Connect, and the merged
    shard waited for the batch's end: 30 s after the merge.)"""
    name = stream(2)
    root = tmp_path / "job"
    sink = RealTimeSink(root)
    server = start_connect_server(connector_jar(), tmp_path)
    producer = KeyedProducer(emulator.endpoint, name, keys=6, interval_s=0.1).start()
    log = tmp_path / "client.log"
    with log.open("wb") as out:
        client = subprocess.Popen([str(client_python()), str(MERGE_JOB), server.url, emulator.endpoint, name,
                                   str(root)], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)

    def wait(condition: Callable[[], bool], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert client.poll() is None, f"the client ended: {log.read_text(errors='replace')[-3000:]}"
            assert time.monotonic() < deadline, f"not so after {timeout_s:.0f} s"
            time.sleep(0.5)

    try:
        wait(lambda: len({r.record.shard_id for r in sink.rows()}) == 2, 180)
        kinesis.merge_adjacent(name, 0)
        merged_at = time.time()
        merged = next(s["ShardId"] for s in kinesis.open_shards(name) if "AdjacentParentShardId" in s)
        wait(lambda: any(r.record.shard_id == merged for r in sink.rows()), 90)
    finally:
        producer.stop()
        (root / "STOP").touch()
        try:
            client.wait(timeout=60)
        except subprocess.TimeoutExpired:
            client.kill()
            raise
        finally:
            server.stop()
    first = next(r for r in sink.rows() if r.record.shard_id == merged)
    read_in, waited = first.record.batch_id, first.seen - merged_at
    cut = batch_at(json.loads((root / "progress.json").read_text()), merged_at)
    print(f"\nreal-time through Connect: the merged shard read in batch {read_in}, {waited:.1f} s after the merge in "
          f"batch {cut['batchId']}, which ran {cut['durationMs']['triggerExecution'] / 1000:.1f} s of its 40")
    assert read_in == cut["batchId"] + 1 and waited < 15
    assert cut["durationMs"]["triggerExecution"] < 38_000, f"batch {cut['batchId']} was not cut short: {cut}"
