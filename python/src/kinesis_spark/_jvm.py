"""The Spark JVM of this Python process, for the parts of the API that call the connector there directly.

:class:`KinesisConsumerManager` and the real-time writes of :class:`KinesisWriter` do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._error_types import DataSourceNotFoundError, SparkConnectError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["jvm_class", "jvm_of"]


def jvm_of(spark: SparkSession, what: str, instead: str) -> Any:
    """Return the Py4J view of ``spark``'s JVM.

    Parameters
    ----------
    spark : SparkSession
        A classic session.
    what : str
        What needs the JVM, for the error on Spark Connect (e.g. ``"KinesisConsumerManager"``).
    instead : str
        What to do instead on Spark Connect, said in that error.

    Raises
    ------
    SparkConnectError
        If ``spark`` is a Spark Connect session (it has no JVM in this process).

    Examples
    --------
    >>> jvm = jvm_of(spark, "KinesisConsumerManager", "Use a classic session.")  # doctest: +SKIP
    """
    try:
        jvm = spark.sparkContext._jvm
    except Exception:  # Spark Connect sessions have no SparkContext
        jvm = None
    if jvm is None:
        raise SparkConnectError(
            f"{what} calls the connector in the Spark JVM of this Python process, and a Spark Connect "
            f"session has none here. {instead}"
        )
    return jvm


def jvm_class(jvm: Any, name: str) -> Any:
    """Return the class ``name`` of ``jvm`` (see :func:`jvm_of`).

    Raises
    ------
    DataSourceNotFoundError
        If the class is not on the JVM's classpath: the connector jar is missing.

    Examples
    --------
    >>> jvm_class(jvm, "io.kinesisspark.efo.KinesisConsumerManager")  # doctest: +SKIP
    """
    found = jvm
    for part in name.split("."):
        found = getattr(found, part)
    # Py4J answers a class it cannot load with a package object of that name.
    if type(found).__name__ == "JavaPackage":
        raise DataSourceNotFoundError(
            f"{name} is not on this SparkSession's classpath: the kinesis-spark jar is missing; "
            "create the session with kinesis_spark.configure(SparkSession.builder).getOrCreate()"
        )
    return found
