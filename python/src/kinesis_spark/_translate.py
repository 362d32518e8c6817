"""The translation of the connector's JVM errors into :mod:`kinesis_spark.errors` (see :func:`translate`).

Users import :func:`translate` and :func:`translate_errors` from :mod:`kinesis_spark.errors`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from ._error_types import (
    DataSourceNotFoundError,
    KinesisCheckpointError,
    KinesisCredentialsError,
    KinesisDataLossError,
    KinesisOptionError,
    KinesisSparkError,
    KinesisTlsError,
    StreamNotFoundError,
)
from ._jar import data_source_not_found_message

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
