"""The exceptions of :mod:`kinesis_spark.errors`.

Defined here, apart from the translation of JVM errors, so that the modules the translation needs (finding the
bundled jar) can raise them without importing the translation. Users import them from
:mod:`kinesis_spark.errors`.
"""

from __future__ import annotations


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


# Shown (in tracebacks, reprs and docs) as the public module's, where users import them from.
for _error in [
    value
    for value in list(globals().values())
    if isinstance(value, type) and issubclass(value, KinesisSparkError)
]:
    _error.__module__ = "kinesis_spark.errors"
