"""Errors of the real connector, raised through PySpark, arrive as the Python package's own exceptions with the
connector's message: at ``KinesisReader.load()``, and around ``query.awaitTermination()`` through
``kinesis_spark.errors.translate_errors`` and ``translate(query.exception())``. A process whose Spark was
started without the jar gets a clear error from ``kinesis_spark.configure`` instead of a session that cannot
read Kinesis.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.spark import no_default_aws_credentials
from test_polling_source import numbered

from kinesis_spark import (
    KinesisCredentialsError,
    KinesisDataLossError,
    KinesisOptionError,
    KinesisReader,
    StreamNotFoundError,
)
from kinesis_spark.errors import translate, translate_errors

RECREATE_GAP_S = 1.5


def reader(spark, emulator, name: str) -> KinesisReader:
    return KinesisReader(spark).stream_names(name).region(REGION).endpoint(emulator.endpoint)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "credentialsProviderClass",
            "java.lang.String",
            "Invalid value 'java.lang.String' for option 'credentialsProviderClass': ",
        ),
        ("consumerNamePrefix", "no spaces", "Invalid value 'no spaces' for option 'consumerNamePrefix': expected "),
        (
            "kinesis.consumerType",
            "Push",
            "Invalid value 'Push' for option 'kinesis.consumerType': expected 'GetRecords' or 'SubscribeToShard'",
        ),
    ],
)
def test_options_only_the_jvm_checks_are_option_errors_too(spark, emulator, stream, option, value, message):
    with pytest.raises(KinesisOptionError) as failure:
        reader(spark, emulator, stream(1)).option(option, value).load()
    assert str(failure.value).startswith(message)
    assert "\tat " not in str(failure.value)  # no Java stack trace
    assert failure.value.java_class == "java.lang.IllegalArgumentException"


def test_a_missing_stream(spark, emulator):
    with pytest.raises(StreamNotFoundError) as failure:
        reader(spark, emulator, "no-such-stream").credentials(ACCESS_KEY, SECRET_KEY).load()
    assert failure.value.stream == "no-such-stream"
    assert str(failure.value).startswith("Kinesis stream 'no-such-stream' does not exist in region us-east-1")
    assert failure.value.java_class == "io.kinesisspark.StreamNotFoundException"


def test_no_credentials_anywhere(spark, emulator, stream):
    name = stream(1)
    with no_default_aws_credentials(spark), pytest.raises(KinesisCredentialsError) as failure:
        reader(spark, emulator, name).load()
    assert "failed because of the AWS credentials" in str(failure.value)
    assert failure.value.java_class == "io.kinesisspark.KinesisSparkException"


def test_data_loss_while_waiting_on_a_query(spark, emulator, kinesis, stream, sink):
    name = stream(1)
    kinesis.put_records(name, numbered(20))
    source = reader(spark, emulator, name).credentials(ACCESS_KEY, SECRET_KEY).initial_position("trim_horizon")
    query = sink.start(source.load())
    sink.wait_for_rows(query, 20)
    query.stop()

    kinesis.delete_and_wait(name)
    time.sleep(RECREATE_GAP_S)
    kinesis.create_stream(name, 1)
    query = sink.start(source.load())
    with pytest.raises(KinesisDataLossError) as failure, translate_errors():
        query.awaitTermination(180)
    assert (failure.value.stream, failure.value.shard_id) == (name, None)  # the whole stream is concerned
    assert str(failure.value).startswith(f"Data loss in Kinesis stream '{name}', shard every shard: ")
    assert "failOnDataLoss" in str(failure.value)
    assert "\tat " not in str(failure.value)

    from_exception = translate(query.exception())
    assert isinstance(from_exception, KinesisDataLossError)
    assert str(from_exception) == str(failure.value)


def test_errors_that_are_not_the_connectors_pass_through(spark, emulator, kinesis, stream, sink):
    name = stream(1)
    kinesis.put_records(name, numbered(5))
    df = reader(spark, emulator, name).credentials(ACCESS_KEY, SECRET_KEY).initial_position("trim_horizon").load()
    failing = df.selectExpr("raise_error('not the connector') AS x")
    query = sink.start(failing)
    with pytest.raises(Exception) as failure, translate_errors():
        query.awaitTermination(180)
    assert "not the connector" in str(failure.value)
    assert type(failure.value).__module__.startswith("pyspark."), type(failure.value)


SESSION_WITHOUT_JAR = textwrap.dedent(
    """
    import os
    from pyspark.sql import SparkSession
    import kinesis_spark

    plain = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .getOrCreate())
    plain.stop()  # the JVM keeps running without the jar
    try:
        kinesis_spark.configure(SparkSession.builder)
    except kinesis_spark.SessionWithoutJarError as error:
        print("REFUSED:", error)
    else:
        print("ACCEPTED")
    """
)


def test_configure_after_spark_started_without_the_jar(tmp_path):
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    result = subprocess.run(
        [sys.executable, "-c", SESSION_WITHOUT_JAR],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    refused = [line for line in result.stdout.splitlines() if line.startswith("REFUSED:")]
    assert refused, f"stdout: {result.stdout}\nstderr: {result.stderr[-3000:]}"
    assert "restart Python and run `spark = kinesis_spark.configure(SparkSession.builder).getOrCreate()`" in refused[0]
    assert "PYSPARK_SUBMIT_ARGS='--jars " in refused[0]
