from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from kinesis_spark import ConsumerMode, InitialPosition, KinesisOptionError, KinesisReader
from test_reader import FakeStreamReader, reader_with

Build = Callable[[KinesisReader], KinesisReader]

CASES: list[tuple[str, Build, dict[str, str]]] = [
    ("stream names", lambda r: r.stream_names("a", "b.c"), {"streamName": "a,b.c"}),
    ("region", lambda r: r.region("eu-west-1"), {"region": "eu-west-1"}),
    ("endpoint", lambda r: r.endpoint("http://127.0.0.1:4567"), {"endpoint": "http://127.0.0.1:4567"}),
    ("latest", lambda r: r.initial_position(InitialPosition.latest()), {"initialPosition": "latest"}),
    (
        "trim",
        lambda r: r.initial_position(InitialPosition.trim_horizon()),
        {"initialPosition": "trim_horizon"},
    ),
    ("position text", lambda r: r.initial_position("EARLIEST"), {"initialPosition": "EARLIEST"}),
    (
        "datetime",
        lambda r: r.initial_position(datetime(2024, 2, 29, 12, 0, 0, 999999, tzinfo=timezone.utc)),
        {
            "initialPosition": '{"at_timestamp": "2024-02-29T12:00:00.999Z", '
            '"format": "yyyy-MM-dd\'T\'HH:mm:ss.SSSXXX"}'
        },
    ),
    ("efo", lambda r: r.consumer_mode(ConsumerMode.EFO), {"consumerMode": "efo"}),
    ("polling", lambda r: r.consumer_mode(ConsumerMode("polling")), {"consumerMode": "polling"}),
    (
        "keys",
        lambda r: r.credentials("AKID", "secret"),
        {"awsAccessKey": "AKID", "awsSecretKey": "secret"},
    ),
    (
        "keys and token",
        lambda r: r.credentials("AKID", "secret", session_token="tok"),
        {"awsAccessKey": "AKID", "awsSecretKey": "secret", "awsSessionToken": "tok"},
    ),
    (
        "role, everything",
        lambda r: r.assume_role(
            "arn:aws:iam::123456789012:role/reader",
            external_id="ext-id",
            session_name="job-1",
            session_duration=timedelta(minutes=30),
            sts_endpoint="http://127.0.0.1:5000",
            sts_region="eu-central-1",
        ),
        {
            "roleArn": "arn:aws:iam::123456789012:role/reader",
            "roleExternalId": "ext-id",
            "roleSessionName": "job-1",
            "roleSessionDuration": "30m",
            "stsEndpoint": "http://127.0.0.1:5000",
            "stsRegion": "eu-central-1",
        },
    ),
    (
        "provider",
        lambda r: r.credentials_provider("com.example.Creds", "p"),
        {"credentialsProviderClass": "com.example.Creds", "credentialsProviderParam": "p"},
    ),
    ("ca bundle", lambda r: r.ca_bundle("/etc/ca.pem"), {"caBundle": "/etc/ca.pem"}),
    ("trust all", lambda r: r.insecure_trust_all_certificates(), {"insecureTrustAllCertificates": "true"}),
    ("records per fetch", lambda r: r.max_records_per_fetch(500), {"maxRecordsPerFetch": "500"}),
    ("fail on loss", lambda r: r.fail_on_data_loss(False), {"failOnDataLoss": "false"}),
    ("rate", lambda r: r.max_fetch_rate(2), {"maxFetchRate": "2.0"}),
    ("min period", lambda r: r.min_fetch_period(timedelta(milliseconds=210)), {"minFetchPeriod": "210ms"}),
    ("min period text", lambda r: r.min_fetch_period("1s"), {"minFetchPeriod": "1s"}),
    ("max duration", lambda r: r.max_fetch_duration(timedelta(seconds=2)), {"maxFetchDuration": "2s"}),
    ("buffer bytes", lambda r: r.fetch_buffer_size(1 << 20), {"fetchBufferSize": "1048576"}),
    ("buffer text", lambda r: r.fetch_buffer_size("2gb"), {"fetchBufferSize": "2gb"}),
    ("shards per task", lambda r: r.shards_per_task(2), {"shardsPerTask": "2"}),
    ("real-time tasks", lambda r: r.real_time_tasks(4), {"realTimeTasks": "4"}),
    ("shard interval", lambda r: r.shard_fetch_interval(timedelta(minutes=2)), {"shardFetchInterval": "2m"}),
    ("describe", lambda r: r.max_shards_per_describe(1000), {"maxShardsPerDescribe": "1000"}),
    (
        "coalesce threshold",
        lambda r: r.coalesce_threshold_block_size(5),
        {"coalesceThresholdBlockSize": "5"},
    ),
    ("coalesce bin", lambda r: r.coalesce_bin_size(64_000_000), {"coalesceBinSize": "64000000"}),
    ("records per trigger", lambda r: r.max_records_per_trigger(100), {"maxRecordsPerTrigger": "100"}),
    ("bytes per trigger", lambda r: r.max_bytes_per_trigger("100mb"), {"maxBytesPerTrigger": "100mb"}),
    ("stream removal", lambda r: r.allow_stream_removal(), {"allowStreamRemoval": "true"}),
    ("sub-sequence column", lambda r: r.include_sub_sequence_number(), {"includeSubSequenceNumber": "true"}),
    ("consumer name", lambda r: r.consumer_name("job"), {"consumerName": "job"}),
    ("consumer prefix", lambda r: r.consumer_name_prefix("team_"), {"consumerNamePrefix": "team_"}),
    (
        "deregistration",
        lambda r: r.require_consumer_deregistration(),
        {"requireConsumerDeregistration": "true"},
    ),
    (
        "consumer refresh",
        lambda r: r.consumer_refresh_interval(timedelta(minutes=5)),
        {"consumerRefreshInterval": "5m"},
    ),
    ("lease table", lambda r: r.kcl_lease_table("orders-app"), {"kclLeaseTable": "orders-app"}),
    (
        "awslabs checkpoint",
        lambda r: r.awslabs_checkpoint("s3a://b/q", metadata_path="s3a://b/m"),
        {"awslabsCheckpointLocation": "s3a://b/q", "awslabsMetadataPath": "s3a://b/m"},
    ),
    (
        "awslabs checkpoint, DynamoDB",
        lambda r: r.awslabs_checkpoint(
            "/q", dynamodb_table="kdsc_us-east-1_orders", endpoint="http://127.0.0.1:8000"
        ),
        {
            "awslabsCheckpointLocation": "/q",
            "awslabsDynamoDbTable": "kdsc_us-east-1_orders",
            "dynamoDbEndpoint": "http://127.0.0.1:8000",
        },
    ),
    (
        "lease table, own connection",
        lambda r: r.kcl_lease_table(
            "orders-app",
            region="eu-west-1",
            endpoint="http://127.0.0.1:8000",
            access_key="AKID",
            secret_key="secret",
            session_token="tok",
            role_arn="arn:aws:iam::123456789012:role/lease-reader",
            external_id="ext-id",
        ),
        {
            "kclLeaseTable": "orders-app",
            "dynamoDbRegion": "eu-west-1",
            "dynamoDbEndpoint": "http://127.0.0.1:8000",
            "dynamoDbAwsAccessKey": "AKID",
            "dynamoDbAwsSecretKey": "secret",
            "dynamoDbAwsSessionToken": "tok",
            "dynamoDbRoleArn": "arn:aws:iam::123456789012:role/lease-reader",
            "dynamoDbRoleExternalId": "ext-id",
        },
    ),
]


