"""Exceptions raised by :mod:`kinesis_spark`, and the translation of the connector's JVM errors into them.

Errors from the connector's JVM side reach Python as PySpark exceptions (``IllegalArgumentException``,
``StreamingQueryException``, ...) whose text can hold a Java stack trace and several layers of wrapping.
:func:`translate` finds the connector's own exception inside and returns the matching
:class:`KinesisSparkError` subclass with the connector's message; :func:`translate_errors` does the same for a
block of code, such as ``query.awaitTermination()``. ``KinesisReader.load()`` and ``KinesisWriter`` translate
by themselves.

The option-error message helpers fill in the forms of the JVM's ``KinesisErrors`` (``invalidOption``,
``missingOption``, ``optionRequiresOther``, ``conflictingOptions``), which the option catalog bundled in the
package carries, so an option refused in Python reads exactly as it would had the JVM refused it.

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

from ._catalog import conflicting_options, invalid_option, missing_option, option_requires_other
from ._error_types import (
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
)
from ._translate import translate, translate_errors

__all__ = [
    "DataSourceNotFoundError",
    "JarNotFoundError",
    "KinesisCheckpointError",
    "KinesisCredentialsError",
    "KinesisDataLossError",
    "KinesisOptionError",
    "KinesisSparkError",
    "KinesisTlsError",
    "PySparkNotFoundError",
    "SessionWithoutJarError",
    "SparkConnectError",
    "StreamNotFoundError",
    "UnsupportedSparkVersionError",
    "conflicting_options",
    "invalid_option",
    "missing_option",
    "option_requires_other",
    "translate",
    "translate_errors",
]
