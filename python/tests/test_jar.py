from __future__ import annotations

import sys

import pytest
from pyspark.sql import SparkSession

import kinesis_spark
from conftest import FakePackage
from kinesis_spark import (
    DataSourceNotFoundError,
    JarNotFoundError,
    KinesisSparkError,
    PySparkNotFoundError,
    SessionWithoutJarError,
    SparkConnectError,
    UnsupportedSparkVersionError,
    _jar,
    configure,
    jar_path,
)

JAR = "kinesis-spark-assembly_2.13-9.8.7.jar"
# The real lookup of the installed pyspark, before the fake_package fixture replaces it.
INSTALLED_PYSPARK_VERSION = _jar._installed_pyspark_version


def test_jar_path_returns_the_bundled_jar(fake_package: FakePackage) -> None:
    fake_package.write_properties(version="9.8.7", scala="2.13.18")
    jar = fake_package.add_jar(JAR)
    fake_package.add_jar("kinesis-spark-assembly_2.13-0.0.1.jar")  # a stale one must not be picked
    assert jar_path() == str(jar)


def test_jar_path_says_how_to_build_a_missing_jar(fake_package: FakePackage) -> None:
    fake_package.write_properties(version="9.8.7")
    with pytest.raises(JarNotFoundError) as info:
        jar_path()
    message = str(info.value)
    assert JAR in message
    assert "bash dev/build-python.sh" in message
    assert "build/sbt connector/assembly" in message
    assert isinstance(info.value, FileNotFoundError)
    assert isinstance(info.value, KinesisSparkError)


def test_jar_path_without_packaged_versions_properties(fake_package: FakePackage) -> None:
    fake_package.add_jar(JAR)
    with pytest.raises(JarNotFoundError, match=r"bash dev/build-python\.sh"):
        jar_path()


@pytest.fixture
def jar(fake_package: FakePackage) -> str:
    fake_package.write_properties(version="9.8.7")
    return str(fake_package.add_jar(JAR))


def spark_jars(builder: SparkSession.Builder) -> str:
    return str(builder._options["spark.jars"])


def test_configure_sets_spark_jars_on_a_fresh_builder(jar: str) -> None:
    builder = SparkSession.builder
    assert configure(builder) is builder
    assert spark_jars(builder) == jar


def test_configure_appends_to_existing_jars(jar: str) -> None:
    builder = SparkSession.builder.config("spark.jars", "/opt/a.jar, /opt/b.jar")
    configure(builder)
    assert spark_jars(builder) == f"/opt/a.jar,/opt/b.jar,{jar}"


def test_configure_twice_adds_the_jar_once(jar: str) -> None:
    builder = configure(configure(SparkSession.builder.config("spark.jars", "/opt/a.jar")))
    assert spark_jars(builder) == f"/opt/a.jar,{jar}"


def test_configure_removes_duplicates_and_empty_entries(jar: str) -> None:
    builder = SparkSession.builder.config("spark.jars", f"/opt/a.jar,,{jar},/opt/a.jar,")
    configure(builder)
    assert spark_jars(builder) == f"/opt/a.jar,{jar}"


def test_configure_knows_a_file_uri_of_the_jar(jar: str) -> None:
    from pathlib import Path

    uri = Path(jar).as_uri()
    builder = configure(SparkSession.builder.config("spark.jars", uri))
    assert spark_jars(builder) == uri


def test_configure_keeps_other_options(jar: str) -> None:
    builder = configure(SparkSession.builder.appName("demo").master("local[1]"))
    assert builder._options["spark.app.name"] == "demo"
    assert builder._options["spark.master"] == "local[1]"


def test_configure_raises_when_the_jar_is_missing(fake_package: FakePackage) -> None:
    fake_package.write_properties(version="9.8.7")
    builder = SparkSession.builder
    with pytest.raises(JarNotFoundError):
        configure(builder)
    assert "spark.jars" not in builder._options


def test_public_names() -> None:
    assert set(kinesis_spark.__all__) >= {
        "KinesisReader",
        "configure",
        "jar_path",
        "KinesisSparkError",
        "JarNotFoundError",
        "DataSourceNotFoundError",
        "__version__",
    }