@pytest.mark.parametrize(("name", "build", "expected"), CASES, ids=[c[0] for c in CASES])
def test_builder_sets_the_connector_option(name: str, build: Build, expected: dict[str, str]) -> None:
    reader, stream = reader_with()
    build(reader.stream_names("s") if "streamName" not in expected else reader).load()
    passed = dict(stream.passed)
    if "streamName" not in expected:
        assert passed.pop("streamName") == "s"
    assert passed == expected


def test_builders_cover_every_documented_source_option() -> None:
    # The JVM's KinesisOptionKeys.All plus the enhanced fan-out options, each reachable by a typed builder.
    documented = {
        "streamName", "region", "endpoint", "initialPosition", "awsAccessKey", "awsSecretKey",
        "awsSessionToken", "roleArn", "roleExternalId", "roleSessionName", "roleSessionDuration",
        "stsEndpoint", "stsRegion", "credentialsProviderClass", "credentialsProviderParam", "caBundle",
        "insecureTrustAllCertificates", "maxRecordsPerFetch", "failOnDataLoss", "maxFetchRate",
        "minFetchPeriod", "maxFetchDuration", "fetchBufferSize", "shardsPerTask", "shardFetchInterval",
        "coalesceThresholdBlockSize", "coalesceBinSize", "maxShardsPerDescribe", "maxRecordsPerTrigger",
        "maxBytesPerTrigger", "allowStreamRemoval", "includeSubSequenceNumber", "realTimeTasks",
        "consumerMode", "consumerName", "consumerNamePrefix", "requireConsumerDeregistration",
        "consumerRefreshInterval",
        "kclLeaseTable", "dynamoDbRegion", "dynamoDbEndpoint", "dynamoDbAwsAccessKey", "dynamoDbAwsSecretKey",
        "dynamoDbAwsSessionToken", "dynamoDbRoleArn", "dynamoDbRoleExternalId", "awslabsCheckpointLocation",
        "awslabsMetadataPath", "awslabsDynamoDbTable",
    }  # fmt: skip
    covered = {key for _, _, expected in CASES for key in expected}
    assert documented == covered


