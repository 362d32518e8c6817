"""Fixtures of the end-to-end suite.

One emulator and one SparkSession serve the whole session (starting either takes seconds); every test gets
fresh streams, because the emulator slows down as a shard fills, and its own sink and checkpoint directories.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from harness.cluster import ClusterJob
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY, KinesisEmulator
from harness.kinesis import Kinesis
from harness.limits_proxy import LimitsProxy
from harness.registries import STORAGE, Registries, release_dir, released
from harness.reliability import write_report
from harness.sink import BatchSink
from harness.spark import local_spark, use_class_archive
from pyspark.sql import DataFrame, SparkSession


def pytest_configure(config: pytest.Config) -> None:
    use_class_archive()


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KinesisEmulator]:
    """The local Kinesis emulator; its log is ``emulator.log`` under pytest's base temp directory."""
    with KinesisEmulator(log_path=tmp_path_factory.getbasetemp() / "emulator.log") as running:
        yield running


@pytest.fixture(scope="session")
def kinesis(emulator: KinesisEmulator) -> Iterator[Kinesis]:
    """boto3 access to the emulator, the producer side and the ground truth of every test."""
    client = Kinesis(emulator.endpoint)
    yield client
    client.close()


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """A local[2] SparkSession with the connector jar (see harness.spark.connector_jar)."""
    session = local_spark()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every artifact of a release (``dev/release.sh build``): ``maven/``, ``python/``, ``central-bundle.zip``."""
    return release_dir(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="session")
def registries(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registries]:
    """A PyPI and a Maven repository on 127.0.0.1 holding the release, uploaded by ``dev/release.sh upload``."""
    with ExitStack() as stack:
        yield released(stack, release, STORAGE, tmp_path_factory.mktemp("registries"))


@pytest.fixture
def stream(kinesis: Kinesis, request: pytest.FixtureRequest) -> Iterator[Callable[[int], str]]:
    """Factory of fresh, uniquely named ACTIVE streams (``stream(shards)``), deleted after the test."""
    created: list[str] = []
    test_name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")[:80]

    def create(shards: int = 1) -> str:
        name = f"{test_name}-{uuid.uuid4().hex[:8]}"
        kinesis.create_stream(name, shards)
        created.append(name)
        return name

    yield create
    for name in created:
        try:
            kinesis.delete_stream(name)
        except kinesis.client.exceptions.ResourceNotFoundException:
            pass  # the test deleted it itself


@pytest.fixture
def read_kinesis(spark: SparkSession, emulator: KinesisEmulator) -> Callable[..., DataFrame]:
    """``read_kinesis(stream, **options)``: the connector's streaming DataFrame over the emulator.

    Region, endpoint and credentials point at the emulator; ``options`` add to or override them.
    """

    def load(stream_name: str, **options: str) -> DataFrame:
        reader = (
            spark.readStream.format("kinesis")
            .option("streamName", stream_name)
            .option("region", REGION)
            .option("endpoint", emulator.endpoint)
            .option("awsAccessKey", ACCESS_KEY)
            .option("awsSecretKey", SECRET_KEY)
        )
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load()

    return load


@pytest.fixture
def sink(spark: SparkSession, tmp_path: Path) -> Iterator[BatchSink]:
    """A per-test batch sink; every query still running when the test ends is stopped."""
    yield BatchSink(spark, tmp_path)
    for query in spark.streams.active:
        query.stop()


@pytest.fixture
def proxy(request: pytest.FixtureRequest, emulator: KinesisEmulator, tmp_path: Path) -> Iterator[Callable[..., LimitsProxy]]:
    """``proxy(**limits)``: a started LimitsProxy (Kinesis's limits by default) in front of the emulator.

    Queries still running at the end of a test that uses Spark are stopped before the proxy they read through.
    """
    started: list[LimitsProxy] = []

    def start(**limits: object) -> LimitsProxy:
        running = LimitsProxy(emulator.endpoint, log_path=tmp_path / f"proxy-{len(started)}.log", **limits)
        started.append(running.start())
        return running

    yield start
    if "spark" in request.fixturenames:
        for query in request.getfixturevalue("spark").streams.active:
            query.stop()
    for running in started:
        running.stop()


@pytest.fixture
def cluster_job() -> Iterator[Callable[..., ClusterJob]]:
    """``cluster_job(root, options, **settings)``: a :class:`ClusterJob`, stopped and cleaned up after the test."""
    jobs: list[ClusterJob] = []

    def make(root: Path, options: dict[str, str], **settings: object) -> ClusterJob:
        jobs.append(ClusterJob(root, options, **settings))  # type: ignore[arg-type]
        return jobs[-1]

    yield make
    for job in jobs:
        job.stop()
        job.clean_up()


#: Markers of tests that need a Spark line at least this new: real-time mode, through PySpark's trigger (4.2) or the
#: JVM's (4.1), and with state (4.3).
NEWEST_SPARK_MARKERS = {"real_time": (4, 2), "real_time_jvm": (4, 1), "real_time_stateful": (4, 3)}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked for a newer Spark line (:data:`NEWEST_SPARK_MARKERS`) are deselected on older lines, not skipped
    (a skip would hide a defect; there the feature does not exist)."""
    import pyspark

    line = tuple(int(part) for part in pyspark.__version__.split(".")[:2])
    too_new = {marker for marker, since in NEWEST_SPARK_MARKERS.items() if line < since}
    deselected = [item for item in items if any(item.get_closest_marker(m) is not None for m in too_new)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The reliability tests' report table, if any of them ran (see harness.reliability)."""
    write_report()
