"""The connector jar bundled inside the package, and putting it on a session's classpath."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _option_keys as keys
from . import _spark_lines, _versions
from ._error_types import JarNotFoundError, PySparkNotFoundError, SessionWithoutJarError, SparkConnectError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["configure", "data_source_not_found_message", "jar_path"]

#: A class of the connector: loadable exactly when the jar is on the driver's classpath.
_PROVIDER_CLASS = keys.PROVIDER_CLASS
#: Set by a JVM that started Python (spark-submit, the pyspark shell) for PySpark to connect back to it.
_GATEWAY_PORT = "PYSPARK_GATEWAY_PORT"

_BUILD_HINT = (
    "build it from a checkout of the repository with `build/sbt connector/assembly` (Spark 4) or "
    '`build/sbt "++2.12 connector/assembly"` (Spark 3.5), then `bash dev/build-python.sh` (copies the jars '
    "into the package) and reinstall; or install a released kinesis-spark wheel, which bundles them"
)


def jar_path(spark_version: str | None = None) -> str:
    """Return the path of the bundled connector jar that runs on the installed pyspark's Spark version.

    The package bundles one jar per supported Spark line, built from the same sources:
    ``kinesis_spark/jars/kinesis-spark-assembly_2.13-<version>.jar`` for Spark 4.x and
    ``kinesis-spark-assembly_2.12-<version>.jar`` for Spark 3.5. The one whose Spark ``MAJOR.MINOR``
    is the installed pyspark's is returned.

    Parameters
    ----------
    spark_version : str, optional
        Pick the jar for this Spark version instead of the installed pyspark's, for example to hand the right
        jar to ``spark-submit --jars`` of a cluster with another Spark.

    Returns
    -------
    str
        Absolute path of the jar, ready for ``spark.jars`` or ``spark-submit --jars``.

    Raises
    ------
    UnsupportedSparkVersionError
        If no bundled jar is built for that Spark version; the message names it and the supported ones.
    JarNotFoundError
        If the package holds no such jar (typically a source install without ``bash dev/build-python.sh``).

    Examples
    --------
    >>> import kinesis_spark
    >>> kinesis_spark.jar_path()  # doctest: +SKIP
    '/.../site-packages/kinesis_spark/jars/kinesis-spark-assembly_2.13-0.1.0.jar'
    >>> kinesis_spark.jar_path("3.5.4")  # doctest: +SKIP
    '/.../site-packages/kinesis_spark/jars/kinesis-spark-assembly_2.12-0.1.0.jar'
    """
    package_dir = _versions.PACKAGE_DIR
    props = _versions.packaged_properties()
    lines = _spark_lines.spark_lines(props or {})
    if props is None or "kinesis-spark" not in props or not lines:
        raise JarNotFoundError(
            f"the kinesis-spark connector jar is not bundled in {package_dir} "
            f"(no versions.properties next to it); {_BUILD_HINT}"
        )
    if spark_version is None:
        line = _spark_lines.line_for(_installed_pyspark_version(), lines)
    else:
        line = _spark_lines.line_for(spark_version, lines, whose="as asked")
    path = package_dir / "jars" / line.jar_name(props["kinesis-spark"])
    if not path.is_file():
        raise JarNotFoundError(
            f"the kinesis-spark connector jar {path} (for Spark {line.minor}) does not exist; {_BUILD_HINT}"
        )
    return str(path)


def _installed_pyspark_version() -> str:
    try:
        import pyspark
    except ImportError as missing:
        raise PySparkNotFoundError(_no_pyspark_message()) from missing
    return str(pyspark.__version__)


def _no_pyspark_message() -> str:
    import sys

    lines = _spark_lines.spark_lines(_versions.packaged_properties() or {})
    versions = ", ".join(f"'pyspark=={m}.*'" for line in lines for m in line.minors) or "pyspark"
    return (
        f"pyspark is not installed in this Python environment ({sys.executable}), so kinesis-spark cannot "
        "tell which of its connector jars Spark needs. The package does not install Spark itself, so that it "
        f"never replaces yours: install the pyspark of your Spark (one of {versions}), or, in a fresh "
        'environment, `pip install "kinesis-spark[pyspark]"`.'
    )


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled connector jar to ``spark.jars`` of a session builder.

    Any ``spark.jars`` already set on the builder is kept; the jar is appended once. Call this before the
    first ``SparkSession`` of the process is created: Spark reads ``spark.jars`` only when its JVM starts,
    so ``getOrCreate()`` on an already running session ignores it. If Spark's JVM is already running
    without the jar, this raises :class:`SessionWithoutJarError` (saying how to fix it) rather than let
    ``getOrCreate()`` return a session that cannot read Kinesis; if it runs with the jar (say, from
    ``spark-submit --packages``), the builder is returned unchanged. Under ``spark-submit`` and the
    ``pyspark`` shell the JVM starts before Python does, so this is where the check matters.

    Parameters
    ----------
    builder : SparkSession.Builder
        Usually ``SparkSession.builder``, possibly with other options already set.

    Returns
    -------
    SparkSession.Builder
        The same builder, for chaining.

    Raises
    ------
    JarNotFoundError
        If the package holds no jar; see :func:`jar_path`.
    SessionWithoutJarError
        If Spark's JVM already runs in this process, without the connector on its classpath.
    SparkConnectError
        If ``builder`` makes a Spark Connect session (``remote(...)``, ``SPARK_REMOTE``, or a
        ``pyspark-client`` environment): the jar goes on the Connect server instead, and the message says how.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import kinesis_spark
    >>> spark = kinesis_spark.configure(SparkSession.builder.appName("demo")).getOrCreate()  # doctest: +SKIP
    """
    if _builds_connect_session(builder):
        raise SparkConnectError(_connect_message())
    jvm_loads_connector = _running_jvm_loads_connector()
    if jvm_loads_connector is True:
        return builder
    jar = jar_path()
    if jvm_loads_connector is False:
        raise SessionWithoutJarError(_session_without_jar_message(jar))
    options = getattr(builder, "_options", None)
    existing = options.get("spark.jars") if isinstance(options, dict) else None
    entries = [entry.strip() for entry in str(existing or "").split(",") if entry.strip()]
    # A jar listed as a path or as a file: URI is the same jar; Spark would load it twice.
    if not any(entry in (jar, Path(jar).as_uri()) for entry in entries):
        entries.append(jar)
    return builder.config("spark.jars", ",".join(dict.fromkeys(entries)))


