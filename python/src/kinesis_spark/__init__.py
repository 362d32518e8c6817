"""PySpark support for kinesis-spark, the Spark Structured Streaming connector for Amazon Kinesis.

The package bundles the connector jar. Put it on the classpath before the first session starts with
:func:`configure`, read streams with :class:`KinesisReader`, write them with :class:`KinesisWriter`, manage
enhanced fan-out consumers with :class:`KinesisConsumerManager`, and wrap
code that waits on queries in :func:`kinesis_spark.errors.translate_errors` to get the errors of
:mod:`kinesis_spark.errors` instead of PySpark's.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import kinesis_spark
>>> from kinesis_spark import InitialPosition, KinesisReader
>>> spark = kinesis_spark.configure(SparkSession.builder).getOrCreate()  # doctest: +SKIP
>>> reader = KinesisReader(spark).stream_names("orders").region("eu-west-1")
>>> reader = reader.initial_position(InitialPosition.trim_horizon())
>>> df = reader.load()  # doctest: +SKIP
"""

from __future__ import annotations

from . import errors
from ._consumer_mode import ConsumerMode
from ._consumers import KinesisConsumer, KinesisConsumerManager
from ._jar import configure, jar_path
from ._options_builder import OptionValue
from ._position import InitialPosition
from ._reader import KinesisReader
from ._switch_start import KclStart, SwitchStart, awslabs_start, kcl_start, switch_start
from ._versions import package_version
from ._writer import KinesisWriter
from .errors import (
    DataSourceNotFoundError,
    JarNotFoundError,
    KinesisCheckpointError,
    KinesisCredentialsError,
    KinesisDataLossError,
    KinesisOptionError,
    KinesisSparkError,
    KinesisTlsError,
    PySparkNotFoundError,
    SessionWithoutJarError,
    SparkConnectError,
    StreamNotFoundError,
    UnsupportedSparkVersionError,
    translate_errors,
)

__version__: str = package_version()

__all__ = [
    "ConsumerMode",
    "DataSourceNotFoundError",
    "InitialPosition",
    "JarNotFoundError",
    "KclStart",
    "KinesisCheckpointError",
    "KinesisConsumer",
    "KinesisConsumerManager",
    "KinesisCredentialsError",
    "KinesisDataLossError",
    "KinesisOptionError",
    "KinesisReader",
    "KinesisSparkError",
    "KinesisTlsError",
    "KinesisWriter",
    "OptionValue",
    "PySparkNotFoundError",
    "SessionWithoutJarError",
    "SparkConnectError",
    "StreamNotFoundError",
    "SwitchStart",
    "UnsupportedSparkVersionError",
    "__version__",
    "awslabs_start",
    "configure",
    "errors",
    "jar_path",
    "kcl_start",
    "switch_start",
    "translate_errors",
]
