"""The per-shard start of a switch from another consumer, printed without starting a query.

Options ``kclLeaseTable`` and ``awslabsCheckpointLocation`` (see :func:`kcl_start`, :func:`awslabs_start`).

The JVM computes it (``io.kinesisspark.switching.PrintStart``), so the helper, the command line
(``python -m kinesis_spark.kcl_start_cli``) and a query's first start give the same answer. The options go to
it as JSON on standard input: keys never appear in a process list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import _option_keys as keys
from ._error_types import KinesisSparkError
from ._jar import jar_path
from ._position import InitialPosition
from ._translate import translate

__all__ = ["KclStart", "SwitchStart", "awslabs_start", "kcl_start", "switch_start"]

_MAIN_CLASS = "io.kinesisspark.switching.PrintStart"


@dataclass(frozen=True)
class SwitchStart:
    """Where each shard would start to continue where a KCL application or an awslabs connector query stopped.

    Attributes
    ----------
    initial_position : InitialPosition
        The per-shard start, ready for :meth:`kinesis_spark.KinesisReader.initial_position` (or option
        ``initialPosition``) in place of option ``kclLeaseTable`` or ``awslabsCheckpointLocation``.
    notes : list of str
        What to know before relying on it: shards with no checkpoint yet, checkpoints retention trimmed,
        leases still being renewed (the application is running), shards an awslabs query had read nothing of
        since LATEST.

    Examples
    --------
    >>> ended = InitialPosition.per_shard({"shardId-000000000000": InitialPosition.shard_end()})
    >>> start = SwitchStart(ended, [])
    >>> print(start.initial_position)
    {"shards": {"shardId-000000000000": "shard_end"}}
    """

    initial_position: InitialPosition
    notes: list[str]


#: The name :func:`kcl_start`'s answer had first: the same type.
KclStart = SwitchStart


def kcl_start(stream: str, lease_table: str, **options: str) -> SwitchStart:
    """Return the start a query reading ``stream`` with option ``kclLeaseTable=lease_table`` would make.

    Nothing is started: the lease table is read (twice, 4 seconds apart, to see leases being renewed) and the
    stream's shards listed, as a query's first start does, so the answer can be reviewed first.

    Parameters
    ----------
    stream : str
        The stream (option ``streamName``).
    lease_table : str
        The KCL application's lease table, named after the application (option ``kclLeaseTable``).
    **options : str
        The query's other options by their names: ``region``, ``endpoint``, credentials, ``initialPosition``
        (where shards the application never saw start), ``failOnDataLoss``, and the lease table's own
        ``dynamoDbRegion``, ``dynamoDbEndpoint`` and ``dynamoDb*`` credentials.

    Returns
    -------
    SwitchStart
        The per-shard start and its notes.

    Raises
    ------
    KinesisSparkError
        As the query would raise it: :class:`~kinesis_spark.errors.KinesisOptionError` for a bad option,
        :class:`~kinesis_spark.errors.KinesisDataLossError` for a checkpoint retention trimmed under
        ``failOnDataLoss``, the connector's message otherwise (a table that does not exist, leases of another
        stream).

    Examples
    --------
    >>> start = kcl_start("orders", "orders-app", region="us-east-1")  # doctest: +SKIP
    >>> print(start.initial_position)  # doctest: +SKIP
    {"default":"latest","shards":{"shardId-000000000000":{"after_sequence_number":"4959..."}}}
    """
    return switch_start(stream, **{keys.KCL_LEASE_TABLE: lease_table, **options})


def awslabs_start(stream: str, checkpoint_location: str, **options: str) -> SwitchStart:
    """Return the start a query of ``stream`` with option ``awslabsCheckpointLocation`` would make.

    Nothing is started: the awslabs connector query's last committed batch and its shard positions are read,
    and the stream's shards listed, as a query's first start does, so the answer can be reviewed first. The
    location is read with Hadoop's file systems among the installed Spark's jars: an ``s3a://`` location needs
    ``hadoop-aws`` there.

    Parameters
    ----------
    stream : str
        The stream (option ``streamName``): the one the awslabs query read.
    checkpoint_location : str
        The awslabs query's ``checkpointLocation`` (option ``awslabsCheckpointLocation``).
    **options : str
        The query's other options by their names: ``region``, ``endpoint``, credentials, ``initialPosition``,
        ``failOnDataLoss``; ``awslabsMetadataPath`` (its ``kinesis.metadataPath``) or ``awslabsDynamoDbTable``
        (its ``kinesis.dynamodb.tableName``) with ``dynamoDbRegion``, ``dynamoDbEndpoint`` and ``dynamoDb*``
        credentials, where it kept its positions there.

    Returns
    -------
    SwitchStart
        The per-shard start and its notes.

    Raises
    ------
    KinesisSparkError
        As the query would raise it: :class:`~kinesis_spark.errors.KinesisOptionError` for a bad option,
        :class:`~kinesis_spark.errors.KinesisDataLossError` for positions in shards retention removed under
        ``failOnDataLoss``, the connector's message otherwise (no committed batch, another stream's
        checkpoint).

    Examples
    --------
    >>> location = "hdfs:///checkpoints/orders"
    >>> start = awslabs_start("orders", location, region="us-east-1")  # doctest: +SKIP
    >>> print(start.initial_position)  # doctest: +SKIP
    {"default":"latest","shards":{"shardId-000000000000":{"after_sequence_number":"4959..."}}}
    """
    return switch_start(stream, **{keys.AWSLABS_CHECKPOINT_LOCATION: checkpoint_location, **options})


def switch_start(stream: str, **options: str) -> SwitchStart:
    """Return the start a query reading ``stream`` with ``options`` would make where another consumer stopped.

    ``options`` name that consumer as the query would: ``kclLeaseTable`` (see :func:`kcl_start`) or
    ``awslabsCheckpointLocation`` (see :func:`awslabs_start`), with the rest of the query's options.

    Examples
    --------
    >>> start = switch_start("orders", kclLeaseTable="orders-app", region="us-east-1")  # doctest: +SKIP
    """
    given = {keys.STREAM_NAME: stream, **options}
    done = subprocess.run(
        [_java(), "-cp", os.pathsep.join([jar_path(), str(_spark_jars() / "*")]), _MAIN_CLASS],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        error = (
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        )
        translated = translate(RuntimeError(error))
        if isinstance(translated, KinesisSparkError):
            raise translated
        raise KinesisSparkError(error.split(": ", 1)[-1])
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return SwitchStart(InitialPosition(answer["initialPosition"]), list(answer["notes"]))


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise KinesisSparkError(
            "switch_start runs the connector in a JVM: set JAVA_HOME or put java on the PATH"
        )
    return java


def _spark_jars() -> Path:
    # The connector's jar leaves Spark's libraries (Scala, json4s, SLF4J) to Spark: take the installed one's.
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    import pyspark

    return Path(pyspark.__file__).parent / "jars"
