from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from conftest import FakePackage
from kinesis_spark import DataSourceNotFoundError, InitialPosition, KinesisReader, KinesisSparkError


class FakeFrame:
    schema = "the schema"


class FakeStreamReader:
    """Records what KinesisReader asks of spark.readStream; fails load() or schema on request."""

    def __init__(self, load_error: Exception | None = None, schema_error: Exception | None = None) -> None:
        self.format_name: str | None = None
        self.passed: dict[str, Any] = {}
        self.load_error = load_error
        self.schema_error = schema_error

    def format(self, name: str) -> FakeStreamReader:
        self.format_name = name
        return self

    def options(self, **options: Any) -> FakeStreamReader:
        self.passed.update(options)
        return self

    def load(self) -> Any:
        if self.load_error is not None:
            raise self.load_error
        if self.schema_error is not None:
            error = self.schema_error

            class LazyFrame:
                @property
                def schema(self) -> str:
                    raise error

            return LazyFrame()
        return FakeFrame()


class FakeSpark:
    def __init__(self, stream_reader: FakeStreamReader) -> None:
        self.readStream = stream_reader


def reader_with(stream_reader: FakeStreamReader | None = None) -> tuple[KinesisReader, FakeStreamReader]:
    stream_reader = stream_reader or FakeStreamReader()
    return KinesisReader(FakeSpark(stream_reader)), stream_reader  # type: ignore[arg-type]


def test_options_are_rendered_and_passed_to_the_kinesis_format() -> None:
    reader, stream = reader_with()
    df = (
        reader.option("streamName", "orders")
        .option("maxRecordsPerFetch", 1000)
        .option("maxFetchRate", 1.5)
        .option("awsUseInstanceProfile", False)
        .option("failOnDataLoss", True)
        .option("minFetchPeriod", timedelta(seconds=1))
        .option("initialPosition", InitialPosition.earliest())
        .load()
    )
    assert isinstance(df, FakeFrame)
    assert stream.format_name == "kinesis"
    assert stream.passed == {
        "streamName": "orders",
        "maxRecordsPerFetch": "1000",
        "maxFetchRate": "1.5",
        "awsUseInstanceProfile": "false",
        "failOnDataLoss": "true",
        "minFetchPeriod": "1s",
        "initialPosition": "trim_horizon",
    }


def test_none_unsets_an_option_case_insensitively() -> None:
    reader, stream = reader_with()
    reader.options(streamName="orders", region="eu-west-1")
    reader.option("REGION", None).option("absent", None).load()
    assert stream.passed == {"streamName": "orders"}


def test_a_later_value_replaces_an_earlier_one_whatever_its_case() -> None:
    reader, stream = reader_with()
    reader.option("streamname", "a").option("streamName", "b").load()
    assert stream.passed == {"streamName": "b"}


def test_options_returns_the_reader_for_chaining() -> None:
    reader, _ = reader_with()
    assert reader.options(a=1) is reader
    assert reader.option("b", 2) is reader


@pytest.mark.parametrize("key", ["", None, 3])
def test_option_key_must_be_a_non_empty_string(key: Any) -> None:
    reader, _ = reader_with()
    with pytest.raises(TypeError, match="option key"):
        reader.option(key, "x")


def test_repr_hides_secrets() -> None:
    reader, _ = reader_with()
    reader.options(streamName="orders", awsSecretKey="s3cr3t", awsSessionToken="tok")
    text = repr(reader)
    assert "orders" in text
    assert "s3cr3t" not in text
    assert "tok'" not in text


JVM_MESSAGES = [
    # classic PySpark 4: an UnknownException whose text is the Java exception's toString
    "org.apache.spark.SparkClassNotFoundException: [DATA_SOURCE_NOT_FOUND] Failed to find the data source: "
    "kinesis. Make sure the provider name is correct and the package is properly registered and compatible "
    "with your Spark version. SQLSTATE: 42K02",
    # Spark 3.x
    "java.lang.ClassNotFoundException: Failed to find data source: kinesis. Please find packages at ...",
]


@pytest.mark.parametrize("message", JVM_MESSAGES)
@pytest.mark.parametrize("where", ["load", "schema"])
def test_missing_data_source_becomes_a_clear_error(
    message: str, where: str, fake_package: FakePackage
) -> None:
    fake_package.write_properties(version="9.8.7")
    jar = fake_package.add_jar("kinesis-spark-assembly_2.13-9.8.7.jar")
    cause = RuntimeError(message)
    stream = FakeStreamReader(**{f"{where}_error": cause})
    reader, _ = reader_with(stream)
    with pytest.raises(DataSourceNotFoundError) as info:
        reader.option("streamName", "orders").load()
    text = str(info.value)
    assert "kinesis_spark.configure(SparkSession.builder).getOrCreate()" in text
    assert f"spark.jars={jar}" in text
    assert info.value.__cause__ is cause
    assert isinstance(info.value, KinesisSparkError)


def test_missing_data_source_message_when_the_jar_is_missing_too(fake_package: FakePackage) -> None:
    error = RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kinesis.")
    reader, _ = reader_with(FakeStreamReader(load_error=error))
    with pytest.raises(DataSourceNotFoundError, match=r"bash dev/build-python\.sh"):
        reader.stream_names("orders").load()


def test_other_data_sources_not_found_are_not_ours() -> None:
    error = RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kafka.")
    reader, _ = reader_with(FakeStreamReader(load_error=error))
    with pytest.raises(RuntimeError) as info:
        reader.stream_names("orders").load()
    assert info.value is error


def test_other_errors_pass_through_unchanged() -> None:
    error = ValueError("[SOMETHING_ELSE] not the connector's")
    reader, _ = reader_with(FakeStreamReader(load_error=error))
    with pytest.raises(ValueError) as info:
        reader.stream_names("orders").load()
    assert info.value is error


def test_the_provider_class_can_be_named_instead_of_the_short_name() -> None:
    # On a runtime whose own Kinesis source also answers to "kinesis" (Databricks).
    stream = FakeStreamReader()
    KinesisReader(FakeSpark(stream), format="io.kinesisspark.KinesisSourceProvider").stream_names("s").load()  # type: ignore[arg-type]
    assert stream.format_name == "io.kinesisspark.KinesisSourceProvider"


def test_a_missing_provider_class_is_a_missing_jar(fake_package: FakePackage) -> None:
    error = RuntimeError(
        "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: io.kinesisspark.KinesisSourceProvider."
    )
    reader = KinesisReader(
        FakeSpark(FakeStreamReader(load_error=error)), format="io.kinesisspark.KinesisSourceProvider"
    )  # type: ignore[arg-type]
    with pytest.raises(DataSourceNotFoundError):
        reader.stream_names("s").load()
