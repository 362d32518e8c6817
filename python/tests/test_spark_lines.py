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


def test_spark_lines_reads_the_default_then_the_cross_build() -> None:
    props = {"kinesis-spark": "0.1.0", "spark": "4.2.0", "scala": "2.13.18"}
    assert spark_lines(props) == [SparkLine("4.2.0", "2.13.18")]
    props |= {"cross.spark": "3.5.9", "cross.scala": "2.12.21"}
    assert spark_lines(props) == LINES
    assert spark_lines({"cross.spark": "3.5.9"}) == []  # half a line names no jar


def test_line_for_an_unparseable_version_names_it() -> None:
    with pytest.raises(UnsupportedSparkVersionError) as info:
        line_for("master-SNAPSHOT", LINES, whose="SPARK_VERSION")
    message = str(info.value)
    assert message.startswith("kinesis-spark has no connector jar for Spark master-SNAPSHOT (SPARK_VERSION)")


def test_line_for_without_lines() -> None:
    with pytest.raises(UnsupportedSparkVersionError, match=r"it supports none\.$"):
        line_for("4.2.0", [])
