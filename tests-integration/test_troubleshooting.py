"""The messages docs/troubleshooting.md quotes are the ones users see.

- Every message the page quotes (its ``text`` blocks) is checked against the code that raises it or the test that
  produces it: each fixed part (between ``<placeholders>``) must occur in the connector's sources, the Python
  package, or a test. So a message changed in the code fails here until the page follows.
- Spark's own messages about finding a data source are produced here, in one Spark process: the jar missing, two
  providers of one short name, and the awslabs connector's provider winning ``aws-kinesis`` because its class is
  under ``org.apache.spark``. The awslabs jar itself is published on S3 only, out of this project's reach, so a
  stand-in class of the same name, registered the same way, takes its place.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pyspark
import pytest
from harness.spark import connector_jar

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "troubleshooting.md"
TEXT_BLOCK = re.compile(r"^```text\n(.*?)^```", re.DOTALL | re.MULTILINE)
# A placeholder, with the brackets around it when the code adds them apart: "(<credentials>)".
PLACEHOLDER = re.compile(r"\(?<[^<>\n]+>\)?")
# A Scala string literal continued on the next line ("..." +\n  s"...") and interpolations ($x, ${...}).
SCALA_CONCAT = re.compile(r'"\s*\+\s*s?"')
SCALA_INTERPOLATION = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
PYTHON_CONCAT = re.compile(r"[\"']\s*\n\s*f?[\"']")
PYTHON_INTERPOLATION = re.compile(r"\{[^{}\n]*\}")
SENTINEL = "\x00"
# Fragments shorter than this (punctuation between two placeholders) say nothing.
MIN_FRAGMENT = 6

STANDIN_AWSLABS = "org.apache.spark.sql.connector.kinesis.KinesisV2TableProvider"  # the awslabs provider's class
STANDIN_OTHER = "example.other.KinesisProvider"  # any other provider registered as "kinesis"


def corpus() -> str:
    """The text messages can come from: Scala sources, the Python package, and the tests, with string literals
    joined across lines and interpolations replaced by a placeholder mark."""
    parts = []
    for path in (ROOT / "connector-jvm" / "src").rglob("*.scala"):
        text = SCALA_CONCAT.sub("", path.read_text())
        parts.append(SCALA_INTERPOLATION.sub(SENTINEL, text))
    for base in (ROOT / "python" / "src", ROOT / "python" / "tests", ROOT / "tests-integration"):
        for path in base.rglob("*.py"):
            if path.resolve() == Path(__file__).resolve():
                continue  # this file's assertions count only where they are made against real output (below)
            text = PYTHON_CONCAT.sub("", path.read_text()).replace("\\'", "'").replace('\\"', '"')
            parts.append(PYTHON_INTERPOLATION.sub(SENTINEL, text))
    parts.append(PRODUCED_HERE)
    return "\n".join(parts)


# What the Spark test below asserts, verbatim: these fragments are checked against Spark's real output there.
PRODUCED_HERE = "\n".join([
    "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kinesis",
    "Multiple sources found for kinesis",
    "please specify the fully qualified class name",
    "Multiple sources found for aws-kinesis",
    "defaulting to the internal datasource",
    STANDIN_AWSLABS,
])


def quoted_messages() -> list[str]:
    return [m.group(1).strip() for m in TEXT_BLOCK.finditer(PAGE.read_text())]


def test_every_quoted_message_is_in_the_code_or_a_test():
    messages = quoted_messages()
    assert len(messages) >= 6, f"{PAGE.name} quotes {len(messages)} messages"
    text = corpus()
    missing = []
    for message in messages:
        for line in message.splitlines():
            for fragment in PLACEHOLDER.sub(SENTINEL, line).split(SENTINEL):
                fragment = fragment.strip(" .…,;:\"()")
                if len(fragment) >= MIN_FRAGMENT and fragment not in text:
                    missing.append(fragment)
    assert not missing, f"quoted in {PAGE.name} but raised by no code and asserted by no test: {missing}"


def standin_jar(tmp_path: Path, class_name: str, short_name: str) -> Path:
    """A jar with one DataSourceRegister named ``class_name`` that answers to ``short_name``."""
    package, _, simple = class_name.rpartition(".")
    src = tmp_path / "src" / simple
    source = src / f"{simple}.java"
    source.parent.mkdir(parents=True)
    source.write_text(textwrap.dedent(f"""
        package {package};
        public class {simple} implements org.apache.spark.sql.sources.DataSourceRegister {{
          public String shortName() {{ return "{short_name}"; }}
        }}
    """))
    jars = Path(pyspark.__file__).parent / "jars"
    classes = tmp_path / "classes" / simple
    subprocess.run(["javac", "-cp", str(next(jars.glob("spark-sql_*.jar"))), "-d", str(classes), str(source)],
                   check=True, capture_output=True, text=True)
    jar = tmp_path / f"{simple}.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for path in classes.rglob("*.class"):
            z.write(path, str(path.relative_to(classes)))
        z.writestr("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister", class_name + "\n")
    return jar


LOOKUPS = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession

    awslabs, other, ours = sys.argv[1:4]
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.jars", awslabs).getOrCreate())

    def load(name):
        try:
            spark.readStream.format(name).load()
            return "loaded"
        except Exception as error:
            return " ".join(str(error).split())

    print("MISSING", load("kinesis"), flush=True)
    from kinesis_spark import KinesisReader
    try:
        KinesisReader(spark).stream_names("clicks").region("us-east-1").load()
        print("PYTHON-MISSING loaded", flush=True)
    except Exception as error:
        print("PYTHON-MISSING", type(error).__name__, " ".join(str(error).split()), flush=True)
    # Spark's ADD JAR: the session's class loader (this thread's) now sees our jar and another "kinesis" provider.
    spark.sql(f"ADD JAR {ours}")
    spark.sql(f"ADD JAR {other}")
    print("KINESIS", load("kinesis"), flush=True)
    print("AWS-KINESIS", load("aws-kinesis"), flush=True)
    print("BY-CLASS", load("io.kinesisspark.KinesisSourceProvider"), flush=True)
    """
)


