"""A small local SparkSession with the connector jar on its classpath.

The jar must be on ``spark.jars`` before the JVM starts: a data source added to a running session is not
visible to every thread. Everything Spark listens on is bound to 127.0.0.1.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

REPO_ROOT = Path(__file__).resolve().parents[2]
# pyspark 3.x runs Scala 2.12, pyspark 4.x Scala 2.13: the sbt assembly of the matching cross build.
SCALA_BINARY = "2.12" if pyspark.__version__.startswith("3.") else "2.13"
ASSEMBLY_GLOB = f"connector-jvm/target/scala-{SCALA_BINARY}/kinesis-spark-assembly_{SCALA_BINARY}-*.jar"


def use_class_archive() -> None:
    """Hand every JVM this process starts from here on (through ``JDK_JAVA_OPTIONS``) the class archive of this
    environment's Spark, if ``dev/spark-class-archive.sh`` made one: Spark's JVMs start in about half the time. A
    JVM of another class path (another environment's Spark, Maven) ignores it; the -Xlog settings keep that quiet,
    since some callers read a JVM's stdout."""
    archive = Path(sys.prefix) / "spark-classes.jsa"
    current = os.environ.get("JDK_JAVA_OPTIONS", "")
    if archive.is_file() and "SharedArchiveFile" not in current:
        flags = f"-XX:SharedArchiveFile={archive} -Xlog:cds=off -Xlog:cds+dynamic=off"
        os.environ["JDK_JAVA_OPTIONS"] = f"{current} {flags}".strip()


def connector_jar() -> Path:
    """The connector's assembly jar, from the first of these that names an existing file.

    1. ``KINESIS_SPARK_JAR`` (environment);
    2. ``kinesis_spark.jar_path()``, the jar bundled in the installed Python package;
    3. the newest sbt assembly under ``connector-jvm/target``.
    """
    tried: list[str] = []
    configured = os.environ.get("KINESIS_SPARK_JAR")
    if configured:
        if Path(configured).is_file():
            return Path(configured)
        raise FileNotFoundError(f"KINESIS_SPARK_JAR={configured} is not a file")
    try:
        import kinesis_spark

        bundled = Path(kinesis_spark.jar_path())
        if bundled.is_file():
            return bundled
        tried.append(f"kinesis_spark.jar_path() -> {bundled} (missing)")
    except Exception as error:  # not installed, older package, or no jar bundled yet
        tried.append(f"kinesis_spark.jar_path(): {type(error).__name__}: {error}")
    built = sorted(glob.glob(str(REPO_ROOT / ASSEMBLY_GLOB)), key=os.path.getmtime)
    if built:
        return Path(built[-1])
    tried.append(f"{ASSEMBLY_GLOB}: no match")
    raise FileNotFoundError(
        "connector jar not found; build it with `build/sbt connector/assembly` "
        "or set KINESIS_SPARK_JAR. Tried: " + "; ".join(tried)
    )


def local_spark(
    app_name: str = "kinesis-spark-tests",
    jar: Path | None = None,
    master: str = "local[2]",
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """Create (or return the running) local SparkSession: ``local[2]``, no UI, 2 shuffle partitions; ``conf`` on
    top (e.g. ``spark.driver.extraJavaOptions``: it must be set before the JVM starts)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.jars", str(jar or connector_jar()))
        .config("spark.driver.memory", "1g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


def sql_status_store(spark: SparkSession):  # noqa: ANN201 (a py4j object)
    """Spark's SQL status store (what the UI's SQL tab shows, kept with the UI off too), once every event posted so
    far has reached Spark's listeners: the store hears of a query's tasks on the listener thread, which may still be
    behind when the query returns (a test once read no metric at all)."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    return spark._jsparkSession.sharedState().statusStore()


def kinesis_source(spark: SparkSession, stream: str, endpoint: str, **options: str):  # noqa: ANN201 (DataFrame)
    """The connector's streaming DataFrame with only the region, endpoint, ``initialPosition=trim_horizon`` and
    ``options`` set (no credentials unless given: for tests of credentials and TLS)."""
    reader = spark.readStream.format("kinesis").option("streamName", stream).option("region", "us-east-1")
    reader = reader.option("endpoint", endpoint).option("initialPosition", "trim_horizon")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


# JVM system properties under which the AWS SDK's default credentials chain finds nothing on this machine, and
# asks no instance metadata service off it.
NO_DEFAULT_CREDENTIALS = {
    "aws.disableEc2Metadata": "true",
    "aws.sharedCredentialsFile": "/nonexistent/credentials",
    "aws.configFile": "/nonexistent/config",
}


@contextmanager
def no_default_aws_credentials(spark: SparkSession) -> Iterator[None]:
    """Within the block, the driver JVM's default AWS credentials chain finds no profile and no metadata."""
    system = spark.sparkContext._jvm.java.lang.System
    saved = {key: system.getProperty(key) for key in NO_DEFAULT_CREDENTIALS}
    for key, value in NO_DEFAULT_CREDENTIALS.items():
        system.setProperty(key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                system.clearProperty(key)
            else:
                system.setProperty(key, value)
