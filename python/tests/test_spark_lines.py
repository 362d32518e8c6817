from __future__ import annotations

import pytest

from kinesis_spark import UnsupportedSparkVersionError
from kinesis_spark._spark_lines import SparkLine, line_for, spark_lines, spark_minor

LINES = [SparkLine("4.2.0", "2.13.18"), SparkLine("3.5.9", "2.12.21")]


@pytest.mark.parametrize(
    ("version", "minor"),
    [("4.2.0", "4.2"), ("3.5.1", "3.5"), ("4.10.2", "4.10"), ("3.5.2.dev0", "3.5"), ("3.5.1+vendor", "3.5"),
     (" 4.2.0\n", "4.2"), ("4.2", "4.2"), ("4", None), ("four", None), ("", None), ("42.0x", "42.0")],
)  # fmt: skip
def test_spark_minor(version: str, minor: str | None) -> None:
    assert spark_minor(version) == minor


def test_a_line_accepts_every_patch_of_its_minor_only() -> None:
    line = SparkLine("3.5.9", "2.12.21")
    assert line.accepts("3.5.0") and line.accepts("3.5.12")
    assert not line.accepts("3.50.0") and not line.accepts("4.5.9") and not line.accepts("3.4.9")


def test_a_line_also_accepts_the_minors_it_is_tested_on() -> None:
    line = SparkLine("4.2.0", "2.13.18", also=("4.0.5", "4.3.0"))
    versions = ("4.0.0", "4.0.9", "4.1.4", "4.2.1", "4.3.0", "4.4.0", "3.5.9")
    assert [v for v in versions if line.accepts(v)] == ["4.0.0", "4.0.9", "4.2.1", "4.3.0"]
    lines = [line, SparkLine("3.5.9", "2.12.21")]
    assert line_for("4.3.1", lines) is line
    with pytest.raises(UnsupportedSparkVersionError) as info:
        line_for("4.1.4", lines)
    supported = "it supports Spark 4.0.x, 4.2.x, 4.3.x (Scala 2.13) and Spark 3.5.x (Scala 2.12)"
    assert supported in str(info.value)
    assert info.value.supported == ["4.0", "4.2", "4.3", "3.5"]


def test_spark_lines_reads_the_default_then_the_cross_build() -> None:
    props = {"kinesis-spark": "0.1.0", "spark": "4.2.0", "scala": "2.13.18"}
    assert spark_lines(props) == [SparkLine("4.2.0", "2.13.18")]
    props |= {"cross.spark": "3.5.9", "cross.scala": "2.12.21"}
    assert spark_lines(props) == LINES
    assert spark_lines({"cross.spark": "3.5.9"}) == []  # half a line names no jar
    props |= {"spark.also": "4.0.5, 4.1.4,"}
    assert spark_lines(props)[0] == SparkLine("4.2.0", "2.13.18", also=("4.0.5", "4.1.4"))


def test_line_for_an_unparseable_version_names_it() -> None:
    with pytest.raises(UnsupportedSparkVersionError) as info:
        line_for("master-SNAPSHOT", LINES, whose="SPARK_VERSION")
    message = str(info.value)
    assert message.startswith("kinesis-spark has no connector jar for Spark master-SNAPSHOT (SPARK_VERSION)")


def test_line_for_without_lines() -> None:
    with pytest.raises(UnsupportedSparkVersionError, match=r"it supports none\.$"):
        line_for("4.2.0", [])
