"""Every Spark line the package claims runs the jar it picks: each jar's references to Spark and Scala link against
the line's own jars (those of its pyspark), checked by linkage-check (``build/sbt linkageCheck/assembly``; ASM reads
the class files, resolution follows the JVM's rules).

The Scala 2.13 jar is built against ``spark`` of versions.properties and claims the ``spark.also`` lines too; the
Scala 2.12 jar claims ``cross.spark``'s. Each line's jars come from its venv (``dev/python-env.sh``, ``--cross``,
``--line VERSION``), the same ones its smoke run uses. On an older line, Scala's forwarders to Java default methods
that only newer Spark declares do not link, and are harmless: Spark cannot call them there. linkage-check lists them
apart ("unreachable"), and the test prints them; anything else unresolved fails.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest
from harness.spark import REPO_ROOT

from kinesis_spark._versions import read_properties

CHECKER = REPO_ROOT / "linkage-check" / "target" / "scala-2.13" / "linkage-check.jar"
PROPS = read_properties(REPO_ROOT / "versions.properties")


@dataclass(frozen=True)
class Line:
    spark: str
    scala_binary: str
    built_against: str  # the Spark version the jar for this line was compiled against

    @property
    def minor(self) -> str:
        return ".".join(self.spark.split(".")[:2])

    def venv(self) -> Path:
        if self.spark == pyspark.__version__:
            return Path(sys.prefix)
        return REPO_ROOT / (".venv" if self.spark == PROPS["spark"] else f".venv-spark{self.minor}")

    def spark_jars(self) -> Path:
        found = glob.glob(str(self.venv() / "lib" / "python*" / "site-packages" / "pyspark" / "jars"))
        if not found:
            flag = "" if self.spark == PROPS["spark"] else f" --line {self.spark}"
            pytest.fail(f"no pyspark {self.spark} in {self.venv()}: run `bash dev/python-env.sh{flag}`")
        return Path(found[0])

    def connector_jar(self) -> Path:
        pattern = f"connector-jvm/target/scala-{self.scala_binary}/kinesis-spark-assembly_{self.scala_binary}-*.jar"
        built = sorted(glob.glob(str(REPO_ROOT / pattern)), key=os.path.getmtime)
        if not built:
            pytest.fail(f"no {pattern}: build it with build/sbt (see dev/test.sh)")
        return Path(built[-1])


def scala_binary(scala: str) -> str:
    return ".".join(scala.split(".")[:2])


MAIN = Line(PROPS["spark"], scala_binary(PROPS["scala"]), PROPS["spark"])
CROSS = Line(PROPS["cross.spark"], scala_binary(PROPS["cross.scala"]), PROPS["cross.spark"])
ALSO = [Line(v.strip(), MAIN.scala_binary, MAIN.spark) for v in PROPS.get("spark.also", "").split(",") if v.strip()]
LINES = [MAIN, CROSS, *ALSO]


def linkage(jar: Path, line: Line, built_against: Line) -> dict:
    if not CHECKER.is_file():
        pytest.fail(f"{CHECKER} is missing: build it with `build/sbt linkageCheck/assembly`")
    command = ["java", "-jar", str(CHECKER), "--connector", str(jar), "--line", str(line.spark_jars()),
               "--built-against", str(built_against.spark_jars())]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    print(result.stdout)
    report = [line for line in result.stdout.splitlines() if line.startswith("LINKAGE ")]
    assert report, f"linkage-check printed no result (exit {result.returncode}): {result.stderr[-2000:]}"
    outcome = json.loads(report[-1].removeprefix("LINKAGE "))
    assert result.returncode == (1 if outcome["unresolved"] else 0), result.stderr[-2000:]
    return outcome


@pytest.mark.parametrize("line", LINES, ids=lambda line: f"spark-{line.spark}")
def test_the_jar_of_a_line_links_against_its_spark(line: Line):
    built_against = MAIN if line.built_against == MAIN.spark else CROSS
    outcome = linkage(line.connector_jar(), line, built_against)
    assert outcome["references"] > 1000, outcome  # the jar was read
    assert outcome["unresolved"] == [], f"Spark {line.spark}: {outcome['unresolved']}"
    if line.spark == line.built_against:
        assert outcome["unreachable"] == [], outcome
        assert outcome["unloadable"] == [], outcome
    else:
        # Only forwarders of Scala to Java default methods, which have no other kind of member to forward.
        assert all(target.startswith("method ") for target in outcome["unreachable"]), outcome
        # Only the real-time stream and reader, whose Spark interfaces came with 4.1: made only where they load.
        real_time = {f"io/kinesisspark/realtime/{c}" for c in ("KinesisRealTimeStream", "RealTimePartitionReader")}
        assert set(outcome["unloadable"]) <= real_time, outcome["unloadable"]
        assert (line.minor == "4.0") == (set(outcome["unloadable"]) == real_time), outcome["unloadable"]


def test_the_check_refuses_a_jar_on_a_line_it_does_not_link_with():
    # The Scala 2.13 jar on Spark 3.5 (Scala 2.12): Scala's collections and Spark 4's read limits are missing.
    outcome = linkage(MAIN.connector_jar(), CROSS, MAIN)
    assert "class scala/collection/IterableOnce" in outcome["unresolved"], outcome["unresolved"][:20]
    assert "class org/apache/spark/sql/connector/read/streaming/ReadMaxBytes" in outcome["unresolved"]
