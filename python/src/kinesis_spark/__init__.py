"""PySpark support for kinesis-spark, the Spark Structured Streaming connector for Amazon Kinesis.

The package bundles the connector jar. Put it on the classpath before the first session starts,
then read streams with :class:`KinesisReader`.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import kinesis_spark
>>> spark = kinesis_spark.configure(SparkSession.builder).getOrCreate()  # doctest: +SKIP
>>> reader = kinesis_spark.KinesisReader(spark).options(streamName="orders", region="eu-west-1")
>>> df = reader.load()  # doctest: +SKIP
"""

from __future__ import annotations

from ._errors import DataSourceNotFoundError, JarNotFoundError, KinesisSparkError
from ._jar import configure, jar_path
from ._reader import KinesisReader, OptionValue
from ._versions import package_version

__version__: str = package_version()

__all__ = [
    "DataSourceNotFoundError",
    "JarNotFoundError",
    "KinesisReader",
    "KinesisSparkError",
    "OptionValue",
    "__version__",
    "configure",
    "jar_path",
]
