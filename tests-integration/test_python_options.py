"""The Python package's option checks against the connector's own: for each bad value or combination, the
error ``kinesis_spark.KinesisReader`` raises before Spark is touched has exactly the message the JVM gives for
the same options through ``spark.readStream.format("kinesis")``; values Python lets through, the JVM accepts
too; and a ``datetime`` start position means the same millisecond on both sides.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from pyspark.errors import IllegalArgumentException

from kinesis_spark import InitialPosition, KinesisOptionError, KinesisReader

ROLE = "arn:aws:iam::123456789012:role/reader"
OTHER_REGION_ARN = "arn:aws:kinesis:eu-west-1:123456789012:stream/s"

# One fault each, on top of a valid base (stream name, region, endpoint, keys).
REFUSED: list[dict[str, str | None]] = [
    *({"maxRecordsPerFetch": v} for v in ("0", "10001", "abc", "1.5", "9223372036854775808", "")),
    {"shardsPerTask": "0"},
    {"coalesceBinSize": "-5"},
    {"coalesceThresholdBlockSize": "1e6"},
    {"maxShardsPerDescribe": "10001"},
    {"maxRecordsPerTrigger": "0"},
    *({"maxFetchRate": v} for v in ("0", "2.5", "NaN", "inf", "Infinity", "1_0", "abc", "-1")),
    *({"minFetchPeriod": v} for v in ("199ms", "199999us", "1 s", "1.5s", "1w", "-1s", "")),
    {"maxFetchDuration": "0"},
    {"shardFetchInterval": "0ms"},
    *({"fetchBufferSize": v} for v in ("0", "1.5gb", "1eb", "10000000pb", "-1", "mb")),
    {"maxBytesPerTrigger": "0b"},
    {"failOnDataLoss": "yes"},
    {"allowStreamRemoval": "1"},
    {"includeSubSequenceNumber": "yes"},
    {"insecureTrustAllCertificates": "maybe"},
    *(
        {"initialPosition": v}
        for v in (
            "newest",
            " {not json",
            '{"at_timestamp": 5}',
            '{"x": "y"}',
            '{"at_timestamp": "x", "format": 3}',
            "[1]",
            # Positions per shard.
            '{"shards": {"shardId-000000000000": {"after_sequence_number": "12x"}}}',
            '{"shards": {"shardId-000000000000": {"after_sequence_number": 12}}}',
            '{"shards": {"shardId-000000000000": "middle"}}',
            '{"shards": {"shardId-000000000000": {"at_sequence_number": "1", "after_sequence_number": "2"}}}',
            '{"shards": {"shardId-000000000000": {"at_timestamp": 7}}}',
            # A user record inside a KPL aggregate: a whole number of at least 0, beside a sequence number only.
            '{"shards": {"shardId-000000000000": {"after_sequence_number": "1", "sub_sequence_number": -1}}}',
            '{"shards": {"shardId-000000000000": {"after_sequence_number": "1", "sub_sequence_number": "3"}}}',
            '{"shards": {"shardId-000000000000": {"at_sequence_number": "1", "sub_sequence_number": 1.5}}}',
            '{"shards": {"shardId-000000000000": {"at_sequence_number": "1", "sub_sequence_number": true}}}',
            '{"shards": {"shardId-000000000000": {"sub_sequence_number": 1}}}',
            '{"shards": {"shardId-000000000000": {"at_timestamp": "06/25/2020 10:23:45 PDT", "sub_sequence_number": 1}}}',
            '{"shards": {" ": "latest"}}',
            '{"default": {"at_sequence_number": "1"}}',
            '{"default": "trim_horizon", "at_timestamp": "06/25/2020 10:23:45 PDT"}',
            '{"shards": ["shardId-000000000000"]}',
            '{"streams": {"payments": {}}}',
            '{"streams": []}',
            '{"shards": {"shardId-000000000000": "latest"}, '
            '"streams": {"python-options-parity": {"shardId-000000000000": "latest"}}}',
        )
    ),
    {"streamName": "python-options-parity,other", "initialPosition": '{"shards": {"shardId-000000000000": "latest"}}'},
    *({"streamName": v} for v in ("bad name", "a,,b", "", ",", "a,a", "a, arn:aws:kinesis:us-east-1:123456789012:stream/a")),
    {"streamName": OTHER_REGION_ARN},
    *({"region": v} for v in ("EU", "", "us-east-1a")),
    *({"endpoint": v} for v in ("localhost:4566", "ftp://x", "http://")),
    {"roleArn": "arn:aws:iam::1:role/x"},
    {"roleArn": ROLE, "roleSessionName": "x"},
    {"roleArn": ROLE, "roleSessionDuration": "10m"},
    {"roleArn": ROLE, "roleSessionDuration": "13h"},
    {"roleArn": ROLE, "roleExternalId": "!"},
    {"roleArn": ROLE, "stsRegion": "mars"},
    {"roleArn": ROLE, "stsEndpoint": "sts.amazonaws.com"},
    {"awsAccessKey": None},
    {"awsSecretKey": None},
    {"awsAccessKey": None, "awsSecretKey": None, "awsSessionToken": "t"},
    {"credentialsProviderClass": "com.example.Creds"},
    {"awsAccessKey": None, "awsSecretKey": None, "credentialsProviderParam": "p"},
    {"roleSessionName": "job"},
    {"stsRegion": "us-east-1"},
    {"caBundle": "/nonexistent.pem", "insecureTrustAllCertificates": "true"},
    {"initialPosition": "shard_end"},
    {"initialPosition": '{"default": "shard_end"}'},
    *({"kclLeaseTable": v} for v in ("a b", "ab", "")),
    {"kclLeaseTable": "orders-app", "dynamoDbEndpoint": "localhost:8000"},
    {"kclLeaseTable": "orders-app", "dynamoDbRegion": "EU"},
    {"kclLeaseTable": "orders-app", "dynamoDbRoleArn": "arn:aws:iam::1:role/x"},
    {"kclLeaseTable": "orders-app", "dynamoDbAwsAccessKey": "AKID"},
    {"kclLeaseTable": "orders-app", "initialPosition": '{"shards": {"shardId-000000000000": "latest"}}'},
    {"dynamoDbRegion": "us-east-1"},
    *({"awslabsCheckpointLocation": v} for v in ("", "  ")),
    {"awslabsMetadataPath": "/m"},
    {"awslabsDynamoDbTable": "kdsc_us-east-1_orders"},
    {"awslabsCheckpointLocation": "/q", "awslabsMetadataPath": " "},
    {"awslabsCheckpointLocation": "/q", "awslabsMetadataPath": "/m", "awslabsDynamoDbTable": "table"},
    {"awslabsCheckpointLocation": "/q", "awslabsDynamoDbTable": "a b"},
    {"awslabsCheckpointLocation": "/q", "kclLeaseTable": "orders-app"},
    {"awslabsCheckpointLocation": "/q", "streamName": "a,b"},
    {"awslabsCheckpointLocation": "/q", "initialPosition": '{"shards": {"shardId-000000000000": "latest"}}'},
    {"awslabsCheckpointLocation": "/q", "awslabsDynamoDbTable": "table", "dynamoDbAwsSecretKey": "s"},
    {"awslabsDynamoDbTable": "ab"},
    {"awslabsMetadataPath": " "},
    {"awslabsCheckpointLocation": "/q", "awslabsMetadataPath": "/m", "awslabsDynamoDbTable": "a b"},
    {"kclLeaseTable": "orders-app", "dynamoDbAwsAccessKey": "A", "awslabsMetadataPath": "/m"},
    {"kclLeaseTable": "a b", "awslabsMetadataPath": "/m"},
]

# Unusual values the JVM accepts; Python must not refuse them.
ACCEPTED: list[dict[str, str]] = [
    {"maxRecordsPerFetch": " 1,000 "},
    {"maxRecordsPerFetch": "+5"},
    {"maxRecordsPerFetch": "\u0663"},  # ARABIC-INDIC DIGIT THREE: Long.parseLong reads any Unicode digit
    {"maxFetchRate": "1.5d"},
    {"maxFetchRate": ".5"},
    {"maxFetchRate": "0x1p0"},
    {"maxFetchRate": "2"},
    {"minFetchPeriod": "200999us"},
    {"minFetchPeriod": " 2MIN "},
    {"shardFetchInterval": "1d"},
    {"fetchBufferSize": "1KB"},
    {"maxBytesPerTrigger": "1pb"},
    {"failOnDataLoss": " FALSE "},
    {"initialPosition": " Earliest "},
    {"initialPosition": '{"at_timestamp": "06/25/2020 10:23:45 PDT"} trailing'},
    {"initialPosition": '{"default": "Earliest", "shards": {"shardId-000000000000": {"at_sequence_number": "1"}}}'},
    {"initialPosition": '{"shards": {"shardId-000000000000": {"sub_sequence_number": 4, "after_sequence_number": "1"}}}'},
    {"initialPosition": '{"streams": {"{stream}": {"shardId-000000000000": {"at_timestamp": "06/25/2020 10:23:45 PDT"}}}}'},
    {"streamName": "{stream},"},
    {"region": " us-east-1 "},
    {"initialPosition": '{"shards": {"shardId-000000000000": " Shard_End "}}'},
    {"kclLeaseTable": " orders-app ", "dynamoDbRegion": " eu-west-1 ", "dynamoDbEndpoint": "http://127.0.0.1:1"},
    {"awslabsCheckpointLocation": " s3a://b/q ", "awslabsMetadataPath": "s3a://b/m"},
    {"awslabsCheckpointLocation": "/q", "awslabsDynamoDbTable": "table", "dynamoDbEndpoint": "http://127.0.0.1:1"},
]


def base(name: str, endpoint: str) -> dict[str, str]:
    return {
        "streamName": name,
        "region": REGION,
        "endpoint": endpoint,
        "awsAccessKey": ACCESS_KEY,
        "awsSecretKey": SECRET_KEY,
    }


def with_changes(options: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    merged = {**options, **changes}
    return {key: value for key, value in merged.items() if value is not None}


def jvm_message(spark, options: dict[str, str]) -> str:
    with pytest.raises(IllegalArgumentException) as failure:
        spark.readStream.format("kinesis").options(**options).load()
    return str(failure.value)


def python_message(spark, options: dict[str, str]) -> str:
    with pytest.raises(KinesisOptionError) as failure:
        KinesisReader(spark).options(**options).load()
    return str(failure.value)


@pytest.fixture(scope="module")
def existing(kinesis, emulator):
    """One stream for the whole module: only options change between cases."""
    name = "python-options-parity"
    kinesis.create_stream(name, 1)
    yield base(name, emulator.endpoint)
    kinesis.delete_stream(name)


@pytest.mark.parametrize("changes", REFUSED, ids=lambda c: ",".join(f"{k}={v!r}" for k, v in c.items()))
def test_python_refuses_with_the_jvm_message(spark, existing, changes):
    options = with_changes(existing, changes)
    assert python_message(spark, options) == jvm_message(spark, options)


@pytest.mark.parametrize("changes", ACCEPTED, ids=lambda c: ",".join(f"{k}={v!r}" for k, v in c.items()))
def test_what_python_accepts_the_jvm_accepts(spark, existing, changes):
    options = with_changes(existing, {k: v.replace("{stream}", existing["streamName"]) for k, v in changes.items()})
    df = KinesisReader(spark).options(**options).load()
    assert df.isStreaming


def test_typed_builders_give_values_the_jvm_accepts(spark, existing):
    df = (
        KinesisReader(spark)
        .options(**existing)
        .initial_position(InitialPosition.trim_horizon())
        .max_records_per_fetch(500)
        .max_fetch_rate(1.5)
        .min_fetch_period(timedelta(milliseconds=210))
        .max_fetch_duration(timedelta(seconds=1, microseconds=500))
        .fetch_buffer_size(64 << 20)
        .shards_per_task(2)
        .shard_fetch_interval(timedelta(minutes=1))
        .max_shards_per_describe(1000)
        .coalesce_threshold_block_size(1_000_000)
        .coalesce_bin_size(64_000_000)
        .max_records_per_trigger(1000)
        .max_bytes_per_trigger("16mb")
        .fail_on_data_loss(False)
        .allow_stream_removal()
        .kcl_lease_table("orders-app", region="eu-west-1", endpoint="http://127.0.0.1:8000")
        .load()
    )
    assert df.isStreaming


@pytest.mark.parametrize(
    "when",
    [
        datetime(2020, 6, 25, 17, 23, 45, 123456, tzinfo=timezone.utc),
        datetime(2024, 2, 29, 23, 59, 59, tzinfo=timezone(timedelta(hours=-7))),
        datetime(1999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    ],
)
def test_at_timestamp_is_the_same_millisecond_in_the_jvm(spark, when):
    position = InitialPosition.at_timestamp(when)
    parsed = spark.sparkContext._jvm.io.kinesisspark.InitialPosition.parse(position.option_value)
    assert parsed.epochMillis() == (when - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)


def test_the_provider_class_names_the_connector_too(spark, existing):
    # For runtimes whose own Kinesis source answers to "kinesis" as well (Databricks).
    df = KinesisReader(spark, format="io.kinesisspark.KinesisSourceProvider").options(**existing).load()
    assert df.isStreaming and "shardId" in df.columns
