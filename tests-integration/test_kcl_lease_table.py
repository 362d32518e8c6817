"""Switching from a KCL application without re-reading anything: option ``kclLeaseTable``.

A real KCL 2.x application (``kcl-consumer/``, amazon-kinesis-client from Maven Central, built by ``dev/test.sh``)
reads a stream on the emulator from TRIM_HORIZON, with its lease table on moto's DynamoDB; it checkpoints after a
plain record in one shard and inside a KPL aggregate in another, never in a third, and stops. The connector then
starts from the lease table, and records put after the application stopped follow: what the application
checkpointed and what the connector reads hold every record of the stream exactly once. ``kinesis_spark.kcl_start``
and its command line print the start for review without a query; bad tables and a running application are named.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.kpl_producer import Producer, Row, assert_rows_exactly, in_shard, rows, users
from harness.moto import MotoServer
from harness.spark import REPO_ROOT

import kinesis_spark
from kinesis_spark.errors import KinesisSparkError

KCL_CONSUMER = REPO_ROOT / "kcl-consumer" / "target" / "kcl-consumer.jar"
KCL_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def dynamodb(tmp_path_factory: pytest.TempPathFactory):
    """moto's DynamoDB on loopback, where the KCL application keeps its lease table."""
    with MotoServer(tmp_path_factory.mktemp("moto") / "moto-dynamodb.log") as server:
        yield server


def lease_options(emulator, dynamodb) -> dict[str, str]:
    """The connector's options for the stream on the emulator and the lease table on moto."""
    return {
        "region": REGION,
        "endpoint": emulator.endpoint,
        "awsAccessKey": ACCESS_KEY,
        "awsSecretKey": SECRET_KEY,
        "dynamoDbEndpoint": dynamodb.endpoint,
    }