def _builds_connect_session(builder: Any) -> bool:
    """Tell whether ``builder`` makes a Spark Connect session rather than start a Spark JVM here."""
    options = getattr(builder, "_options", None)
    options = options if isinstance(options, dict) else {}
    if "spark.remote" in options or str(options.get("spark.api.mode", "")).lower() == "connect":
        return True
    if os.environ.get("SPARK_REMOTE") or os.environ.get("SPARK_CONNECT_MODE_ENABLED") == "1":
        return True
    try:
        from pyspark import SparkContext  # noqa: F401
    except ImportError:  # pyspark-client: Spark Connect only
        return True
    return False


def _connect_message() -> str:
    props = _versions.packaged_properties() or {}
    lines = _spark_lines.spark_lines(props)
    version = props.get("kinesis-spark", "<version>")
    artifact = "io.github.kinesis-spark:kinesis-spark"
    coordinates = ", ".join(
        f"{artifact}_{line.scala_binary}:{version} (Spark {', '.join(line.minors)})" for line in lines
    )
    return (
        "kinesis_spark.configure() puts the connector jar on the classpath of a Spark JVM that this Python "
        "process starts; this builder makes a Spark Connect session, whose queries run in the Connect "
        "server. "
        "Put the jar on the server instead: start it with --packages and the artifact of its Spark "
        f"({coordinates or 'see the user guide'}), or with --jars and the jar of kinesis_spark.jar_path(<its "
        "Spark version>); on Databricks, install the connector as a cluster library. Then create the session "
        "without configure(): SparkSession.builder.remote(...).getOrCreate()."
    )


def _running_jvm_loads_connector() -> bool | None:
    """Tell whether the JVM already running in this process (if any: else None) has the connector."""
    from pyspark import SparkContext

    if SparkContext._jvm is None and _GATEWAY_PORT in os.environ:
        # spark-submit or the pyspark shell started the JVM before Python did: connect to it (what the first
        # SparkContext would do) and look. Without this variable, connecting would launch a JVM.
        SparkContext._ensure_initialized()
    jvm: Any = SparkContext._jvm
    if jvm is None:
        return None
    # The loader Spark itself uses to find data sources (Utils.getContextOrSparkClassLoader).
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(_PROVIDER_CLASS, False, loader)
    except Exception:  # Py4JJavaError around ClassNotFoundException
        return False
    return True


def _session_without_jar_message(jar: str) -> str:
    return (
        "Spark is already running in this process without the kinesis-spark jar, and it reads spark.jars "
        "only when it starts, so SparkSession.builder.getOrCreate() would return a session that cannot read "
        "Kinesis. Fix: restart Python and run `spark = kinesis_spark.configure(SparkSession.builder)"
        ".getOrCreate()` before anything else starts Spark; or, where something else starts it (a notebook, "
        f"the pyspark shell), start Python with PYSPARK_SUBMIT_ARGS='--jars {jar} pyspark-shell'; "
        f"with spark-submit or pyspark, pass --jars {jar} (or the connector's --packages coordinates)."
    )


def data_source_not_found_message() -> str:
    """Return the message of :class:`DataSourceNotFoundError`: the jar is missing, and how to add it."""
    try:
        jar = jar_path()
    except JarNotFoundError as missing:
        jar = f"<kinesis_spark.jar_path(), which failed: {missing}>"
    return (
        'Spark cannot find the data source "kinesis": the kinesis-spark jar is not on this SparkSession\'s '
        "classpath (a session reads spark.jars only when it starts). Fix: create the session with "
        "`kinesis_spark.configure(SparkSession.builder).getOrCreate()` before any SparkSession exists in "
        f"this process, or start it with spark.jars={jar} "
        "(adding the jar to a running session is not enough)."
    )
