from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kinesis_spark import KinesisOptionError, KinesisWriter
from kinesis_spark.errors import KinesisDataLossError, SparkConnectError


class FakeWriter:
    """Records what KinesisWriter asks of df.writeStream / df.write; fails start()/save() on request."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.passed: dict[str, str] = {}
        self.error = error

    def format(self, name: str) -> FakeWriter:
        self.calls.append(("format", name))
        return self

    def options(self, **options: str) -> FakeWriter:
        self.passed.update(options)
        return self

    def option(self, key: str, value: str) -> FakeWriter:
        self.passed[key] = value
        return self

    def __getattr__(self, name: str) -> Any:
        # queryName, trigger, mode: record the call and chain.
        def record(*args: Any, **kwargs: Any) -> FakeWriter:
            self.calls.append((name, kwargs or args))
            return self

        return record

    def start(self) -> str:
        if self.error:
            raise self.error
        return "query"

    def save(self) -> None:
        if self.error:
            raise self.error
        self.calls.append(("save", ()))


class FakeFrame:
    def __init__(self, error: Exception | None = None) -> None:
        self.writeStream = FakeWriter(error)
        self.write = FakeWriter(error)


def test_start_passes_options_checkpoint_name_and_trigger() -> None:
    df = FakeFrame()
    writer = KinesisWriter(df).stream_name("out").region("us-east-1").option("aggregation", True)  # type: ignore[arg-type]
    assert writer.start("/cp", query_name="q", processing_time=timedelta(seconds=5)) == "query"
    assert df.writeStream.passed == {
        "streamName": "out",
        "region": "us-east-1",
        "aggregation": "true",
        "checkpointLocation": "/cp",
    }
    assert ("format", "kinesis") in df.writeStream.calls
    assert ("queryName", ("q",)) in df.writeStream.calls
    assert ("trigger", {"processingTime": "5000 milliseconds"}) in df.writeStream.calls


def test_available_now() -> None:
    df = FakeFrame()
    KinesisWriter(df).stream_name("out").start(available_now=True)  # type: ignore[arg-type]
    assert ("trigger", {"availableNow": True}) in df.writeStream.calls


def test_one_trigger_only() -> None:
    for triggers in (
        {"processing_time": "1 second", "available_now": True},
        {"real_time": "5 seconds", "processing_time": "1 second"},
    ):
        with pytest.raises(ValueError, match="one of processing_time, available_now and real_time"):
            KinesisWriter(FakeFrame()).start(**triggers)  # type: ignore[arg-type]


def test_real_time_needs_a_classic_session() -> None:
    class ConnectSession:
        version = "4.2.0"

        @property
        def sparkContext(self) -> Any:  # noqa: N802
            raise RuntimeError("not supported by Spark Connect")

    df = FakeFrame()
    df.sparkSession = ConnectSession()  # type: ignore[attr-defined]
    with pytest.raises(SparkConnectError, match="A real-time write to Kinesis calls the connector") as info:
        KinesisWriter(df).stream_name("out").start(real_time="5 seconds")  # type: ignore[arg-type]
    assert "KinesisForeachWriter" in str(info.value)
    assert df.writeStream.calls == []


def test_save_appends() -> None:
    df = FakeFrame()
    KinesisWriter(df).stream_name("out").credentials("A", "B").save()  # type: ignore[arg-type]
    assert df.write.passed == {"streamName": "out", "awsAccessKey": "A", "awsSecretKey": "B"}
    assert ("mode", ("append",)) in df.write.calls
    assert ("save", ()) in df.write.calls


def test_connection_options_are_checked_before_spark_is_asked() -> None:
    df = FakeFrame()
    writer = KinesisWriter(df).stream_name("out").option("awsSecretKey", "B")  # type: ignore[arg-type]
    with pytest.raises(KinesisOptionError, match="Option 'awsSecretKey' is set but 'awsAccessKey' is not"):
        writer.start()
    assert df.writeStream.calls == []
    with pytest.raises(KinesisOptionError, match="expected an AWS region name"):
        writer.region("nowhere")


def test_errors_are_translated() -> None:
    message = "Data loss in Kinesis stream 's', shard shardId-0: gone."
    df = FakeFrame(RuntimeError(f"io.kinesisspark.KinesisSparkException: {message}"))
    with pytest.raises(KinesisDataLossError, match="Data loss in Kinesis stream 's'"):
        KinesisWriter(df).stream_name("s").save()  # type: ignore[arg-type]
