"""``KinesisReader``: a Structured Streaming reader of Kinesis data streams."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._errors import DataSourceNotFoundError, JarNotFoundError
from ._jar import jar_path

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["KinesisReader", "OptionValue"]

#: A value accepted by :meth:`KinesisReader.option`; ``None`` unsets the option.
OptionValue = str | bool | int | float | None

#: The short name the connector registers with Spark.
FORMAT = "kinesis"

# What Spark says when no provider is registered under a name: the error condition (Spark 4, classic and
# Connect) and the message text of Spark 4 and of Spark 3.
_NOT_FOUND_MARKERS = ("DATA_SOURCE_NOT_FOUND", "Failed to find the data source", "Failed to find data source")

# Options whose values never appear in repr(); matched as substrings of the lower-cased key.
_SECRET_KEY_PARTS = ("secret", "token", "password")


def _render(value: object) -> str:
    # Spark parses booleans case-insensitively, but "True" in a logged option map looks like a Python leak.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class KinesisReader:
    """Reads Kinesis data streams as a streaming ``DataFrame``.

    Thin, typed front of ``spark.readStream.format("kinesis")``: options are collected here and handed
    to Spark by :meth:`load`, which also turns "data source not found" into an error that says how to fix it.
    Option names are case-insensitive, as in Spark.

    Parameters
    ----------
    spark : SparkSession
        A session created with the connector jar on its classpath; see :func:`kinesis_spark.configure`.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import kinesis_spark
    >>> spark = kinesis_spark.configure(SparkSession.builder).getOrCreate()  # doctest: +SKIP
    >>> df = (
    ...     kinesis_spark.KinesisReader(spark)
    ...     .option("streamName", "orders")
    ...     .option("region", "eu-west-1")
    ...     .option("initialPosition", "earliest")
    ...     .load()
    ... )  # doctest: +SKIP
    """

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        # lower-cased key -> (key as last given, rendered value)
        self._options: dict[str, tuple[str, str]] = {}

    def option(self, key: str, value: OptionValue) -> KinesisReader:
        """Set one option, or unset it with ``None``.

        Parameters
        ----------
        key : str
            Option name, case-insensitive (``"streamName"`` and ``"streamname"`` are the same option).
        value : str, bool, int, float or None
            Booleans become ``"true"``/``"false"``, other values ``str(value)``; ``None`` removes the option.

        Returns
        -------
        KinesisReader
            This reader, for chaining.

        Raises
        ------
        TypeError
            If ``key`` is not a non-empty string.

        Examples
        --------
        >>> reader = KinesisReader(spark).option("streamName", "orders").option("maxRecordsPerFetch", 1000)
        >>> reader.option("awsUseInstanceProfile", False).option("streamName", None)
        KinesisReader(maxRecordsPerFetch='1000', awsUseInstanceProfile='false')
        """
        if not isinstance(key, str) or not key:
            raise TypeError(f"option key must be a non-empty str, got {key!r}")
        if value is None:
            self._options.pop(key.lower(), None)
        else:
            self._options[key.lower()] = (key, _render(value))
        return self

    def options(self, **options: OptionValue) -> KinesisReader:
        """Set several options at once; see :meth:`option`.

        Parameters
        ----------
        **options : str, bool, int, float or None
            Option names and values.

        Returns
        -------
        KinesisReader
            This reader, for chaining.

        Examples
        --------
        >>> KinesisReader(spark).options(streamName="orders", region="eu-west-1", awsSecretKey="abc")
        KinesisReader(streamName='orders', region='eu-west-1', awsSecretKey=***)
        """
        for key, value in options.items():
            self.option(key, value)
        return self

    def load(self) -> DataFrame:
        """Create the streaming ``DataFrame``.

        Returns
        -------
        DataFrame
            A streaming ``DataFrame`` with the connector's schema.

        Raises
        ------
        DataSourceNotFoundError
            If the session was started without the connector jar on its classpath.

        Examples
        --------
        >>> df = KinesisReader(spark).option("streamName", "orders").load()  # doctest: +SKIP
        >>> query = df.writeStream.format("console").start()  # doctest: +SKIP
        """
        reader = self._spark.readStream.format(FORMAT).options(**dict(self._options.values()))
        try:
            df = reader.load()
            # Classic PySpark resolves the provider in load(); Spark Connect only when the plan is analysed.
            # Asking for the schema makes both fail here, with the error translated below.
            _ = df.schema
        except Exception as exc:
            if any(marker in str(exc) for marker in _NOT_FOUND_MARKERS):
                raise DataSourceNotFoundError(_not_found_message()) from exc
            raise
        return df

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{key}=***" if any(part in lower for part in _SECRET_KEY_PARTS) else f"{key}={value!r}"
            for lower, (key, value) in self._options.items()
        )
        return f"KinesisReader({shown})"


def _not_found_message() -> str:
    try:
        jar = jar_path()
    except JarNotFoundError as missing:
        jar = f"<kinesis_spark.jar_path(), which failed: {missing}>"
    return (
        f'Spark cannot find the data source "{FORMAT}": the kinesis-spark jar is not on this SparkSession\'s '
        "classpath (a session reads spark.jars only when it starts). Fix: create the session with "
        "`kinesis_spark.configure(SparkSession.builder).getOrCreate()` before any SparkSession exists in "
        f"this process, or start it with spark.jars={jar} "
        "(adding the jar to a running session is not enough)."
    )
