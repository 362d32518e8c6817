"""Exceptions raised by :mod:`kinesis_spark`, and the translation of the connector's JVM errors into them.

Errors from the connector's JVM side reach Python as PySpark exceptions (``IllegalArgumentException``,
``StreamingQueryException``, ...) whose text can hold a Java stack trace and several layers of wrapping.
:func:`translate` finds the connector's own exception inside and returns the matching
:class:`KinesisSparkError` subclass with the connector's message; :func:`translate_errors` does the same for a
block of code, such as ``query.awaitTermination()``. ``KinesisReader.load()`` and ``KinesisWriter`` translate
by themselves.

The option-error message helpers build the same texts as the JVM's ``KinesisErrors`` (``invalidOption``,
``missingOption``, ``optionRequiresOther``, ``conflictingOptions``), so an option refused in Python reads
exactly as it would had the JVM refused it.

Examples
--------
>>> from kinesis_spark.errors import KinesisDataLossError, translate_errors
>>> try:  # doctest: +SKIP
...     with translate_errors():
...         query.awaitTermination()
... except KinesisDataLossError as lost:
...     print(lost.stream, lost.shard_id)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "DataSourceNotFoundError",
    "JarNotFoundError",
    "KinesisCheckpointError",
    "KinesisCredentialsError",
    "KinesisDataLossError",
    "KinesisOptionError",
    "KinesisSparkError",
    "KinesisTlsError",
    "SessionWithoutJarError",
    "StreamNotFoundError",
    "UnsupportedSparkVersionError",
    "conflicting_options",
    "invalid_option",
    "missing_option",
    "option_requires_other",
    "translate",
    "translate_errors",
]


class KinesisSparkError(Exception):
    """Base class of every error raised by :mod:`kinesis_spark`.

    Errors translated from the JVM (see :func:`kinesis_spark.errors.translate`) carry the connector's message
    unchanged, the Java class that raised it in :attr:`java_class`, and the PySpark exception they were
    translated from as ``__cause__``.

    Parameters
    ----------
    message : str
        What went wrong and what to do about it.
    java_class : str or None
        Fully qualified name of the Java exception this error was translated from, if any.

    Examples
    --------
    >>> import kinesis_spark
    >>> issubclass(kinesis_spark.JarNotFoundError, kinesis_spark.KinesisSparkError)
    True
    >>> kinesis_spark.KinesisSparkError("boom", java_class="io.kinesisspark.KinesisSparkException").java_class
    'io.kinesisspark.KinesisSparkException'
    """

    def __init__(self, message: str, java_class: str | None = None) -> None:
        super().__init__(message)
        self.java_class = java_class


class KinesisOptionError(KinesisSparkError, ValueError):
    """An option is invalid, missing, or conflicts with another.

    Raised by the option builders as soon as a bad value is given, and translated from the connector's
    ``IllegalArgumentException`` at ``load()``. Also a :class:`ValueError`.

    Examples
    --------
    >>> from kinesis_spark import KinesisReader
    >>> try:
    ...     KinesisReader(spark).max_records_per_fetch(0)
    ... except KinesisOptionError as error:
    ...     print(error)
    Invalid value '0' for option 'maxRecordsPerFetch': expected an integer from 1 to 10000.
    """


class StreamNotFoundError(KinesisSparkError, LookupError):
    """A Kinesis stream named in ``streamName`` does not exist (at ``load()``), or no longer exists.

    Attributes
    ----------
    stream : str or None
        The stream's name, when the message names it.
    """

    def __init__(self, message: str, java_class: str | None = None, stream: str | None = None) -> None:
        super().__init__(message, java_class)
        self.stream = stream


class KinesisCredentialsError(KinesisSparkError):
    """AWS refused the credentials, denied them a permission, or none were found.

    The message says which credentials were tried, never a secret; for a denied permission it names the IAM
    action to allow, e.g. ``kinesis:GetRecords``.
    """


class KinesisTlsError(KinesisSparkError):
    """The TLS certificate of the Kinesis (or STS) endpoint could not be verified."""


class KinesisDataLossError(KinesisSparkError):
    """Records the query still needed are gone from the stream, and ``failOnDataLoss`` is ``true``.

    Attributes
    ----------
    stream : str or None
        The stream the records were lost from.
    shard_id : str or None
        The shard the records were lost from; ``None`` when the whole stream is concerned (deleted, or
        deleted and created again).
    """

    def __init__(
        self,
        message: str,
        java_class: str | None = None,
        stream: str | None = None,
        shard_id: str | None = None,
    ) -> None:
        super().__init__(message, java_class)
        self.stream = stream
        self.shard_id = shard_id


class KinesisCheckpointError(KinesisSparkError):
    """The checkpoint cannot be resumed with these options or this version (bad offset, stream gone)."""


class JarNotFoundError(KinesisSparkError, FileNotFoundError):
    """The connector jar is not inside the installed package.

    Also a :class:`FileNotFoundError`, so code that handles missing files catches it too.
    Usually the package was installed from a source tree without building the jar first;
    ``bash dev/build-python.sh`` builds nothing but copies the assembled jar into the package.
    """


class UnsupportedSparkVersionError(JarNotFoundError):
    """The package bundles no connector jar for this Spark version.

    The package holds one jar per supported Spark line (Spark 4.x on Scala 2.13, Spark 3.5 on Scala 2.12), and
    picks the one of the installed pyspark's ``MAJOR.MINOR``; another version has none. Also a
    :class:`JarNotFoundError`: the jar this Spark needs is not in the package.

    Attributes
    ----------
    spark_version : str
        The Spark version no jar fits, as given (usually ``pyspark.__version__``).
    supported : list[str]
        The Spark ``MAJOR.MINOR`` versions the package has jars for, for example ``['4.2', '3.5']``.

    Examples
    --------
    >>> error = UnsupportedSparkVersionError("no jar", spark_version="4.1.0", supported=["4.2", "3.5"])
    >>> isinstance(error, JarNotFoundError), error.supported
    (True, ['4.2', '3.5'])
    """

    def __init__(self, message: str, spark_version: str, supported: list[str]) -> None:
        super().__init__(message)
        self.spark_version = spark_version
        self.supported = supported


class PySparkNotFoundError(KinesisSparkError, ImportError):
    """No ``pyspark`` is installed in this Python environment, so no connector jar can be chosen for it.

    The package never installs Spark itself, so that it cannot replace the Spark a user or a cluster has: a
    fresh environment installs it with ``pip install "kinesis-spark[pyspark]"``. Also an :class:`ImportError`.

    Examples
    --------
    >>> isinstance(PySparkNotFoundError("no pyspark"), ImportError)
    True
    """


class SparkConnectError(KinesisSparkError):
    """A helper that needs a Spark JVM in this Python process was used with Spark Connect.

    With Spark Connect the connector runs in the Connect server: its jar goes on the server's classpath (see
    the user guide's Spark Connect page), :class:`~kinesis_spark.KinesisReader` and
    :class:`~kinesis_spark.KinesisWriter` work from the client, and the message says what to do instead.

    Examples
    --------
    >>> issubclass(SparkConnectError, KinesisSparkError)
    True
    """


class DataSourceNotFoundError(KinesisSparkError):
    """Spark cannot find the ``kinesis`` data source: the session was started without the connector jar.

    The jar must be on ``spark.jars`` before the JVM starts; adding it to a running session is not enough.
    Create the session with :func:`kinesis_spark.configure`.
    """


class SessionWithoutJarError(DataSourceNotFoundError):
    """:func:`kinesis_spark.configure` was called after Spark's JVM had started without the connector jar.

    Spark reads ``spark.jars`` only when its JVM starts, so ``getOrCreate()`` would silently return a
    session that cannot read Kinesis; :func:`kinesis_spark.configure` raises this instead, with the line that
    fixes it.
    """


# --- messages shared with the JVM (io.kinesisspark.KinesisErrors) -------------------------------------------


def invalid_option(option: str, value: str, accepted: str) -> KinesisOptionError:
    """``KinesisErrors.invalidOption``: a value the option does not accept.

    Examples
    --------
    >>> print(invalid_option("shardsPerTask", "0", "an integer of at least 1"))
    Invalid value '0' for option 'shardsPerTask': expected an integer of at least 1.
    """
    return KinesisOptionError(f"Invalid value '{value}' for option '{option}': expected {accepted}.")


def missing_option(option: str, accepted: str) -> KinesisOptionError:
    """``KinesisErrors.missingOption``: a required option is not set."""
    return KinesisOptionError(f"Option '{option}' is required: {accepted}.")


def option_requires_other(option: str, required: str) -> KinesisOptionError:
    """``KinesisErrors.optionRequiresOther``: an option that only means something together with another."""
    return KinesisOptionError(f"Option '{option}' is set but '{required}' is not: set both or neither.")


def conflicting_options(option: str, other: str) -> KinesisOptionError:
    """``KinesisErrors.conflictingOptions``: two options that exclude each other."""
    return KinesisOptionError(f"Options '{option}' and '{other}' cannot be used together: keep one.")


# --- translation of JVM errors ------------------------------------------------------------------------------

_OUR_PACKAGE = "io.kinesisspark."
_ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
# The option errors of KinesisErrors and AwslabsOptions, by their opening words.
_OPTION_MESSAGE = re.compile(
    r"Invalid value '.*' for option '[^']+'"
    r"|Option '[^']+' (?:is required|is set but|is not set|is not supported|of the awslabs connector)"
    r"|Options '[^']+' (?:and '[^']+' cannot be used together|and its awslabs alias)",
    re.DOTALL,
)
# "<class>: <message>" in the text of an exception whose Java objects are out of reach (Spark Connect).
_JAVA_IN_TEXT = re.compile(r"((?:io\.kinesisspark|java\.lang)\.[\w.$]*(?:Exception|Error)): ([^\n]*)")
# Spark Connect's message of a JVM exception it has no Python class for: "(<class>) <message>".
_CONNECT_MESSAGE = re.compile(r"\((?P<cls>[\w.$]+)\) (?P<message>.*)", re.DOTALL)
# A cause in a JVM stack trace as Spark Connect sends it: "Caused by: <class>: <message>".
_CONNECT_CAUSE = re.compile(r"^Caused by: (?P<cls>[\w.$]+)(?:: (?P<message>.*))?$", re.MULTILINE)
# The relocated libraries inside the jar (the AWS SDK, Netty, ...): their exceptions are not the connector's.
_SHADED = "io.kinesisspark.shaded."
_DATA_LOSS = re.compile(r"Data loss in Kinesis stream '(?P<stream>[^']*)', shard (?P<shard>[^:]+):")
_STREAM_NOT_FOUND = re.compile(r"Kinesis stream '(?P<stream>[^']*)' does not exist")
# What Spark says when no provider is registered under a name: the error condition (Spark 4, classic and
# Connect) and the message text of Spark 4 and of Spark 3.
_NOT_FOUND_MARKERS = ("DATA_SOURCE_NOT_FOUND", "Failed to find the data source", "Failed to find data source")
_OUR_FORMAT_NOT_FOUND = re.compile(r"data source: (?:(?:aws-)?kinesis|io\.kinesisspark\.[\w.]+)\b")
# Causes are followed this deep at most; real chains are a handful of links long.
_MAX_CHAIN = 32


def translate(exc: BaseException) -> BaseException:
    """Return the :mod:`kinesis_spark` error that ``exc`` stands for, or ``exc`` itself.

    Looks through ``exc``, its causes and, in classic PySpark, the Java exceptions behind them for an
    exception the connector raised, and maps it by Java class and message:

    ==============================================  =============================
    connector exception                             Python error
    ==============================================  =============================
    ``IllegalArgumentException`` about an option    :class:`KinesisOptionError`
    ``StreamNotFoundException``                     :class:`StreamNotFoundError`
    data loss (``failOnDataLoss=true``)             :class:`KinesisDataLossError`
    AWS refused, denied or found no credentials     :class:`KinesisCredentialsError`
    TLS certificate not verified                    :class:`KinesisTlsError`
    checkpoint cannot be resumed                    :class:`KinesisCheckpointError`
    any other ``io.kinesisspark`` exception         :class:`KinesisSparkError`
    Spark has no ``kinesis`` data source            :class:`DataSourceNotFoundError`
    ==============================================  =============================

    The returned error's message is the connector's message, without Java stack traces; raise it ``from exc``
    to keep the original for debugging (:func:`translate_errors` does).

    Parameters
    ----------
    exc : BaseException
        Typically a PySpark exception from ``load()``, ``start()``, ``awaitTermination()``,
        ``processAllAvailable()`` or ``query.exception()``.

    Returns
    -------
    BaseException
        A new :class:`KinesisSparkError`, or ``exc`` unchanged when it did not come from the connector
        (or already is a :class:`KinesisSparkError`).

    Examples
    --------
    >>> error = translate(RuntimeError(
    ...     "[STREAM_FAILED] Query terminated with exception: io.kinesisspark.KinesisSparkException: "
    ...     "Data loss in Kinesis stream 'clicks', shard shardId-000000000001: the stream was deleted."))
    >>> type(error).__name__, error.stream, error.shard_id
    ('KinesisDataLossError', 'clicks', 'shardId-000000000001')
    >>> other = ValueError("not ours")
    >>> translate(other) is other
    True
    """
    if isinstance(exc, KinesisSparkError):
        return exc
    text = _text(exc)
    java = _java_chain(exc) or _connect_chain(exc)
    # Spark Connect's IllegalArgumentException carries only the message, no Java objects.
    if java is None and type(exc).__name__ == "IllegalArgumentException" and _OPTION_MESSAGE.match(str(exc)):
        return KinesisOptionError(str(exc), _ILLEGAL_ARGUMENT)
    # The text after the Java objects: an exception that could not be sent back from an executor survives
    # only as text in the message of the one that wraps it.
    in_text = [(found[1], found[2].rstrip(), None) for found in _JAVA_IN_TEXT.finditer(text)]
    for java_class, message, raised_by_us in (java or []) + in_text:
        if java_class.startswith(_OUR_PACKAGE) and not java_class.startswith(_SHADED):
            return _ours(java_class, message)
        if java_class == _ILLEGAL_ARGUMENT and raised_by_us is not False and _OPTION_MESSAGE.match(message):
            return KinesisOptionError(message, java_class)
    if any(marker in text for marker in _NOT_FOUND_MARKERS) and _OUR_FORMAT_NOT_FOUND.search(text):
        from ._jar import data_source_not_found_message  # the jar module imports this one

        return DataSourceNotFoundError(data_source_not_found_message())
    return exc


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Raise the :mod:`kinesis_spark` error behind any exception of the block; see :func:`translate`.

    Exceptions that did not come from the connector pass through unchanged. Usable as a decorator too.

    Examples
    --------
    >>> with translate_errors():  # doctest: +SKIP
    ...     query.awaitTermination()
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisDataLossError: Data loss in Kinesis stream 'clicks', shard ...

    >>> @translate_errors()
    ... def run(query):
    ...     query.processAllAvailable()
    """
    try:
        yield
    except Exception as exc:
        translated = translate(exc)
        if translated is exc:
            raise
        raise translated from exc


