"""Credentials end to end: the keys given are the keys that sign (seen by the limits proxy), an assumed role
(moto's STS) with its external id and session name, its refresh during a running query, and clear errors that
name what was tried without showing a secret."""

from __future__ import annotations

import time

import pytest
from harness.sink import ProgressLog
from harness.spark import kinesis_source, no_default_aws_credentials
from harness.moto import MotoServer
from test_polling_source import LOAD_ERRORS, assert_delivered_exactly, numbered

ROLE = "arn:aws:iam::123456789012:role/kinesis-reader"


@pytest.fixture(scope="module")
def sts(tmp_path_factory):
    with MotoServer(tmp_path_factory.getbasetemp() / "moto-sts.log") as running:
        yield running


def reader(spark, endpoint: str, name: str, **options: str):
    return kinesis_source(spark, name, endpoint, **options)


def signers(proxy) -> dict[str, dict[str, int]]:
    return proxy.stats()["signers"]


def test_the_keys_given_sign_every_request(spark, kinesis, stream, proxy, sink):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(200))
    through = proxy()
    source = reader(spark, through.endpoint, name, awsAccessKey="AKIDGIVENKEY", awsSecretKey="given-secret",
                    awsSessionToken="given-token")
    records = sink.wait_for_rows(sink.start(source), 200)
    assert_delivered_exactly(records, puts, name)

    seen = signers(through)
    assert set(seen) == {"AKIDGIVENKEY"}, seen
    assert seen["AKIDGIVENKEY"]["with_session_token"] == seen["AKIDGIVENKEY"]["calls"] > 0, seen


def test_assumed_role_with_external_id_and_session_name(spark, kinesis, stream, proxy, sink, sts):
    name = stream(1)
    puts = kinesis.put_records(name, numbered(100))
    through = proxy()
    sts.clear()
    source = reader(spark, through.endpoint, name, awsAccessKey="AKIDBASEKEY", awsSecretKey="base-secret",
                    roleArn=ROLE, roleExternalId="ext-42", roleSessionName="etl-reader",
                    stsEndpoint=sts.endpoint)
    records = sink.wait_for_rows(sink.start(source), 100)
    assert_delivered_exactly(records, puts, name)

    calls = sts.assume_role_calls()
    assert calls, "the connector never called AssumeRole"
    for call in calls:
        assert (call["RoleArn"], call["ExternalId"], call["RoleSessionName"], call["DurationSeconds"]) == (
            ROLE, "ext-42", "etl-reader", "3600"), call
        assert call["SigningKeyId"] == "AKIDBASEKEY", "the role must be assumed with the keys given"
    seen = signers(through)
    assert seen and all(key.startswith("ASIA") for key in seen), f"Kinesis calls not signed by the role: {seen}"
    assert all(c["with_session_token"] == c["calls"] for c in seen.values()), seen


def test_assumed_role_is_refreshed_while_the_query_runs(spark, kinesis, stream, proxy, sink, sts):
    name = stream(1)
    through = proxy()
    sts.clear()
    jvm = spark.sparkContext._jvm
    # Sessions last at least 15 minutes; refreshing 895 s before expiry makes a new session every ~5 s.
    jvm.java.lang.System.setProperty("kinesisspark.sts.refreshBeforeExpirySeconds", "895")
    try:
        source = reader(spark, through.endpoint, name, roleArn=ROLE, roleSessionName="refresh-test",
                        roleSessionDuration="15m", stsEndpoint=sts.endpoint,
                        awsAccessKey="AKIDBASEKEY", awsSecretKey="base-secret")
        query = sink.start(source)
        progress = ProgressLog(query)
        puts = []
        for round_number in range(6):  # about 20 s of reading
            puts += kinesis.put_records(name, numbered(30, start=30 * round_number))
            time.sleep(3.5)
        records = sink.wait_for_rows(query, len(puts), on_poll=progress.poll)
    finally:
        jvm.java.lang.System.clearProperty("kinesisspark.sts.refreshBeforeExpirySeconds")
    assert_delivered_exactly(records, puts, name)
    sessions = [c for c in sts.assume_role_calls() if c["RoleSessionName"] == "refresh-test"]
    temporary_keys = {key for key in signers(through) if key.startswith("ASIA")}
    assert len(sessions) >= 3, f"expected the role to be assumed again as sessions neared expiry: {len(sessions)}"
    assert len(temporary_keys) >= 2, f"Kinesis calls should have moved to the refreshed keys: {temporary_keys}"


def test_no_credentials_anywhere_is_a_clear_error(spark, stream, emulator):
    name = stream(1)
    with no_default_aws_credentials(spark), pytest.raises(LOAD_ERRORS) as failure:
        reader(spark, emulator.endpoint, name)
    message = str(failure.value)
    assert "credentials" in message and "default credentials chain" in message, message[:2000]


def test_a_bad_provider_class_is_refused_at_load(spark, stream, emulator):
    name = stream(1)
    with pytest.raises(LOAD_ERRORS) as failure:
        reader(spark, emulator.endpoint, name, credentialsProviderClass="java.lang.String")
    message = str(failure.value)
    assert "'credentialsProviderClass'" in message and "KinesisCredentialsProvider" in message, message[:2000]