REFUSED: list[tuple[Build, str]] = [
    (
        lambda r: r.stream_names("bad name"),
        "Invalid value 'bad name' for option 'streamName': expected comma",
    ),
    (lambda r: r.region("EU"), "Invalid value 'EU' for option 'region': expected an AWS region name"),
    (lambda r: r.endpoint("127.0.0.1:4567"), "for option 'endpoint': expected an http:// or https:// URL"),
    (lambda r: r.initial_position("newest"), "Invalid value 'newest' for option 'initialPosition'"),
    (lambda r: r.assume_role("arn:aws:iam::1:role/x"), "for option 'roleArn': expected an IAM role ARN"),
    (
        lambda r: r.assume_role("arn:aws:iam::123456789012:role/x", session_duration=timedelta(hours=13)),
        "Invalid value '13h' for option 'roleSessionDuration': expected a duration from '15m' to '12h'.",
    ),
    (
        lambda r: r.assume_role("arn:aws:iam::123456789012:role/x", external_id="secret value!"),
        "Invalid value '<not shown>' for option 'roleExternalId'",
    ),
    (lambda r: r.max_fetch_rate(2.5), "expected a decimal number greater than 0.0 and at most 2.0."),
    (lambda r: r.fetch_buffer_size(0), "Invalid value '0' for option 'fetchBufferSize'"),
    (lambda r: r.shards_per_task(0), "Invalid value '0' for option 'shardsPerTask': expected an integer of"),
    (lambda r: r.real_time_tasks(0), "Invalid value '0' for option 'realTimeTasks': expected an integer of"),
    (lambda r: r.max_fetch_duration(timedelta(0)), "Invalid value '0ms' for option 'maxFetchDuration'"),
    (lambda r: r.max_records_per_trigger(-1), "Invalid value '-1' for option 'maxRecordsPerTrigger'"),
    (lambda r: r.max_shards_per_describe(10001), "expected an integer from 1 to 10000."),
    (lambda r: r.option("FAILONDATALOSS", "yes"), "Invalid value 'yes' for option 'failOnDataLoss'"),
    (
        lambda r: r.kcl_lease_table("a b"),
        "Invalid value 'a b' for option 'kclLeaseTable': expected a DynamoDB",
    ),
    (
        lambda r: r.kcl_lease_table("orders-app", endpoint="localhost:8000"),
        "for option 'dynamoDbEndpoint': expected an http:// or https:// URL such as 'https://dynamodb.",
    ),
    (
        lambda r: r.kcl_lease_table("orders-app", external_id="secret value!"),
        "Invalid value '<not shown>' for option 'dynamoDbRoleExternalId'",
    ),
]


