"""``KinesisReader``: a Structured Streaming reader of Kinesis data streams."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, ClassVar

from . import _option_keys as keys
from ._consumer_mode import ConsumerMode
from ._options_builder import OptionsBuilder, OptionValue
from ._position import InitialPosition
from ._source_options import VALUE_CHECKS, check_source
from ._translate import translate_errors
from ._values import (
    render_boolean,
    render_bytes,
    render_decimal,
    render_duration,
    render_long,
    render_text,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["KinesisReader", "OptionValue"]


class KinesisReader(OptionsBuilder):
    """Reads Kinesis data streams as a streaming ``DataFrame``.

    Typed front of ``spark.readStream.format("kinesis")``: one builder method per option, each checking its
    value at once with the message the connector itself would give, plus :meth:`option` / :meth:`options`
    for anything else (such as the awslabs connector's ``kinesis.*`` names). :meth:`load` checks the
    options as a whole, hands them to Spark, and raises errors of :mod:`kinesis_spark.errors` instead of
    PySpark's. Option names are case-insensitive, as in Spark.

    Parameters
    ----------
    spark : SparkSession
        A session created with the connector jar on its classpath; see :func:`kinesis_spark.configure`.
    format : str
        The data source name handed to Spark: ``"kinesis"``, or the provider class
        ``"io.kinesisspark.KinesisSourceProvider"`` on a runtime whose own Kinesis source also answers to
        ``"kinesis"`` (Databricks).

    Examples
    --------
    >>> from datetime import timedelta
    >>> from kinesis_spark import InitialPosition, KinesisReader
    >>> reader = (
    ...     KinesisReader(spark)
    ...     .stream_names("orders", "refunds")
    ...     .region("eu-west-1")
    ...     .initial_position(InitialPosition.trim_horizon())
    ...     .min_fetch_period(timedelta(milliseconds=210))
    ...     .max_bytes_per_trigger("100mb")
    ... )
    >>> reader
    KinesisReader(streamName='orders,refunds', region='eu-west-1', initialPosition='trim_horizon', minFetchPeriod='210ms', maxBytesPerTrigger='100mb')
    >>> df = reader.load()  # doctest: +SKIP
    """  # noqa: E501

    _value_checks: ClassVar[Mapping[str, Callable[[str], object]]] = VALUE_CHECKS

    def __init__(self, spark: SparkSession, format: str = keys.FORMAT) -> None:
        super().__init__()
        self._spark = spark
        self._format = format

    # --- what to read --------------------------------------------------------------------------------------

    def stream_names(self, *names: str) -> KinesisReader:
        """Read these streams (option ``streamName``), given by name or ARN.

        The ``stream`` column holds each record's stream name. Stream ARNs must be in the query's region.

        Parameters
        ----------
        *names : str
            One or more stream names or ARNs (``arn:aws:kinesis:<region>:<account>:stream/<name>``).

        Returns
        -------
        KinesisReader

        Examples
        --------
        >>> KinesisReader(spark).stream_names("clicks", "arn:aws:kinesis:us-east-1:123456789012:stream/views")
        KinesisReader(streamName='clicks,arn:aws:kinesis:us-east-1:123456789012:stream/views')
        >>> KinesisReader(spark).stream_names("clicks", "clicks")
        Traceback (most recent call last):
        ...
        kinesis_spark.errors.KinesisOptionError: Invalid value 'clicks,clicks' for option 'streamName': expected each stream listed once (by name or ARN).
        """  # noqa: E501
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"option '{keys.STREAM_NAME}' takes stream names (str), got {name!r}")
        return self._set(keys.STREAM_NAME, ",".join(names))

    def initial_position(self, position: InitialPosition | datetime | str) -> KinesisReader:
        r"""Where a query without a checkpoint starts (option ``initialPosition``; default latest).

        Parameters
        ----------
        position : InitialPosition, datetime or str
            An :class:`InitialPosition`; a timezone-aware ``datetime`` (the same as
            ``InitialPosition.at_timestamp(position)``); or the option's text (``"trim_horizon"``, or the
            ``{"at_timestamp": ..., "format": ...}`` JSON of the Databricks connector).

        Returns
        -------
        KinesisReader

        Examples
        --------
        >>> from datetime import datetime, timezone
        >>> KinesisReader(spark).initial_position(datetime(2024, 5, 1, tzinfo=timezone.utc))
        KinesisReader(initialPosition='{"at_timestamp": "2024-05-01T00:00:00.000Z", "format": "yyyy-MM-dd\'T\'HH:mm:ss.SSSXXX"}')
        """  # noqa: E501
        if isinstance(position, datetime):
            position = InitialPosition.at_timestamp(position)
        if not isinstance(position, (InitialPosition, str)):
            expected = "an InitialPosition, a datetime or a str"
            raise TypeError(f"option '{keys.INITIAL_POSITION}' takes {expected}, got {position!r}")
        return self._set(keys.INITIAL_POSITION, str(position))

    def consumer_mode(self, mode: ConsumerMode) -> KinesisReader:
        """Read by polling (GetRecords, the default) or enhanced fan-out (option ``consumerMode``).

        Parameters
        ----------
        mode : ConsumerMode
            ``ConsumerMode.POLLING`` or ``ConsumerMode.EFO``.

        Returns
        -------
        KinesisReader

        Examples
        --------
        >>> from kinesis_spark import ConsumerMode
        >>> KinesisReader(spark).consumer_mode(ConsumerMode.EFO)
        KinesisReader(consumerMode='efo')
        """
        if not isinstance(mode, ConsumerMode):
            raise TypeError(
                f"option '{keys.CONSUMER_MODE}' takes a ConsumerMode (ConsumerMode.POLLING or "
                f"ConsumerMode.EFO), got {mode!r}"
            )
        return self._set(keys.CONSUMER_MODE, mode.value)

    def consumer_name(self, name: str) -> KinesisReader:
        """Name the enhanced fan-out consumer (option ``consumerName``; default: the query's id)."""
        return self._set(keys.CONSUMER_NAME, render_text(keys.CONSUMER_NAME, name))

    def consumer_name_prefix(self, prefix: str) -> KinesisReader:
        """Prefix the enhanced fan-out consumer's name with this (option ``consumerNamePrefix``)."""
        return self._set(keys.CONSUMER_NAME_PREFIX, render_text(keys.CONSUMER_NAME_PREFIX, prefix))

    def require_consumer_deregistration(self, enabled: bool = True) -> KinesisReader:
        """Deregister the fan-out consumer when the query stops (``requireConsumerDeregistration``)."""
        option = keys.REQUIRE_CONSUMER_DEREGISTRATION
        return self._set(option, render_boolean(option, enabled))

    def consumer_refresh_interval(self, interval: timedelta | str) -> KinesisReader:
        """Re-check the enhanced fan-out consumer's registration this often (``consumerRefreshInterval``)."""
        option = keys.CONSUMER_REFRESH_INTERVAL
        return self._set(option, render_duration(option, interval))

    def fail_on_data_loss(self, enabled: bool) -> KinesisReader:
        """Fail (``True``, the default) or go on when records the query needs are gone (``failOnDataLoss``).

        With ``False``, the loss is logged and counted in the ``dataLossEvents`` metric, and reading continues
        from the oldest record still available.
        """
        return self._set(keys.FAIL_ON_DATA_LOSS, render_boolean(keys.FAIL_ON_DATA_LOSS, enabled))

    def allow_stream_removal(self, enabled: bool = True) -> KinesisReader:
        """Let a restarted query drop streams its checkpoint reads but the stream list no longer names."""
        return self._set(keys.ALLOW_STREAM_REMOVAL, render_boolean(keys.ALLOW_STREAM_REMOVAL, enabled))

    def include_sub_sequence_number(self, enabled: bool = True) -> KinesisReader:
        """Add the column ``subSequenceNumber`` after the six default ones (``includeSubSequenceNumber``).

        It is null for a plain record and, for a user record of a KPL aggregate, its index in the aggregate;
        with the row's sequence number, it names a user record. By default the rows have exactly the
        Databricks connector's six columns.
        """
        option = keys.INCLUDE_SUB_SEQUENCE_NUMBER
        return self._set(option, render_boolean(option, enabled))

    def kcl_lease_table(
        self,
        table: str,
        *,
        region: str | None = None,
        endpoint: str | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        session_token: str | None = None,
        role_arn: str | None = None,
        external_id: str | None = None,
    ) -> KinesisReader:
        """Continue where a KCL application stopped, from its lease table (option ``kclLeaseTable``).

        The query's first start reads the table once and starts each shard just after its checkpoint;
        :meth:`initial_position` is where shards the application never saw start. The table is read with the
        stream's connection unless the arguments replace its parts for DynamoDB (``dynamoDbRegion``,
        ``dynamoDbEndpoint``, the ``dynamoDbAws*`` keys together, ``dynamoDbRoleArn`` and
        ``dynamoDbRoleExternalId``). Arguments left ``None`` unset their options.
        :func:`kinesis_spark.kcl_start` prints the start without a query.

        Examples
        --------
        >>> from kinesis_spark import KinesisReader
        >>> KinesisReader(spark).kcl_lease_table("orders-app", region="eu-west-1")
        KinesisReader(kclLeaseTable='orders-app', dynamoDbRegion='eu-west-1')
        """
        dynamodb = _dynamodb(region, endpoint, access_key, secret_key, session_token, role_arn, external_id)
        return self._set_texts({keys.KCL_LEASE_TABLE: table, **dynamodb})

    def awslabs_checkpoint(
        self,
        location: str,
        *,
        metadata_path: str | None = None,
        dynamodb_table: str | None = None,
        region: str | None = None,
        endpoint: str | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        session_token: str | None = None,
        role_arn: str | None = None,
        external_id: str | None = None,
    ) -> KinesisReader:
        """Continue where an awslabs connector query stopped (option ``awslabsCheckpointLocation``).

        ``location`` is that query's checkpoint location. The query's first start reads its last committed
        batch and starts each shard just after where that batch left it, inside a KPL aggregate where it
        stopped inside one; :meth:`initial_position` is where shards the old query never saw start.
        ``metadata_path`` is the old query's ``kinesis.metadataPath`` where it set one
        (``awslabsMetadataPath``); ``dynamodb_table`` its ``kinesis.dynamodb.tableName`` where it kept its
        positions in DynamoDB (``awslabsDynamoDbTable``), read with the stream's connection unless the other
        arguments replace its parts, as in :meth:`kcl_lease_table`. :func:`kinesis_spark.awslabs_start` prints
        the start without a query.

        Examples
        --------
        >>> from kinesis_spark import KinesisReader
        >>> KinesisReader(spark).awslabs_checkpoint("s3a://bucket/checkpoints/orders")
        KinesisReader(awslabsCheckpointLocation='s3a://bucket/checkpoints/orders')
        """
        dynamodb = _dynamodb(region, endpoint, access_key, secret_key, session_token, role_arn, external_id)
        return self._set_texts(
            {
                keys.AWSLABS_CHECKPOINT_LOCATION: location,
                keys.AWSLABS_METADATA_PATH: metadata_path,
                keys.AWSLABS_DYNAMODB_TABLE: dynamodb_table,
                **dynamodb,
            }
        )

    def _set_texts(self, text: dict[str, str | None]) -> KinesisReader:
        return self._set_all({key: None if v is None else render_text(key, v) for key, v in text.items()})

    # --- fetching ------------------------------------------------------------------------------------------

    def max_records_per_fetch(self, records: int) -> KinesisReader:
        """Ask for this many records per GetRecords call, 1 to 10,000 (``maxRecordsPerFetch``; 10,000).

        Examples
        --------
        >>> KinesisReader(spark).max_records_per_fetch(20000)
        Traceback (most recent call last):
        ...
        kinesis_spark.errors.KinesisOptionError: Invalid value '20000' for option 'maxRecordsPerFetch': expected an integer from 1 to 10000.
        """  # noqa: E501
        return self._set(keys.MAX_RECORDS_PER_FETCH, render_long(keys.MAX_RECORDS_PER_FETCH, records))

    def max_fetch_rate(self, megabytes_per_second: float) -> KinesisReader:
        """Read at most this many MB/s (2^20 bytes) per shard, up to 2.0 (``maxFetchRate``; default 1.0)."""
        return self._set(keys.MAX_FETCH_RATE, render_decimal(keys.MAX_FETCH_RATE, megabytes_per_second))

    def min_fetch_period(self, period: timedelta | str) -> KinesisReader:
        """Least time between two GetRecords calls on a shard, at least 200 ms (``minFetchPeriod``; 400 ms).

        Not set, a real-time query calls a shard 210 ms after a call that brought records (at once while it catches
        up); set, the period holds after every call (leave calls to other polling consumers of the stream).

        Examples
        --------
        >>> from datetime import timedelta
        >>> KinesisReader(spark).min_fetch_period(timedelta(milliseconds=100))
        Traceback (most recent call last):
        ...
        kinesis_spark.errors.KinesisOptionError: Invalid value '100ms' for option 'minFetchPeriod': expected a duration such as '200ms', '1s' or '2m', of at least 200ms.
        """  # noqa: E501
        return self._set(keys.MIN_FETCH_PERIOD, render_duration(keys.MIN_FETCH_PERIOD, period))

    def max_fetch_duration(self, duration: timedelta | str) -> KinesisReader:
        """How long a prefetch round may run before its records are available (``maxFetchDuration``; 10s)."""
        return self._set(keys.MAX_FETCH_DURATION, render_duration(keys.MAX_FETCH_DURATION, duration))

    def fetch_buffer_size(self, size: int | str) -> KinesisReader:
        """Pause prefetching while this much is buffered: bytes, or ``"2gb"`` (``fetchBufferSize``; 20 GB)."""
        return self._set(keys.FETCH_BUFFER_SIZE, render_bytes(keys.FETCH_BUFFER_SIZE, size))

    def shards_per_task(self, shards: int) -> KinesisReader:
        """Shards one executor fetch thread reads in a round (option ``shardsPerTask``; default 5)."""
        return self._set(keys.SHARDS_PER_TASK, render_long(keys.SHARDS_PER_TASK, shards))

    def shard_fetch_interval(self, interval: timedelta | str) -> KinesisReader:
        """How often shards are listed to discover resharding (option ``shardFetchInterval``; default 1 s)."""
        return self._set(keys.SHARD_FETCH_INTERVAL, render_duration(keys.SHARD_FETCH_INTERVAL, interval))

    def max_shards_per_describe(self, shards: int) -> KinesisReader:
        """Shards per ListShards page, 1 to 10,000 (option ``maxShardsPerDescribe``; default 1,000)."""
        return self._set(keys.MAX_SHARDS_PER_DESCRIBE, render_long(keys.MAX_SHARDS_PER_DESCRIBE, shards))

    def coalesce_threshold_block_size(self, size: int) -> KinesisReader:
        """Pack shards together when blocks average less than this many bytes (default 10,000,000)."""
        option = keys.COALESCE_THRESHOLD_BLOCK_SIZE
        return self._set(option, render_long(option, size))

    def coalesce_bin_size(self, size: int) -> KinesisReader:
        """About this many bytes per packed partition (option ``coalesceBinSize``; default 128,000,000)."""
        return self._set(keys.COALESCE_BIN_SIZE, render_long(keys.COALESCE_BIN_SIZE, size))

    # --- batches -------------------------------------------------------------------------------------------

    def real_time_tasks(self, tasks: int) -> KinesisReader:
        """In real-time mode, the long-running tasks that read the shards (option ``realTimeTasks``).

        Each holds a task slot for the whole batch; by default one per slot, at most one per shard. More than
        the cluster's slots is refused when the query starts. Example::

            reader.real_time_tasks(4)  # then .load().writeStream.trigger(realTime="5 seconds")...
        """
        return self._set(keys.REAL_TIME_TASKS, render_long(keys.REAL_TIME_TASKS, tasks))

    def max_records_per_trigger(self, records: int) -> KinesisReader:
        """Upper bound on records per micro-batch (option ``maxRecordsPerTrigger``; default none).

        Whole prefetched blocks are taken, shards in turn, at least one block per batch.
        """
        return self._set(keys.MAX_RECORDS_PER_TRIGGER, render_long(keys.MAX_RECORDS_PER_TRIGGER, records))

    def max_bytes_per_trigger(self, size: int | str) -> KinesisReader:
        """Upper bound on bytes per micro-batch: bytes, or ``"100mb"`` (``maxBytesPerTrigger``; none)."""
        return self._set(keys.MAX_BYTES_PER_TRIGGER, render_bytes(keys.MAX_BYTES_PER_TRIGGER, size))

    # --- result --------------------------------------------------------------------------------------------

    def load(self) -> DataFrame:
        """Create the streaming ``DataFrame``.

        The options are checked as a whole first (a stream is required; keys come in pairs; ...), then the
        connector parses them again and checks that every stream exists.

        Returns
        -------
        DataFrame
            A streaming ``DataFrame`` with the connector's schema.

        Raises
        ------
        KinesisOptionError
            If the options are refused, in Python or by the connector.
        StreamNotFoundError
            If a stream does not exist.
        KinesisCredentialsError, KinesisTlsError
            If the connector cannot call Kinesis with the credentials or TLS settings given.
        DataSourceNotFoundError
            If the session was started without the connector jar on its classpath.

        Examples
        --------
        >>> df = KinesisReader(spark).stream_names("orders").load()  # doctest: +SKIP
        >>> query = df.writeStream.format("console").start()  # doctest: +SKIP
        """
        check_source(self._by_lower_name())
        reader = self._spark.readStream.format(self._format).options(**self._spark_options())
        with translate_errors():
            df = reader.load()
            # Classic PySpark resolves the provider in load(); Spark Connect only when the plan is analysed.
            # Asking for the schema makes both fail here.
            _ = df.schema
        return df


def _dynamodb(
    region: str | None,
    endpoint: str | None,
    access_key: str | None,
    secret_key: str | None,
    session_token: str | None,
    role_arn: str | None,
    external_id: str | None,
) -> dict[str, str | None]:
    """DynamoDB's connection options, where they replace the stream's (``None`` unsets one)."""
    return {
        keys.DYNAMODB_REGION: region,
        keys.DYNAMODB_ENDPOINT: endpoint,
        keys.DYNAMODB_AWS_ACCESS_KEY: access_key,
        keys.DYNAMODB_AWS_SECRET_KEY: secret_key,
        keys.DYNAMODB_AWS_SESSION_TOKEN: session_token,
        keys.DYNAMODB_ROLE_ARN: role_arn,
        keys.DYNAMODB_ROLE_EXTERNAL_ID: external_id,
    }
