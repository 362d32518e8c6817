from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from kinesis_spark import (
    KinesisConsumer,
    KinesisConsumerManager,
    KinesisOptionError,
    KinesisSparkError,
    SparkConnectError,
    StreamNotFoundError,
)


class FakeJavaConsumer:
    def __init__(self, name: str, status: str) -> None:
        self._name, self._status = name, status

    def name(self) -> str:
        return self._name

    def arn(self) -> str:
        return f"arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/{self._name}:1"

    def status(self) -> str:
        return self._status

    def createdMillis(self) -> int:  # noqa: N802 (the JVM's name)
        return 1_767_225_600_000


class FakeJvmManager:
    """Stands in for io.kinesisspark.efo.KinesisConsumerManager: records the options and calls it gets."""

    def __init__(self, log: list[Any], failure: Exception | None) -> None:
        self.log, self.failure = log, failure

    def newManager(self) -> FakeJvmManager:  # noqa: N802
        self.log.append(("newManager",))
        return self

    def option(self, key: str, value: str) -> FakeJvmManager:
        self.log.append(("option", key, value))
        return self

    def create(self) -> FakeJvmManager:
        self.log.append(("create",))
        if self.failure is not None:
            raise self.failure
        return self

    def listConsumersAsJava(self, stream: str) -> list[FakeJavaConsumer]:  # noqa: N802
        self.log.append(("list", stream))
        return [FakeJavaConsumer("a", "ACTIVE"), FakeJavaConsumer("b", "CREATING")]

    def registerConsumer(self, stream: str, name: str) -> str:  # noqa: N802
        self.log.append(("register", stream, name))
        return f"arn-of-{name}"

    def deregisterConsumer(self, stream: str, name: str) -> bool:  # noqa: N802
        self.log.append(("deregister", stream, name))
        return name == "a"


class FakeSpark:
    def __init__(self, failure: Exception | None = None) -> None:
        self.log: list[Any] = []
        manager = FakeJvmManager(self.log, failure)
        package = type("P", (), {"efo": type("E", (), {"KinesisConsumerManager": manager})()})()
        jvm = type("J", (), {"io": type("I", (), {"kinesisspark": package})()})()
        self.sparkContext = type("C", (), {"_jvm": jvm})()


def test_calls_the_jvm_manager_with_the_options_rendered() -> None:
    spark = FakeSpark()
    manager = KinesisConsumerManager(spark).region("us-east-1")  # type: ignore[arg-type]
    manager.option("insecureTrustAllCertificates", True)
    consumers = manager.list_consumers("s")
    assert consumers == [
        KinesisConsumer(
            "a",
            "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/a:1",
            "ACTIVE",
            datetime(2026, 1, 1, tzinfo=timezone.utc),
        ),
        KinesisConsumer(
            "b",
            "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/b:1",
            "CREATING",
            datetime(2026, 1, 1, tzinfo=timezone.utc),
        ),
    ]
    assert [c.active for c in consumers] == [True, False]
    assert manager.register_consumer("s", "c") == "arn-of-c"
    assert manager.deregister_consumer("s", "a") is True
    assert manager.deregister_consumer("s", "zz") is False
    assert spark.log == [
        ("newManager",),
        ("option", "region", "us-east-1"),
        ("option", "insecureTrustAllCertificates", "true"),
        ("create",),
        ("list", "s"),
        ("register", "s", "c"),
        ("deregister", "s", "a"),
        ("deregister", "s", "zz"),
    ], "the JVM manager is made once and reused"


def test_changing_an_option_makes_a_new_jvm_manager() -> None:
    spark = FakeSpark()
    manager = KinesisConsumerManager(spark).option("region", "us-east-1")  # type: ignore[arg-type]
    manager.list_consumers("s")
    manager.option("region", "eu-west-1").list_consumers("s")
    assert [e for e in spark.log if e[0] in ("create", "option")] == [
        ("option", "region", "us-east-1"),
        ("create",),
        ("option", "region", "eu-west-1"),
        ("create",),
    ]


def test_jvm_errors_become_the_errors_of_kinesis_spark_errors() -> None:
    missing = RuntimeError(
        "An error occurred while calling o1.listConsumersAsJava.\n: io.kinesisspark.StreamNotFoundException: "
        "Kinesis stream 'gone' does not exist in region us-east-1 (endpoint fake): check option 'streamName'."
    )
    manager = KinesisConsumerManager(FakeSpark(failure=missing)).region("us-east-1")  # type: ignore[arg-type]
    with pytest.raises(StreamNotFoundError, match="'gone' does not exist") as raised:
        manager.list_consumers("gone")
    assert raised.value.stream == "gone"


def test_bad_connection_options_are_refused_when_set() -> None:
    with pytest.raises(KinesisOptionError, match="option 'region'"):
        KinesisConsumerManager(FakeSpark()).option("region", "mars")  # type: ignore[arg-type]


def test_a_session_without_a_jvm_gateway_is_refused_clearly() -> None:
    class ConnectSession:
        @property
        def sparkContext(self) -> Any:  # noqa: N802
            raise RuntimeError("not supported by Spark Connect")

    with pytest.raises(SparkConnectError, match="a Spark Connect session has none here") as info:
        KinesisConsumerManager(ConnectSession()).list_consumers("s")  # type: ignore[arg-type]
    assert "aws kinesis list-stream-consumers" in str(info.value)
    assert isinstance(info.value, KinesisSparkError)


def test_repr_hides_secrets() -> None:
    manager = KinesisConsumerManager(object())  # type: ignore[arg-type]
    manager.options(awsAccessKey="AKID", awsSecretKey="s3cr3t")
    assert "s3cr3t" not in repr(manager) and "awsSecretKey=***" in repr(manager)