def test_spark_finding_the_source(tmp_path):
    awslabs = standin_jar(tmp_path, STANDIN_AWSLABS, "aws-kinesis")
    other = standin_jar(tmp_path, STANDIN_OTHER, "kinesis")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    result = subprocess.run(
        [sys.executable, "-c", LOOKUPS, str(awslabs), str(other), str(connector_jar())],
        capture_output=True, text=True, timeout=280, cwd=tmp_path, env=env, check=False,
    )
    said = dict(line.split(" ", 1) for line in result.stdout.splitlines() if line.split(" ", 1)[0].isupper())
    context = f"stdout: {result.stdout[-3000:]}\nstderr: {result.stderr[-3000:]}"
    assert result.returncode == 0 and len(said) == 5, context

    # Without our jar: Spark knows no "kinesis".
    assert "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kinesis" in said["MISSING"], context
    # The Python package says the same, and how to fix it.
    assert said["PYTHON-MISSING"].startswith("DataSourceNotFoundError "), context
    assert 'Spark cannot find the data source "kinesis"' in said["PYTHON-MISSING"], context
    # Two providers of "kinesis", neither under org.apache.spark: Spark refuses to pick, naming both.
    assert "Multiple sources found for kinesis" in said["KINESIS"], context
    assert "please specify the fully qualified class name" in said["KINESIS"], context
    assert "io.kinesisspark.KinesisSourceProvider" in said["KINESIS"] and STANDIN_OTHER in said["KINESIS"], context
    # Two providers of "aws-kinesis", the awslabs one under org.apache.spark: Spark takes it, with a warning only.
    assert "Multiple sources found" not in said["AWS-KINESIS"], context
    # The stand-in reads no stream: Spark's answer shows the query went to it, not to ours (which streams).
    assert "Data source aws-kinesis does not support streamed reading" in said["AWS-KINESIS"], context
    warning = next((line for line in result.stderr.splitlines() if "Multiple sources found for aws-kinesis" in line), "")
    assert "defaulting to the internal datasource" in warning and STANDIN_AWSLABS in warning, context
    # Named by its class, ours is found whatever else is registered: its own option check answers.
    assert "Option 'streamName' is required" in said["BY-CLASS"], context
