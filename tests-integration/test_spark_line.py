"""The session runs the connector jar built for its Spark line: the Scala 2.13 jar on Spark 4, the Scala 2.12
one on Spark 3.5 (dev/test.sh runs this file's test in the smoke run of every line too), as the Python package
picks it for the installed pyspark.
"""

from __future__ import annotations

from pathlib import Path

import pyspark
import pytest

import kinesis_spark
from kinesis_spark._spark_lines import line_for, spark_lines
from kinesis_spark._versions import packaged_properties


@pytest.mark.line_smoke
def test_the_session_runs_the_jar_of_its_spark_line(spark):
    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    provider = jvm.java.lang.Class.forName("io.kinesisspark.KinesisSourceProvider", False, loader)
    loaded_from = Path(provider.getProtectionDomain().getCodeSource().getLocation().getPath())

    props = packaged_properties()
    assert props is not None, "the package holds no versions.properties: run bash dev/build-python.sh"
    line = line_for(pyspark.__version__, spark_lines(props))
    assert spark.version == pyspark.__version__
    assert jvm.scala.util.Properties.versionNumberString().startswith(line.scala_binary + ".")
    assert loaded_from.name == line.jar_name(props["kinesis-spark"]) == Path(kinesis_spark.jar_path()).name