@pytest.mark.parametrize(("build", "message"), REFUSED)
def test_bad_values_fail_when_set_and_change_nothing(build: Build, message: str) -> None:
    reader, _ = reader_with()
    reader.option("streamName", "kept")
    with pytest.raises(KinesisOptionError) as info:
        build(reader)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)
    assert reader._spark_options() == {"streamName": "kept"}


WRONG_TYPES: list[Build] = [
    lambda r: r.max_records_per_fetch("100"),  # type: ignore[arg-type]
    lambda r: r.max_records_per_fetch(True),
    lambda r: r.fail_on_data_loss("false"),  # type: ignore[arg-type]
    lambda r: r.min_fetch_period(5),  # type: ignore[arg-type]
    lambda r: r.consumer_mode("efo"),  # type: ignore[arg-type]
    lambda r: r.stream_names("a", 3),  # type: ignore[arg-type]
    lambda r: r.initial_position(3),  # type: ignore[arg-type]
    lambda r: r.region(None),  # type: ignore[arg-type]
    lambda r: r.ca_bundle(3),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("build", WRONG_TYPES)
def test_wrong_python_types_are_type_errors(build: Build) -> None:
    reader, _ = reader_with()
    with pytest.raises(TypeError):
        build(reader)


def test_a_naive_datetime_is_refused() -> None:
    reader, _ = reader_with()
    with pytest.raises(ValueError, match="timezone-aware"):
        reader.initial_position(datetime(2024, 1, 1))


def test_a_second_assume_role_replaces_the_first() -> None:
    reader, stream = reader_with()
    role = "arn:aws:iam::123456789012:role/reader"
    reader.stream_names("s").assume_role(role, external_id="ext-id", session_name="one")
    reader.assume_role(role).load()
    assert stream.passed == {"streamName": "s", "roleArn": role}


def test_credentials_without_token_unset_an_earlier_token() -> None:
    reader, stream = reader_with()
    reader.stream_names("s").credentials("A", "B", session_token="T").credentials("C", "D").load()
    assert stream.passed == {"streamName": "s", "awsAccessKey": "C", "awsSecretKey": "D"}


LOAD_REFUSED: list[tuple[dict[str, Any], str]] = [
    ({}, "Option 'streamName' is required: a Kinesis stream name, or a comma-separated list."),
    (
        {"streamName": "s", "awsAccessKey": "A"},
        "Option 'awsAccessKey' is set but 'awsSecretKey' is not: set both or neither.",
    ),
    (
        {"streamName": "s", "awsSecretKey": "B"},
        "Option 'awsSecretKey' is set but 'awsAccessKey' is not: set both or neither.",
    ),
    (
        {"streamName": "s", "awsSessionToken": "T"},
        "Option 'awsSessionToken' is set but 'awsAccessKey' is not: set both or neither.",
    ),
    (
        {"streamName": "s", "awsAccessKey": "A", "awsSecretKey": "B", "credentialsProviderClass": "x.Y"},
        "Options 'credentialsProviderClass' and 'awsAccessKey' cannot be used together: keep one.",
    ),
    (
        {"streamName": "s", "credentialsProviderParam": "p"},
        "Option 'credentialsProviderParam' is set but 'credentialsProviderClass' is not: set both or "
        "neither.",
    ),
    (
        {"streamName": "s", "roleSessionName": "name", "stsRegion": "us-east-1"},
        "Option 'roleSessionName' is set but 'roleArn' is not: set both or neither.",
    ),
    (
        {"streamName": "s", "caBundle": "/ca.pem", "insecureTrustAllCertificates": "TRUE"},
        "Options 'caBundle' and 'insecureTrustAllCertificates' cannot be used together: keep one.",
    ),
    (
        {"streamName": "arn:aws:kinesis:eu-west-1:123456789012:stream/s", "region": "us-east-1"},
        "Invalid value 'arn:aws:kinesis:eu-west-1:123456789012:stream/s' for option 'streamName': expected "
        "stream ARNs in the region the query connects to (us-east-1), like the option 'region'.",
    ),
    (
        {
            "streamName": "arn:aws:kinesis:eu-west-1:123456789012:stream/a,"
            "arn:aws:kinesis:eu-west-2:123456789012:stream/b"
        },
        "expected stream ARNs in the region the query connects to (eu-west-1), like the option 'region'.",
    ),
    (
        {"streamName": "s", "dynamoDbEndpoint": "http://127.0.0.1:8000"},
        "Option 'dynamoDbEndpoint' is set but 'kclLeaseTable' or 'awslabsDynamoDbTable' is not: "
        "set both or neither.",
    ),
    (
        {"streamName": "s", "kclLeaseTable": "app", "dynamoDbAwsAccessKey": "A"},
        "Option 'dynamoDbAwsAccessKey' is set but 'dynamoDbAwsSecretKey' is not: set both or neither.",
    ),
    (
        {"streamName": "s", "kclLeaseTable": "app", "dynamoDbRoleExternalId": "ext-id"},
        "Option 'dynamoDbRoleExternalId' is set but 'dynamoDbRoleArn' is not: set both or neither.",
    ),
    (
        {"streamName": "s", "kclLeaseTable": "app", "initialPosition": '{"default": "trim_horizon"}'},
        "Options 'kclLeaseTable' and 'initialPosition' cannot be used together: keep one.",
    ),
    (
        {"streamName": "s", "awslabsMetadataPath": "/m"},
        "Option 'awslabsMetadataPath' is set but 'awslabsCheckpointLocation' is not: set both or neither.",
    ),
    (
        {"streamName": "s", "awslabsCheckpointLocation": "/q", "kclLeaseTable": "app"},
        "Options 'kclLeaseTable' and 'awslabsCheckpointLocation' cannot be used together: keep one.",
    ),
    (
        {"streamName": "s,t", "awslabsCheckpointLocation": "/q"},
        "Invalid value 's,t' for option 'streamName': expected one stream with 'awslabsCheckpointLocation' "
        "(an awslabs connector query reads one stream).",
    ),
]


@pytest.mark.parametrize(("options", "message"), LOAD_REFUSED)
def test_load_refuses_combinations_before_spark_is_asked(options: dict[str, Any], message: str) -> None:
    stream = FakeStreamReader()
    reader, _ = reader_with(stream)
    reader.options(**options)
    with pytest.raises(KinesisOptionError) as info:
        reader.load()
    assert message in str(info.value)
    assert stream.format_name is None  # Spark was not touched


def test_stream_arns_of_the_query_region_are_accepted() -> None:
    reader, stream = reader_with()
    arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/s"
    reader.options(streamName=f"{arn},other", region="eu-west-1").load()
    assert stream.passed == {"streamName": f"{arn},other", "region": "eu-west-1"}


def test_awslabs_names_are_left_to_the_jvm() -> None:
    reader, stream = reader_with()
    reader.option("kinesis.streamName", "s").option("kinesis.awsAccessKeyId", "A").load()
    assert stream.passed == {"kinesis.streamName": "s", "kinesis.awsAccessKeyId": "A"}


def test_repr_hides_every_secret_option() -> None:
    reader, _ = reader_with()
    reader.credentials("AKIDVALUE", "SECRETVALUE", "TOKENVALUE")
    reader.assume_role("arn:aws:iam::123456789012:role/r", external_id="EXTERNALVALUE")
    reader.option("customPassword", "PASSWORDVALUE")
    text = repr(reader)
    for secret in ("AKIDVALUE", "SECRETVALUE", "TOKENVALUE", "EXTERNALVALUE", "PASSWORDVALUE"):
        assert secret not in text
    assert "arn:aws:iam::123456789012:role/r" in text
