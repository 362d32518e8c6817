"""Switching from the awslabs connector without re-reading anything: option ``awslabsCheckpointLocation``.

``awslabs_checkpoints/`` keeps what a query of the real awslabs connector wrote when it stopped part-way through a
stream (see its README for how it was made): its checkpoint location, with its shard positions in files
(``hdfs/``) or in a DynamoDB table (``dynamodb/``, replayed into moto), the rows of the batches it committed, and
kinesis-local's persisted data holding the stream, so the sequence numbers exist when CI replays it. Its last batch
ended inside a KPL aggregate; after it stopped, a shard split and more records came. The connector starts from
the checkpoint: what awslabs committed and what the connector reads hold every record of the stream exactly once.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY, KinesisEmulator
from harness.kpl_producer import Row, assert_rows_exactly
from harness.moto import MotoServer
from pyspark.sql import SparkSession

import kinesis_spark
from kinesis_spark.errors import KinesisSparkError

DATA = Path(__file__).resolve().parent / "awslabs_checkpoints"
STREAM = "awslabs-switch"
TABLE = "kdsc_us-east-1_awslabs-switch"


def produced(variant: str) -> list[Row]:
    rows = []
    for line in (DATA / variant / "produced.jsonl").read_text().splitlines():
        shard, seq, sub, key, data = json.loads(line)
        rows.append((shard, seq, sub, key, base64.b64decode(data)))
    return rows


def awslabs_read(variant: str) -> Counter:
    """(partition key, data) of each row of the batches the awslabs query committed."""
    read = [json.loads(line) for line in (DATA / variant / "awslabs-read.jsonl").read_text().splitlines()]
    return Counter((r["partitionKey"], base64.b64decode(r["data"])) for r in read)


@pytest.fixture
def replayed(request, tmp_path):
    """kinesis-local with the variant's persisted stream, and for ``dynamodb`` moto holding the awslabs table."""
    variant = request.param
    data = tmp_path / "kinesis-data"
    shutil.copytree(DATA / variant / "kinesis-data", data)
    settings = {"SHOULD_PERSIST_DATA": "true", "PERSIST_PATH": str(data), "PERSIST_INTERVAL": "1h"}
    with KinesisEmulator(tmp_path / "emulator.log", settings) as emulator, MotoServer(tmp_path / "moto.log") as moto:
        if variant == "dynamodb":
            client = moto.client("dynamodb")
            # The table as the awslabs connector creates it.
            client.create_table(
                TableName=TABLE,
                KeySchema=[
                    {"AttributeName": "metadataKey", "KeyType": "HASH"},
                    {"AttributeName": "metadataSortKey", "KeyType": "RANGE"},
                ],
                AttributeDefinitions=[
                    {"AttributeName": "metadataKey", "AttributeType": "S"},
                    {"AttributeName": "metadataSortKey", "AttributeType": "S"},
                ],
                BillingMode="PAY_PER_REQUEST",
            )
            for item in json.loads((DATA / variant / "dynamodb-items.json").read_text()):
                client.put_item(TableName=TABLE, Item=item)
        yield variant, emulator, moto


def without_location(given: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in given.items() if k != "awslabsCheckpointLocation"}


def options(variant: str, emulator, moto) -> dict[str, str]:
    given = {
        "region": REGION,
        "endpoint": emulator.endpoint,
        "awsAccessKey": ACCESS_KEY,
        "awsSecretKey": SECRET_KEY,
        "awslabsCheckpointLocation": str(DATA / variant / "checkpoint"),
    }
    if variant == "dynamodb":
        given |= {"awslabsDynamoDbTable": TABLE, "dynamoDbEndpoint": moto.endpoint}
    return given


@pytest.mark.parametrize("replayed", ["hdfs", "dynamodb"], indirect=True)
def test_a_query_continues_where_an_awslabs_query_stopped(spark: SparkSession, replayed, sink):
    variant, emulator, moto = replayed
    everything, committed = produced(variant), awslabs_read(variant)
    assert committed and len(committed) < len(everything)
    expected = [row for row in everything if (row[3], row[4]) not in committed]
    # The awslabs query stopped inside a KPL aggregate: part of one is behind it, the rest ahead.
    split = {row[1] for row in everything if row[2] is not None and (row[3], row[4]) in committed} & {
        row[1] for row in expected if row[2] is not None
    }
    assert split, "the kept checkpoint no longer ends inside an aggregate"

    given = options(variant, emulator, moto)
    start = kinesis_spark.switch_start(STREAM, **given)
    position = json.loads(str(start.initial_position))
    assert position["default"] == "latest" and start.notes == []
    assert any("sub_sequence_number" in p for p in position["shards"].values() if isinstance(p, dict)), position

    reader = spark.readStream.format("kinesis").option("streamName", STREAM).option("includeSubSequenceNumber", "true")
    for key, value in given.items():
        reader = reader.option(key, value)
    query = sink.start(reader.load())
    read = sink.wait_for_rows(query, len(expected))
    query.stop()
    assert_rows_exactly(read, expected)
    # Together: every record of the stream exactly once.
    ours = Counter((r.partition_key, r.data) for r in read)
    assert ours + committed == Counter((row[3], row[4]) for row in everything)


@pytest.mark.parametrize("replayed", ["hdfs"], indirect=True)
def test_a_wrong_checkpoint_or_metadata_path_is_named(replayed, tmp_path):
    variant, emulator, moto = replayed
    given = options(variant, emulator, moto)
    with pytest.raises(KinesisSparkError, match="holds no committed batch"):
        kinesis_spark.switch_start(STREAM, **(given | {"awslabsCheckpointLocation": str(tmp_path)}))
    with pytest.raises(KinesisSparkError, match="Checkpoint location '.*/nowhere' .* does not exist"):
        kinesis_spark.awslabs_start(STREAM, str(tmp_path / "nowhere"), **without_location(given))
    no_positions = "holds no shard position for awslabs batch .* 'awslabsMetadataPath'"
    with pytest.raises(KinesisSparkError, match=no_positions):
        kinesis_spark.switch_start(STREAM, **(given | {"awslabsMetadataPath": str(tmp_path)}))
    with pytest.raises(KinesisSparkError, match="no awslabs connector source of stream 'other'"):
        kinesis_spark.switch_start("other", **given)
