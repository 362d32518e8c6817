"""Translation of JVM errors, on stand-ins for PySpark's exceptions and the Java objects behind them.

The real thing (a JVM, the connector, PySpark's conversion) is exercised in
tests-integration/test_python_errors.py.
"""

from __future__ import annotations

import pytest

from kinesis_spark import errors
from kinesis_spark.errors import (
    DataSourceNotFoundError,
    KinesisCheckpointError,
    KinesisCredentialsError,
    KinesisDataLossError,
    KinesisOptionError,
    KinesisSparkError,
    KinesisTlsError,
    StreamNotFoundError,
    translate,
    translate_errors,
)


class JavaName:
    def __init__(self, name: str) -> None:
        self.name = name

    def getName(self) -> str:  # noqa: N802 (Java's name)
        return self.name

    def getClassName(self) -> str:  # noqa: N802
        return self.name


class JavaThrowable:
    """Answers what translate asks of a py4j JavaObject for a java.lang.Throwable."""

    def __init__(
        self, cls: str, message: str | None, cause: JavaThrowable | None = None, thrower: str = ""
    ) -> None:
        self.cls, self.message, self.cause = cls, message, cause
        self.thrower = thrower or cls

    def getClass(self) -> JavaName:  # noqa: N802
        return JavaName(self.cls)

    def getMessage(self) -> str | None:  # noqa: N802
        return self.message

    def getCause(self) -> JavaThrowable | None:  # noqa: N802
        return self.cause

    def getStackTrace(self) -> list[JavaName]:  # noqa: N802
        return [JavaName(self.thrower)]


class CapturedException(Exception):  # noqa: N818 (PySpark's name)
    """Like pyspark's CapturedException: the Java exception in _origin, or only a converted cause."""

    def __init__(self, text: str, origin: JavaThrowable | None = None, cause: BaseException | None = None):
        super().__init__(text)
        self._origin = origin
        self._cause = cause


class IllegalArgumentException(Exception):  # noqa: N818 (PySpark's name)
    """Spark Connect's: no Java objects, only the message."""


OURS = "io.kinesisspark.KinesisSparkException"
DATA_LOSS = (
    "Data loss in Kinesis stream 'clicks', shard shardId-000000000002: the stream was deleted. Records the "
    "query still needed are no longer in the stream."
)


def streaming_failure(cause: JavaThrowable) -> CapturedException:
    wrapped = JavaThrowable(
        "org.apache.spark.sql.streaming.StreamingQueryException",
        f"[STREAM_FAILED] Query terminated with exception: {cause.cls}: {cause.message}",
        JavaThrowable("org.apache.spark.SparkException", "Job aborted due to stage failure", cause),
    )
    return CapturedException(
        f"[STREAM_FAILED] ... {cause.message}\n\nJVM stacktrace:\n\tat x.y", origin=wrapped
    )


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (DATA_LOSS, KinesisDataLossError),
        (
            "GetRecords failed because of the AWS credentials: tried the keys; AWS said: denied.",
            KinesisCredentialsError,
        ),
        (
            "GetRecords on Kinesis stream 'clicks' was denied: the AWS credentials (the keys) lack the IAM "
            "permission kinesis:GetRecords; AWS said: AccessDeniedException: User: u is not authorized.",
            KinesisCredentialsError,
        ),
        ("ListShards failed: the TLS connection to https://x could not be verified (PKIX).", KinesisTlsError),
        ("The checkpoint holds a Kinesis offset of version 9, but ...", KinesisCheckpointError),
        ("Cannot read Kinesis offset from the checkpoint: '{' (eof).", KinesisCheckpointError),
        ("Something else the connector says.", KinesisSparkError),
    ],
)
def test_connector_exceptions_deep_in_the_chain(message: str, kind: type[KinesisSparkError]) -> None:
    failure = streaming_failure(JavaThrowable(OURS, message))
    translated = translate(failure)
    assert type(translated) is kind
    assert str(translated) == message
    assert isinstance(translated, KinesisSparkError)
    assert translated.java_class == OURS


def test_data_loss_names_stream_and_shard() -> None:
    translated = translate(streaming_failure(JavaThrowable(OURS, DATA_LOSS)))
    assert isinstance(translated, KinesisDataLossError)
    assert (translated.stream, translated.shard_id) == ("clicks", "shardId-000000000002")


