"""The connector jar bundled inside the package, and putting it on a session's classpath."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import _versions
from ._errors import JarNotFoundError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["configure", "jar_path"]

_BUILD_HINT = (
    "build it from a checkout of the repository with `build/sbt connector/assembly`, then "
    "`bash dev/build-python.sh` (copies it into the package) and reinstall; "
    "or install a released kinesis-spark wheel, which bundles it"
)


def jar_path() -> str:
    """Return the path of the connector jar bundled in this package.

    The file is ``kinesis_spark/jars/kinesis-spark-assembly_<scala>-<version>.jar`` inside the installed
    package, for example ``kinesis-spark-assembly_2.13-0.1.0.jar``.

    Returns
    -------
    str
        Absolute path of the jar, ready for ``spark.jars`` or ``spark-submit --jars``.

    Raises
    ------
    JarNotFoundError
        If the package holds no jar (typically a source install without ``bash dev/build-python.sh``).

    Examples
    --------
    >>> import kinesis_spark
    >>> kinesis_spark.jar_path()  # doctest: +SKIP
    '/.../site-packages/kinesis_spark/jars/kinesis-spark-assembly_2.13-0.1.0.jar'
    """
    package_dir = _versions.PACKAGE_DIR
    props = _versions.packaged_properties()
    if props is None or "kinesis-spark" not in props or "scala" not in props:
        raise JarNotFoundError(
            f"the kinesis-spark connector jar is not bundled in {package_dir} "
            f"(no versions.properties next to it); {_BUILD_HINT}"
        )
    scala_binary = ".".join(props["scala"].split(".")[:2])
    path = package_dir / "jars" / f"kinesis-spark-assembly_{scala_binary}-{props['kinesis-spark']}.jar"
    if not path.is_file():
        raise JarNotFoundError(f"the kinesis-spark connector jar {path} does not exist; {_BUILD_HINT}")
    return str(path)


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled connector jar to ``spark.jars`` of a session builder.

    Any ``spark.jars`` already set on the builder is kept; the jar is appended once. Call this before the
    first ``SparkSession`` of the process is created: Spark reads ``spark.jars`` only when its JVM starts,
    so ``getOrCreate()`` on an already running session ignores it.

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

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import kinesis_spark
    >>> spark = kinesis_spark.configure(SparkSession.builder.appName("demo")).getOrCreate()  # doctest: +SKIP
    """
    jar = jar_path()
    options = getattr(builder, "_options", None)
    existing = options.get("spark.jars") if isinstance(options, dict) else None
    entries = [entry.strip() for entry in str(existing or "").split(",") if entry.strip()]
    # A jar listed as a path or as a file: URI is the same jar; Spark would load it twice.
    if not any(entry in (jar, Path(jar).as_uri()) for entry in entries):
        entries.append(jar)
    return builder.config("spark.jars", ",".join(dict.fromkeys(entries)))