def _ours(java_class: str, message: str) -> KinesisSparkError:
    if java_class.endswith(".StreamNotFoundException"):
        found = _STREAM_NOT_FOUND.search(message)
        return StreamNotFoundError(message, java_class, found["stream"] if found else None)
    lost = _DATA_LOSS.match(message)
    if lost:
        # "shard every shard" when a whole stream is gone (deleted, or recreated).
        shard = None if " " in lost["shard"] else lost["shard"]
        return KinesisDataLossError(message, java_class, lost["stream"], shard)
    if " failed because of the AWS credentials: " in message or " lack the IAM permission " in message:
        return KinesisCredentialsError(message, java_class)
    if ": the TLS connection to " in message:
        return KinesisTlsError(message, java_class)
    if message.startswith(("The checkpoint ", "Cannot read Kinesis offset from the checkpoint")):
        return KinesisCheckpointError(message, java_class)
    return KinesisSparkError(message, java_class)


def _java_chain(exc: BaseException) -> list[tuple[str, str, bool | None]] | None:
    """(Java class, message, raised by our code) of the Java exceptions behind ``exc``, outermost first.

    Classic PySpark keeps the Java exception (``_origin``, or ``java_exception`` of a ``Py4JJavaError`` it
    did not convert), whose causes are walked in the JVM; a ``StreamingQueryException`` from
    ``query.exception()`` has only its converted cause (``_cause``).
    ``None`` when no Java exception is reachable.
    """
    for current in _python_chain(exc):
        # _origin of a converted exception; java_exception of a Py4JJavaError that PySpark did not convert.
        origin = getattr(current, "_origin", None) or getattr(current, "java_exception", None)
        if origin is not None:
            try:
                return _walk_java(origin)
            except Exception:  # the gateway is gone: the caller reads the text instead
                return None
    return None