class FakeJvm:
    """The corner of py4j's JVMView that configure() uses: Class.forName through the context class loader."""

    def __init__(self, loadable: bool) -> None:
        self.loadable = loadable
        self.asked: list[str] = []
        self.java = self
        self.lang = self
        self.Thread = self
        self.Class = self

    def currentThread(self) -> FakeJvm:  # noqa: N802 (Java's name)
        return self

    def getContextClassLoader(self) -> str:  # noqa: N802
        return "loader"

    def forName(self, name: str, initialize: bool, loader: str) -> None:  # noqa: N802
        self.asked.append(name)
        if not self.loadable:
            raise RuntimeError(f"java.lang.ClassNotFoundException: {name}")


def test_configure_refuses_a_running_jvm_without_the_connector(
    jar: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark import SparkContext

    jvm = FakeJvm(loadable=False)
    monkeypatch.setattr(SparkContext, "_jvm", jvm)
    builder = SparkSession.builder.config("spark.jars", "/opt/a.jar")
    with pytest.raises(SessionWithoutJarError) as info:
        configure(builder)
    message = str(info.value)
    assert (
        "restart Python and run `spark = kinesis_spark.configure(SparkSession.builder).getOrCreate()`"
        in message
    )
    assert f"PYSPARK_SUBMIT_ARGS='--jars {jar} pyspark-shell'" in message
    assert jvm.asked == ["io.kinesisspark.KinesisSourceProvider"]
    assert isinstance(info.value, DataSourceNotFoundError)
    assert spark_jars(builder) == "/opt/a.jar"


def test_configure_leaves_a_builder_alone_when_the_running_jvm_has_the_connector(
    fake_package: FakePackage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. started by spark-submit --packages: no bundled jar needed, none added.
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_jvm", FakeJvm(loadable=True))
    builder = SparkSession.builder.config("spark.jars", "/opt/a.jar")
    assert configure(builder) is builder
    assert spark_jars(builder) == "/opt/a.jar"


def test_configure_connects_to_a_jvm_that_started_python_first(
    jar: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # spark-submit and the pyspark shell start the JVM, then Python; PySpark connects on first use.
    from pyspark import SparkContext

    jvm = FakeJvm(loadable=False)
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "12345")
    monkeypatch.setattr(SparkContext, "_jvm", None)
    monkeypatch.setattr(SparkContext, "_ensure_initialized", lambda: setattr(SparkContext, "_jvm", jvm))
    with pytest.raises(SessionWithoutJarError, match=f"with spark-submit or pyspark, pass --jars {jar}"):
        configure(SparkSession.builder)
    assert jvm.asked == ["io.kinesisspark.KinesisSourceProvider"]


def test_configure_never_starts_a_jvm_itself(jar: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from pyspark import SparkContext

    def launched() -> None:
        raise AssertionError("configure() must not launch Spark")

    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(SparkContext, "_jvm", None)
    monkeypatch.setattr(SparkContext, "_ensure_initialized", launched)
    assert spark_jars(configure(SparkSession.builder)) == jar


# --- which bundled jar: the one of the installed pyspark's Spark line ---------------------------------------

JAR_212 = "kinesis-spark-assembly_2.12-9.8.7.jar"


@pytest.fixture
def both_jars(fake_package: FakePackage) -> dict[str, str]:
    fake_package.write_properties(version="9.8.7")
    return {"2.13": str(fake_package.add_jar(JAR)), "2.12": str(fake_package.add_jar(JAR_212))}


@pytest.mark.parametrize(
    ("pyspark", "scala"),
    [("4.2.0", "2.13"), ("4.2.7", "2.13"), ("3.5.9", "2.12"), ("3.5.0", "2.12"), ("3.5.2.dev0", "2.12")],
)
def test_jar_path_picks_the_jar_of_the_installed_pyspark(
    fake_package: FakePackage, both_jars: dict[str, str], pyspark: str, scala: str
) -> None:
    fake_package.pyspark = pyspark
    assert jar_path() == both_jars[scala]


def test_jar_path_for_a_spark_version_asked_for(fake_package: FakePackage, both_jars: dict[str, str]) -> None:
    fake_package.pyspark = "4.2.0"
    assert jar_path("3.5.4") == both_jars["2.12"]
    assert jar_path(spark_version="4.2.1") == both_jars["2.13"]
    with pytest.raises(UnsupportedSparkVersionError, match=r"Spark 4\.0\.0 \(as asked\)"):
        jar_path("4.0.0")


@pytest.mark.parametrize("pyspark", ["4.1.2", "4.0.0", "4.3.0", "3.4.4", "2.4.8", "nightly"])
def test_an_unsupported_pyspark_is_named_with_the_supported_ones(
    fake_package: FakePackage, both_jars: dict[str, str], pyspark: str
) -> None:
    fake_package.pyspark = pyspark
    with pytest.raises(UnsupportedSparkVersionError) as info:
        jar_path()
    message = str(info.value)
    assert f"no connector jar for Spark {pyspark} (the installed pyspark)" in message
    assert "it supports Spark 4.2.x (Scala 2.13) and Spark 3.5.x (Scala 2.12)" in message
    assert "pip install 'pyspark==4.2.*'" in message
    assert info.value.spark_version == pyspark and info.value.supported == ["4.2", "3.5"]
    assert isinstance(info.value, JarNotFoundError)


def test_configure_adds_the_jar_of_the_installed_pyspark(
    fake_package: FakePackage, both_jars: dict[str, str]
) -> None:
    fake_package.pyspark = "3.5.9"
    assert spark_jars(configure(SparkSession.builder.config("spark.jars", "/opt/a.jar"))) == (
        f"/opt/a.jar,{both_jars['2.12']}"
    )


def test_configure_refuses_an_unsupported_pyspark_and_leaves_the_builder(
    fake_package: FakePackage, both_jars: dict[str, str]
) -> None:
    fake_package.pyspark = "4.1.0"
    builder = SparkSession.builder.config("spark.jars", "/opt/a.jar")
    with pytest.raises(UnsupportedSparkVersionError, match=r"Spark 4\.1\.0"):
        configure(builder)
    assert spark_jars(builder) == "/opt/a.jar"


def test_a_missing_spark_35_jar_says_how_to_build_it(fake_package: FakePackage) -> None:
    fake_package.write_properties(version="9.8.7")
    fake_package.add_jar(JAR)
    fake_package.pyspark = "3.5.9"
    with pytest.raises(JarNotFoundError) as info:
        jar_path()
    message = str(info.value)
    assert JAR_212 in message and "(for Spark 3.5)" in message
    assert 'build/sbt "++2.12 connector/assembly"' in message
    assert not isinstance(info.value, UnsupportedSparkVersionError)


def test_a_package_built_without_the_cross_line_supports_spark_4_only(fake_package: FakePackage) -> None:
    fake_package.write_properties(version="9.8.7", cross=None)
    jar = fake_package.add_jar(JAR)
    assert jar_path() == str(jar)
    fake_package.pyspark = "3.5.9"
    with pytest.raises(UnsupportedSparkVersionError, match=r"it supports Spark 4\.2\.x \(Scala 2\.13\)\."):
        jar_path()


def test_the_data_source_message_explains_an_unsupported_pyspark(
    fake_package: FakePackage, both_jars: dict[str, str]
) -> None:
    from kinesis_spark._jar import data_source_not_found_message

    fake_package.pyspark = "4.1.0"
    message = data_source_not_found_message()
    assert "jar_path(), which failed: kinesis-spark has no connector jar for Spark 4.1.0" in message


def test_without_pyspark_the_error_says_what_to_install(
    fake_package: FakePackage, both_jars: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The package does not depend on pyspark (an extra): an environment may have none. None in sys.modules
    # makes `import pyspark` fail as it does when it is not installed.
    monkeypatch.setattr(_jar, "_installed_pyspark_version", INSTALLED_PYSPARK_VERSION)
    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(PySparkNotFoundError) as info:
        jar_path()
    message = str(info.value)
    assert "pyspark is not installed in this Python environment" in message
    assert "one of 'pyspark==4.2.*', 'pyspark==3.5.*'" in message
    assert 'pip install "kinesis-spark[pyspark]"' in message
    assert isinstance(info.value, ImportError)
    # A version asked for needs no installed pyspark.
    assert jar_path("3.5.4") == both_jars["2.12"]


def test_configure_refuses_a_spark_connect_builder_saying_where_the_jar_goes(
    fake_package: FakePackage, both_jars: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Builder:
        def __init__(self, options: dict[str, str]) -> None:
            self._options = options

    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    with pytest.raises(SparkConnectError) as info:
        configure(Builder({"spark.remote": "sc://127.0.0.1:15002"}))  # type: ignore[arg-type]
    message = str(info.value)
    assert "makes a Spark Connect session" in message
    assert "io.github.kinesis-spark:kinesis-spark_2.13:9.8.7 (Spark 4.2)" in message
    assert "kinesis-spark_2.12:9.8.7 (Spark 3.5)" in message
    with pytest.raises(SparkConnectError):
        configure(Builder({"spark.api.mode": "connect"}))  # type: ignore[arg-type]
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15002")
    with pytest.raises(SparkConnectError):
        configure(Builder({}))  # type: ignore[arg-type]