def test_stream_not_found_by_its_class() -> None:
    message = "Kinesis stream 'nope' does not exist in region us-east-1 (endpoint http://x): check option ..."
    translated = translate(
        CapturedException(message, JavaThrowable("io.kinesisspark.StreamNotFoundException", message))
    )
    assert isinstance(translated, StreamNotFoundError)
    assert isinstance(translated, LookupError)
    assert translated.stream == "nope"


def test_an_option_error_raised_by_the_connector() -> None:
    message = "Invalid value '0' for option 'maxRecordsPerFetch': expected an integer from 1 to 10000."
    origin = JavaThrowable(
        "java.lang.IllegalArgumentException", message, thrower="io.kinesisspark.KinesisErrors$"
    )
    translated = translate(CapturedException(message, origin))
    assert isinstance(translated, KinesisOptionError)
    assert str(translated) == message


def test_an_unconverted_py4j_error() -> None:
    # PySpark re-raises Py4JJavaError for Java classes it has no Python class for.
    class Py4JJavaError(Exception):
        def __init__(self, java_exception: JavaThrowable) -> None:
            super().__init__("An error occurred while calling o63.save.")
            self.java_exception = java_exception

    message = (
        "DescribeStreamSummary failed because of the AWS credentials: tried the default chain; AWS said: no."
    )
    translated = translate(Py4JJavaError(JavaThrowable(OURS, message)))
    assert isinstance(translated, KinesisCredentialsError)
    assert str(translated) == message


def test_the_same_words_from_someone_else_are_not_ours() -> None:
    message = "Invalid value 'x' for option 'y': expected z."
    origin = JavaThrowable("java.lang.IllegalArgumentException", message, thrower="org.apache.spark.Other")
    failure = CapturedException(message, origin)
    assert translate(failure) is failure


def test_query_exception_keeps_only_the_cause() -> None:
    # StreamingQuery.exception() builds the Python exception from text, with the Java cause converted.
    cause = CapturedException(
        "Job aborted",
        JavaThrowable("org.apache.spark.SparkException", "Job aborted", JavaThrowable(OURS, DATA_LOSS)),
    )
    failure = CapturedException("Query terminated with exception: Job aborted", None, cause)
    assert isinstance(translate(failure), KinesisDataLossError)


def test_query_exception_with_an_unknown_cause_is_read_from_the_cause_text() -> None:
    # What PySpark 4 really builds: the cause, a class it does not know, becomes an UnknownException whose
    # text starts with the Java class name; neither exception keeps a Java object.
    cause = CapturedException(f"{OURS}: {DATA_LOSS}")
    failure = CapturedException(f"Query terminated with exception: {DATA_LOSS}", None, cause)
    translated = translate(failure)
    assert isinstance(translated, KinesisDataLossError)
    assert str(translated) == DATA_LOSS


def test_text_only_exceptions_are_read_like_spark_connect_sends_them() -> None:
    failure = RuntimeError(
        f"[STREAM_FAILED] Query [id = 1] terminated with exception: {OURS}: {DATA_LOSS}\n\tat a.b"
    )
    translated = translate(failure)
    assert isinstance(translated, KinesisDataLossError)
    assert str(translated) == DATA_LOSS
    connect = IllegalArgumentException(
        "Options 'caBundle' and 'insecureTrustAllCertificates' cannot be used together: keep one."
    )
    assert isinstance(translate(connect), KinesisOptionError)


NOT_FOUND = "Kinesis stream 'clicks' does not exist in us-east-1."


def connect_exception(kind: str, message: str, stacktrace: str) -> Exception:
    """An exception shaped as PySpark's Spark Connect client raises them (seen from a real Connect server):
    the JVM message in ``_message`` ("(<class>) <message>" for classes PySpark does not know), the JVM stack
    trace with its causes in ``_stacktrace``, and both in ``str()``."""
    cls = type(kind, (Exception,), {"__module__": "pyspark.errors.exceptions.connect"})
    error = cls(f"{message}\n\nJVM stacktrace:\n{stacktrace}")
    error._message, error._stacktrace = message, stacktrace  # type: ignore[attr-defined]
    return error


