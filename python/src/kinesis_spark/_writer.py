"""``KinesisWriter``: writes a DataFrame's rows to a Kinesis data stream with the connector's sink."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, ClassVar

from . import _option_keys as keys
from ._connection_options import TEXT_CHECKS, check_connection
from ._option_checks import ValueCheck, ValueChecks
from ._options_builder import OptionsBuilder
from ._translate import translate_errors
from ._values import render_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameWriter
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = ["KinesisWriter"]


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

        Returns
        -------
        StreamingQuery

        Raises
        ------
        KinesisOptionError
            If the options are refused, in Python or by the connector.
        """
        writer = self.stream_writer()
        if checkpoint_location is not None:
            writer = writer.option("checkpointLocation", checkpoint_location)
        if query_name is not None:
            writer = writer.queryName(query_name)
        if processing_time is not None and available_now:
            raise ValueError("start() takes processing_time or available_now, not both")
        if isinstance(processing_time, timedelta):
            # Spark's interval syntax ("5 seconds"), not the options' duration strings.
            processing_time = f"{processing_time // timedelta(milliseconds=1)} milliseconds"
        if processing_time is not None:
            writer = writer.trigger(processingTime=render_text("processing_time", processing_time))
        elif available_now:
            writer = writer.trigger(availableNow=True)
        with translate_errors():
            return writer.start()

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