def start_kcl(emulator, dynamodb, stream: str, application: str, targets: dict[str, tuple[str, int]], out: Path):
    """The KCL application, started: it checkpoints at each shard's (sequence number, sub-sequence number)."""
    assert KCL_CONSUMER.is_file(), f"{KCL_CONSUMER} is missing: build it with `build/sbt kclConsumer/assembly`"
    args = [f"{shard}={seq}:{sub}" for shard, (seq, sub) in targets.items()]
    log = open(out.with_suffix(".log"), "wb")  # noqa: SIM115 (closed with the process, by the caller)
    return subprocess.Popen(
        ["java", "-jar", str(KCL_CONSUMER), stream, application, emulator.endpoint, dynamodb.endpoint, str(out), *args],
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def kcl_rows(out: Path, plain: set[str]) -> list[Row]:
    """The user records the application recorded, as the connector's rows (a plain record has no sub-sequence)."""
    found = []
    for line in out.read_text().splitlines():
        shard, seq, sub, key, data = line.split("\t")
        found.append((shard, seq, None if seq in plain else int(sub), key, base64.b64decode(data)))
    return found


def test_a_query_continues_where_a_kcl_application_checkpointed(
    emulator, dynamodb, kinesis, stream, read_kinesis, sink, tmp_path
):
    name, application = stream(3), f"kcl-app-{uuid.uuid4().hex[:8]}"
    producer = Producer(kinesis, name)
    a, b, c = producer.shards
    for i in range(5):
        producer.put_plain(a, f"a-{i}", f"a{i}".encode())
    producer.put_aggregate(a, in_shard(producer, a, users("a-agg", 5)))
    producer.put_aggregate(b, in_shard(producer, b, users("b-first", 4)))
    stopped_in = producer.put_aggregate(b, in_shard(producer, b, users("b-second", 6)))
    producer.put_plain(b, "b-plain", b"b")
    for i in range(4):
        producer.put_plain(c, f"c-{i}", f"c{i}".encode())
    after_plain = producer.expected[2]  # a's third record: a plain one
    targets = {a: (after_plain[1], 0), b: (stopped_in.sequence_number, 2)}

    out = tmp_path / "kcl.tsv"
    kcl = start_kcl(emulator, dynamodb, name, application, targets, out)
    assert kcl.wait(timeout=KCL_TIMEOUT_S) == 0, (out.with_suffix(".log")).read_text()[-3000:]
    plain = {row[1] for row in producer.expected if row[2] is None}
    checkpointed = kcl_rows(out, plain)
    # The application recorded exactly the user records up to its targets: the first three of a, and of b the
    # first aggregate and user records 0 to 2 of the second. Nothing of c, which it never checkpointed.
    by_shard = {s: [r for r in producer.expected if r[0] == s] for s in (a, b)}
    assert Counter(checkpointed) == Counter(by_shard[a][:3] + by_shard[b][: 4 + 3])

    # Records that arrive after the application stopped.
    for shard in (a, b, c):
        producer.put_plain(shard, f"{shard}-later", b"later")

    options = lease_options(emulator, dynamodb)
    start = kinesis_spark.kcl_start(name, application, **options)
    position = json.loads(str(start.initial_position))
    assert position == {
        "default": "latest",
        "shards": {
            a: {"after_sequence_number": after_plain[1]},
            b: {"after_sequence_number": stopped_in.sequence_number, "sub_sequence_number": 2},
            c: "trim_horizon",
        },
    }
    assert len(start.notes) == 1 and f"Shards {c} (TRIM_HORIZON) of lease table '{application}'" in start.notes[0]
    # The command line prints the same start: keys from standard input, the rest as arguments.
    keys = {k: v for k, v in options.items() if k.startswith("aws")}
    cli = subprocess.run(
        [sys.executable, "-m", "kinesis_spark.kcl_start_cli", "--stream", name, "--lease-table", application]
        + [arg for k, v in options.items() if k not in keys for arg in ("--option", f"{k}={v}")]
        + ["--options-json", "-"],
        input=json.dumps(keys),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(cli.stdout) == position and "note: Shards" in cli.stderr

    expected = [row for row in producer.expected if row not in set(checkpointed)]
    query = sink.start(
        read_kinesis(
            name,
            kclLeaseTable=application,
            dynamoDbEndpoint=dynamodb.endpoint,
            includeSubSequenceNumber="true",
        )
    )
    read = sink.wait_for_rows(query, len(expected))
    query.stop()
    assert_rows_exactly(read, expected)
    # Together: every record of the stream exactly once.
    assert Counter(rows(read) + checkpointed) == Counter(producer.expected)


def test_a_bad_table_or_another_streams_table_is_named(emulator, dynamodb, stream, tmp_path):
    options = lease_options(emulator, dynamodb)
    name = stream(1)
    with pytest.raises(KinesisSparkError, match="DynamoDB table 'no-such-app' .* does not exist"):
        kinesis_spark.kcl_start(name, "no-such-app", **options)
    # A table of another stream's application: its checkpoint lies outside this stream's shard.
    table, client = f"other-app-{uuid.uuid4().hex[:8]}", dynamodb.client("dynamodb")
    client.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "leaseKey", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "leaseKey", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(
        TableName=table,
        Item={
            "leaseKey": {"S": "shardId-000000000000"},
            "checkpoint": {"S": "1"},
            "checkpointSubSequenceNumber": {"N": "0"},
            "leaseCounter": {"N": "3"},
        },
    )
    with pytest.raises(KinesisSparkError, match=f"Lease table '{table}' .* belongs to another stream"):
        kinesis_spark.kcl_start(name, table, **options)


def test_a_running_application_is_named(emulator, dynamodb, kinesis, stream, tmp_path):
    name, application = stream(1), f"kcl-running-{uuid.uuid4().hex[:8]}"
    (shard,) = [s["ShardId"] for s in kinesis.shards(name)]
    kinesis.put_records(name, [("k", b"v")])
    # A target that never comes: the application keeps running, and renewing its lease.
    kcl = start_kcl(emulator, dynamodb, name, application, {shard: ("1", 0)}, tmp_path / "kcl.tsv")
    try:
        wait_for_lease(dynamodb.client("dynamodb"), application, shard)
        start = kinesis_spark.kcl_start(name, application, **lease_options(emulator, dynamodb))
        assert any(
            note.startswith(f"The leases of shards {shard} in lease table '{application}' were renewed")
            and "the KCL application is still running" in note
            for note in start.notes
        ), start.notes
    finally:
        kcl.terminate()
        kcl.wait(timeout=30)


def wait_for_lease(client, table: str, shard: str, timeout_s: float = 90.0) -> None:
    """Waits until the application holds the shard's lease (its owner set)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            item = client.get_item(TableName=table, Key={"leaseKey": {"S": shard}}, ConsistentRead=True).get("Item")
        except client.exceptions.ResourceNotFoundException:
            item = None
        if item and "leaseOwner" in item:
            return
        time.sleep(0.5)
    raise AssertionError(f"the KCL application never took the lease of {shard} in {table}")
