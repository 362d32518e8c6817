"""Exceptions raised by :mod:`kinesis_spark`."""

from __future__ import annotations

__all__ = ["DataSourceNotFoundError", "JarNotFoundError", "KinesisSparkError"]


class KinesisSparkError(Exception):
    """Base class of every error raised by :mod:`kinesis_spark`.

    Examples
    --------
    >>> import kinesis_spark
    >>> issubclass(kinesis_spark.JarNotFoundError, kinesis_spark.KinesisSparkError)
    True
    """


class JarNotFoundError(KinesisSparkError, FileNotFoundError):
    """The connector jar is not inside the installed package.

    Also a :class:`FileNotFoundError`, so code that handles missing files catches it too.
    Usually the package was installed from a source tree without building the jar first;
    ``bash dev/build-python.sh`` builds nothing but copies the assembled jar into the package.
    """


class DataSourceNotFoundError(KinesisSparkError):
    """Spark cannot find the ``kinesis`` data source: the session was started without the connector jar.

    The jar must be on ``spark.jars`` before the JVM starts; adding it to a running session is not enough.
    Create the session with :func:`kinesis_spark.configure`.
    """
