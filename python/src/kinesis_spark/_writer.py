"""``KinesisWriter``: writes a DataFrame's rows to a Kinesis data stream with the connector's sink."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, ClassVar

from . import _option_keys as keys
from ._connection_options import TEXT_CHECKS, check_connection
from ._error_types import KinesisSparkError
from ._jvm import jvm_class, jvm_of
from ._option_checks import ValueCheck, ValueChecks
from ._options_builder import OptionsBuilder
from ._translate import translate_errors
from ._values import render_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameWriter
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = ["KinesisWriter"]


#: The connector's writer of real-time queries in the JVM.
_FOREACH_WRITER = "io.kinesisspark.sink.KinesisForeachWriter"

#: The sink's and the connection's options: the catalog's kinds, and the connection's text options by code.
_VALUE_CHECKS: Mapping[str, ValueCheck] = ValueChecks(("sink", "connection"), TEXT_CHECKS)


class KinesisWriter(OptionsBuilder):
    """Writes a ``DataFrame`` to Kinesis through ``df.writeStream`` or ``df.write`` ``.format("kinesis")``.

    A thin front of the connector's sink: the connection builders (:meth:`region`, :meth:`endpoint`,
    :meth:`credentials`, :meth:`assume_role`, ...) and :meth:`stream_name` are typed and checked like the
    reader's; the sink's own options are passed through :meth:`option` / :meth:`options`, each value checked
    as the connector would check it (the option catalog's bounds and messages). The rows
    need a ``data`` column (binary or string) and a ``partitionKey`` column (string); see the README's sink
    section for the rest. Errors of :meth:`start` and :meth:`save` are raised as :mod:`kinesis_spark.errors`.

    Parameters
    ----------
    df : DataFrame
        The rows to write, streaming (:meth:`start`) or not (:meth:`save`).
    format : str
        The data source name handed to Spark: ``"kinesis"``, or the provider class
        ``"io.kinesisspark.KinesisSourceProvider"`` on a runtime whose own Kinesis connector also answers to
        ``"kinesis"`` (Databricks).

    Examples
    --------
    >>> from kinesis_spark import KinesisWriter
    >>> writer = KinesisWriter(df).stream_name("orders").region("eu-west-1")
    >>> writer
    KinesisWriter(streamName='orders', region='eu-west-1')
    >>> query = writer.start(checkpoint_location="/checkpoints/orders-out")  # doctest: +SKIP
    """

    _value_checks: ClassVar[Mapping[str, ValueCheck]] = _VALUE_CHECKS

    def __init__(self, df: DataFrame, format: str = keys.FORMAT) -> None:
        super().__init__()
        self._df = df
        self._format = format

    def stream_name(self, name: str) -> KinesisWriter:
        """Write to this stream (option ``streamName``), unless a row says otherwise.

        Examples
        --------
        >>> KinesisWriter(df).stream_name("orders")
        KinesisWriter(streamName='orders')
        """
        return self._set(keys.STREAM_NAME, render_text(keys.STREAM_NAME, name))

    def stream_writer(self) -> DataStreamWriter:
        """Return ``df.writeStream.format("kinesis")`` with these options, to finish configuring by hand.

        Examples
        --------
        >>> writer = KinesisWriter(df).stream_name("orders").stream_writer()  # doctest: +SKIP
        >>> query = writer.trigger(processingTime="5 seconds").start()  # doctest: +SKIP
        """
        check_connection(self._by_lower_name())
        return self._df.writeStream.format(self._format).options(**self._spark_options())

    def batch_writer(self) -> DataFrameWriter:
        """Return ``df.write.format("kinesis")`` with these options, to finish configuring by hand."""
        check_connection(self._by_lower_name())
        return self._df.write.format(self._format).options(**self._spark_options())

    def start(
        self,
        checkpoint_location: str | None = None,
        *,
        query_name: str | None = None,
        processing_time: timedelta | str | None = None,
        available_now: bool = False,
        real_time: timedelta | str | None = None,
    ) -> StreamingQuery:
        """Start a streaming query that writes the (streaming) ``DataFrame`` to Kinesis.

        Parameters
        ----------
        checkpoint_location : str, optional
            Where the query keeps its progress; needed unless ``spark.sql.streaming.checkpointLocation``
            is set.
        query_name : str, optional
            The query's name.
        processing_time : timedelta or str, optional
            Start a micro-batch this often (``Trigger.ProcessingTime``, e.g. ``"5 seconds"``) instead of as
            soon as possible.
        available_now : bool
            Write what is available now, in as many batches as it takes, then stop.
        real_time : timedelta or str, optional
            Run the query in real-time mode (Spark 4.1+, ``Trigger.RealTime``) with batches this long (e.g.
            ``"5 minutes"``; Spark's least is 5 seconds): each row is sent to Kinesis as it comes, through the
            connector's ``KinesisForeachWriter`` (Spark admits no other sink of ours in real-time mode), with
            the sink's pacing and retries; the output mode is ``update``. Needs a classic session (the writer
            is made in the driver's JVM), and refuses option ``aggregation``. See docs/real-time.md.

        Returns
        -------
        StreamingQuery

        Raises
        ------
        KinesisOptionError
            If the options are refused, in Python or by the connector.
        SparkConnectError
            If ``real_time`` is given on a Spark Connect session.

        Examples
        --------
        >>> source = KinesisReader(spark).stream_name("orders").load()  # doctest: +SKIP
        >>> query = (KinesisWriter(source.selectExpr("data", "partitionKey"))  # doctest: +SKIP
        ...          .stream_name("orders-copy").start("/checkpoints/copy", real_time="5 minutes"))
        """
        if sum(x is not None and x is not False for x in (processing_time, real_time, available_now)) > 1:
            raise ValueError("start() takes one of processing_time, available_now and real_time")
        if real_time is not None:
            return self._start_real_time(_interval(real_time, "real_time"), checkpoint_location, query_name)
        writer = self.stream_writer()
        if checkpoint_location is not None:
            writer = writer.option("checkpointLocation", checkpoint_location)
        if query_name is not None:
            writer = writer.queryName(query_name)
        if processing_time is not None:
            writer = writer.trigger(processingTime=_interval(processing_time, "processing_time"))
        elif available_now:
            writer = writer.trigger(availableNow=True)
        with translate_errors():
            return writer.start()

    def _start_real_time(
        self, interval: str, checkpoint_location: str | None, query_name: str | None
    ) -> StreamingQuery:
        from pyspark.sql.streaming.query import StreamingQuery

        check_connection(self._by_lower_name())
        spark = self._df.sparkSession
        jvm = jvm_of(
            spark,
            "A real-time write to Kinesis",
            "Write from a classic session (kinesis_spark.configure(SparkSession.builder).getOrCreate()), or "
            "from Scala or Java with io.kinesisspark.sink.KinesisForeachWriter.",
        )
        writer_class = jvm_class(jvm, _FOREACH_WRITER)
        if tuple(int(p) for p in spark.version.split(".")[:2]) < (4, 1):
            raise KinesisSparkError(
                f"real_time needs Spark 4.1 or later (Spark's real-time mode); this session runs Spark "
                f"{spark.version}. Use processing_time for low-latency micro-batches."
            )
        options = jvm.java.util.HashMap()
        for key, value in self._spark_options().items():
            options.put(key, value)
        jdf = self._df._jdf
        with translate_errors():
            stream_writer = (
                jdf.writeStream()
                .foreach(writer_class(jdf.schema(), options))
                .outputMode("update")
                .trigger(jvm.org.apache.spark.sql.streaming.Trigger.RealTime(interval))
            )
            if checkpoint_location is not None:
                stream_writer = stream_writer.option("checkpointLocation", checkpoint_location)
            if query_name is not None:
                stream_writer = stream_writer.queryName(query_name)
            return StreamingQuery(stream_writer.start())

    def save(self) -> None:
        """Write the (batch) ``DataFrame`` to Kinesis; returns when every row is written.

        Raises
        ------
        KinesisOptionError
            If the options are refused, in Python or by the connector.
        """
        writer = self.batch_writer().mode("append")
        with translate_errors():
            writer.save()


def _interval(value: timedelta | str, name: str) -> str:
    """Spark's interval syntax for a trigger ("5 seconds"), not the options' duration strings."""
    if isinstance(value, timedelta):
        return f"{value // timedelta(milliseconds=1)} milliseconds"
    return render_text(name, value)