def test_spark_connect_errors_by_their_classes() -> None:
    missing = connect_exception(
        "UnknownException",
        f"(io.kinesisspark.StreamNotFoundException) {NOT_FOUND}",
        "io.kinesisspark.StreamNotFoundException\n\tat io.kinesisspark.aws.SdkKinesisApi.describeStream(x)",
    )
    translated = translate(missing)
    assert isinstance(translated, StreamNotFoundError) and translated.stream == "clicks"
    assert str(translated) == NOT_FOUND

    option = "Invalid value '0' for option 'maxRecordsPerFetch': expected an integer from 1 to 10000."
    refused = connect_exception(
        "IllegalArgumentException",
        option,
        "java.lang.IllegalArgumentException\n\tat io.kinesisspark.KinesisErrors$.invalidOption(x)\n\tat b(c)",
    )
    translated = translate(refused)
    assert isinstance(translated, KinesisOptionError)
    assert str(translated) == option  # the message alone, not the JVM stack trace

    # The relocated AWS SDK's exceptions are not the connector's: the wrapping error decides.
    tls = "DescribeStreamSummary failed: the TLS connection to https://127.0.0.1:1 could not be verified (x)."
    wrapped = connect_exception(
        "UnknownException",
        f"(io.kinesisspark.KinesisSparkException) {tls}",
        "io.kinesisspark.KinesisSparkException\n\tat io.kinesisspark.aws.X.y(z)\n"
        "Caused by: io.kinesisspark.shaded.awssdk.core.exception.SdkClientException: Unable to execute HTTP "
        "request: PKIX path building failed",
    )
    assert isinstance(translate(wrapped), KinesisTlsError)
    sdk_only = connect_exception(
        "UnknownException",
        "(io.kinesisspark.shaded.awssdk.core.exception.SdkClientException) Unable to execute HTTP request",
        "io.kinesisspark.shaded.awssdk.core.exception.SdkClientException\n\tat io.kinesisspark.shaded.a(b)",
    )
    assert translate(sdk_only) is sdk_only


def test_a_gone_gateway_falls_back_to_the_text() -> None:
    class Broken:
        def getStackTrace(self) -> list[JavaName]:  # noqa: N802
            raise ConnectionError("gateway closed")

    failure = CapturedException(f"wrapped: {OURS}: {DATA_LOSS}", Broken())  # type: ignore[arg-type]
    assert isinstance(translate(failure), KinesisDataLossError)


def test_unrelated_and_already_translated_errors_are_returned_as_they_are() -> None:
    unrelated = CapturedException("boom", JavaThrowable("java.lang.IllegalStateException", "boom"))
    assert translate(unrelated) is unrelated
    ours = KinesisSparkError("x")
    assert translate(ours) is ours


def test_cyclic_causes_end() -> None:
    a = CapturedException("a")
    b = CapturedException("b", cause=a)
    a._cause = b
    assert translate(a) is a


def test_missing_kinesis_data_source() -> None:
    failure = CapturedException(
        "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kinesis. Make sure the provider name is ...",
        JavaThrowable("org.apache.spark.SparkClassNotFoundException", "[DATA_SOURCE_NOT_FOUND] ..."),
    )
    assert isinstance(translate(failure), DataSourceNotFoundError)


def test_translate_errors_raises_from_the_original() -> None:
    original = streaming_failure(JavaThrowable(OURS, DATA_LOSS))
    with pytest.raises(KinesisDataLossError) as info, translate_errors():
        raise original
    assert info.value.__cause__ is original


def test_translate_errors_lets_other_errors_through_untouched() -> None:
    with pytest.raises(KeyError) as info, translate_errors():
        raise KeyError("k")
    assert info.value.__cause__ is None


def test_translate_errors_is_a_decorator_too() -> None:
    @translate_errors()
    def wait() -> None:
        raise streaming_failure(JavaThrowable(OURS, DATA_LOSS))

    with pytest.raises(KinesisDataLossError):
        wait()


def test_public_module_exports() -> None:
    assert errors.translate is translate
    for name in errors.__all__:
        assert hasattr(errors, name)