def _connect_chain(exc: BaseException) -> list[tuple[str, str, bool | None]] | None:
    """(Java class, message, raised by our code) of the JVM exceptions behind a Spark Connect exception.

    Spark Connect sends the outermost JVM exception's message (``_message``; "(<class>) <message>" when
    PySpark has no class of its own for it) and the JVM stack trace (``_stacktrace``: the class, its frames,
    then a "Caused by: <class>: <message>" line per cause). ``None`` when ``exc`` is no Connect exception.
    """
    for current in _python_chain(exc):
        message, stack = getattr(current, "_message", None), getattr(current, "_stacktrace", None)
        if not type(current).__module__.startswith("pyspark.errors.exceptions.connect") or not isinstance(
            message, str
        ):
            continue
        lines = stack.splitlines() if isinstance(stack, str) else []
        frames = [line.strip() for line in lines[1:3]]
        raised_by_us = bool(frames) and frames[0].startswith(f"at {_OUR_PACKAGE}") if lines else None
        named = _CONNECT_MESSAGE.fullmatch(message)
        if named:
            chain = [(named["cls"], named["message"], raised_by_us)]
        elif lines:
            chain = [(lines[0].strip(), message, raised_by_us)]
        else:
            chain = [(type(current).__name__, message, None)]
        causes = _CONNECT_CAUSE.finditer(stack) if isinstance(stack, str) else iter(())
        chain += [(cause["cls"], cause["message"] or "", None) for cause in causes]
        return chain[:_MAX_CHAIN]
    return None


def _walk_java(throwable: Any) -> list[tuple[str, str, bool | None]]:
    chain: list[tuple[str, str, bool | None]] = []
    while throwable is not None and len(chain) < _MAX_CHAIN:
        frames = throwable.getStackTrace()
        raised_by_us = len(frames) > 0 and str(frames[0].getClassName()).startswith(_OUR_PACKAGE)
        chain.append((str(throwable.getClass().getName()), str(throwable.getMessage() or ""), raised_by_us))
        throwable = throwable.getCause()
    return chain


def _text(exc: BaseException) -> str:
    """Join the messages and recorded stack traces of ``exc`` and its Python-side causes."""
    parts: list[str] = []
    for current in _python_chain(exc):
        parts.append(str(current))
        stack = getattr(current, "_stackTrace", None)
        if isinstance(stack, str):
            parts.append(stack)
    return "\n".join(parts)


def _python_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then the causes PySpark converted (``_cause``) or Python chained (``__cause__``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < _MAX_CHAIN:
        seen.add(id(current))
        yield current
        cause = getattr(current, "_cause", None)
        current = cause if isinstance(cause, BaseException) else current.__cause__
