"""The Spark lines the bundled jars are built for, and which of them fits a given Spark version.

One source tree is built twice (see build.sbt): for the newest Spark 4.x on Scala 2.13, and for Spark 3.5 on
Scala 2.12. ``versions.properties`` names both: ``spark``/``scala`` for the first, ``cross.spark``/
``cross.scala`` for the second. A jar runs on the Spark minor version it was compiled against (any patch
release of it), and on the other minor versions ``spark.also`` (``cross.spark.also``) lists, which it is
binary compatible with (tests-integration/test_spark_linkage.py checks that, and dev/test.sh runs the smoke
tests on each); which jar a Python process needs therefore follows from its pyspark version alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._error_types import UnsupportedSparkVersionError

__all__ = ["SparkLine", "line_for", "spark_lines"]

#: The property-key prefixes of the builds, the default one first.
_PREFIXES = ("", "cross.")
_MINOR = re.compile(r"(\d+)\.(\d+)(?:\D|$)")


@dataclass(frozen=True)
class SparkLine:
    """One build of the connector: the Spark and Scala versions it is compiled against.

    Examples
    --------
    >>> line = SparkLine(spark="3.5.9", scala="2.12.21")
    >>> line.minor, line.scala_binary
    ('3.5', '2.12')
    >>> line.jar_name("0.1.0")
    'kinesis-spark-assembly_2.12-0.1.0.jar'
    >>> line.accepts("3.5.1"), line.accepts("4.0.0")
    (True, False)
    >>> SparkLine(spark="4.2.0", scala="2.13.18", also=("4.0.5", "4.3.0")).minors
    ['4.0', '4.2', '4.3']
    """

    spark: str
    scala: str
    #: Spark versions of other minor lines the jar also runs on, as tested (one patch release each).
    also: tuple[str, ...] = ()

    @property
    def minor(self) -> str:
        """The Spark ``MAJOR.MINOR`` this jar runs on, for example ``"4.2"``."""
        return spark_minor(self.spark) or self.spark

    @property
    def scala_binary(self) -> str:
        """The Scala binary version, the suffix of the jar's and the Maven artifact's name: ``"2.13"``."""
        return ".".join(self.scala.split(".")[:2])

    @property
    def minors(self) -> list[str]:
        """Every Spark ``MAJOR.MINOR`` the jar runs on, oldest first."""
        minors = {self.minor, *(spark_minor(v) or v for v in self.also)}
        return sorted(minors, key=lambda m: tuple(int(p) if p.isdigit() else 0 for p in m.split(".")))

    def jar_name(self, version: str) -> str:
        """Return the jar's file name for kinesis-spark ``version``, as sbt names it."""
        return f"kinesis-spark-assembly_{self.scala_binary}-{version}.jar"

    def accepts(self, spark_version: str) -> bool:
        """Tell whether this jar runs on Spark ``spark_version`` (one of its ``MAJOR.MINOR`` lines)."""
        return spark_minor(spark_version) in self.minors


def spark_minor(spark_version: str) -> str | None:
    """Return ``MAJOR.MINOR`` of a Spark or pyspark version, or ``None`` if it has none.

    Examples
    --------
    >>> spark_minor("4.2.0"), spark_minor("3.5.1.dev0"), spark_minor("4.10"), spark_minor("four")
    ('4.2', '3.5', '4.10', None)
    """
    match = _MINOR.match(spark_version.strip())
    return f"{match.group(1)}.{match.group(2)}" if match else None


def spark_lines(props: dict[str, str]) -> list[SparkLine]:
    """Return the builds that ``versions.properties`` names, the default (newest Spark) first.

    Examples
    --------
    >>> spark_lines({"spark": "4.2.0", "scala": "2.13.18", "cross.spark": "3.5.9", "cross.scala": "2.12.21"})
    [SparkLine(spark='4.2.0', scala='2.13.18', also=()), SparkLine(spark='3.5.9', scala='2.12.21', also=())]
    >>> spark_lines({"spark": "4.2.0", "scala": "2.13.18", "spark.also": "4.0.5, 4.1.4"})[0].minors
    ['4.0', '4.1', '4.2']
    """
    lines = []
    for prefix in _PREFIXES:
        spark, scala = props.get(f"{prefix}spark"), props.get(f"{prefix}scala")
        also = tuple(v.strip() for v in props.get(f"{prefix}spark.also", "").split(",") if v.strip())
        if spark and scala:
            lines.append(SparkLine(spark=spark, scala=scala, also=also))
    return lines


def line_for(spark_version: str, lines: list[SparkLine], whose: str = "the installed pyspark") -> SparkLine:
    """Return the build that runs on Spark ``spark_version``.

    Parameters
    ----------
    spark_version : str
        A Spark or pyspark version, such as ``"3.5.4"``.
    lines : list[SparkLine]
        The builds to choose from (see :func:`spark_lines`).
    whose : str
        Where ``spark_version`` comes from, for the error message.

    Returns
    -------
    SparkLine
        The build that runs on that Spark ``MAJOR.MINOR``.

    Raises
    ------
    UnsupportedSparkVersionError
        If no build fits; the message names ``spark_version`` and the supported versions.

    Examples
    --------
    >>> lines = [SparkLine("4.2.0", "2.13.18"), SparkLine("3.5.9", "2.12.21")]
    >>> line_for("3.5.2", lines).scala_binary
    '2.12'
    >>> try:
    ...     line_for("4.1.0", lines)
    ... except UnsupportedSparkVersionError as unsupported:
    ...     print(unsupported.spark_version, unsupported.supported)
    4.1.0 ['4.2', '3.5']
    """
    for line in lines:
        if line.accepts(spark_version):
            return line
    described = [(", ".join(f"{m}.x" for m in line.minors), line.scala_binary) for line in lines]
    supported = " and ".join(f"Spark {minors} (Scala {scala})" for minors, scala in described) or "none"
    minors = " or ".join(f"{m}.x" for line in lines for m in line.minors)
    advice = (
        f" Install a supported pyspark, for example `pip install 'pyspark=={lines[0].minor}.*'`, "
        f"or use Spark {minors}."
        if lines
        else ""
    )
    raise UnsupportedSparkVersionError(
        f"kinesis-spark has no connector jar for Spark {spark_version} ({whose}): "
        f"it supports {supported}.{advice}",
        spark_version=spark_version,
        supported=[m for line in lines for m in line.minors],
    )
