"""``KinesisConsumerManager``: list, register and deregister enhanced fan-out consumers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ._error_types import KinesisSparkError
from ._jvm import jvm_class, jvm_of
from ._options_builder import OptionsBuilder
from ._translate import translate

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["KinesisConsumer", "KinesisConsumerManager"]

#: The connector's manager class in the JVM.
_JVM_CLASS = "io.kinesisspark.efo.KinesisConsumerManager"


@dataclass(frozen=True)
class KinesisConsumer:
    """One enhanced fan-out consumer of a stream, as Kinesis describes it.

    Attributes
    ----------
    name : str
        The consumer name.
    arn : str
        The consumer's ARN (it changes when a consumer of the same name is registered again).
    status : str
        ``"CREATING"``, ``"ACTIVE"`` or ``"DELETING"``.
    created : datetime
        When the consumer was registered (UTC).

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> created = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> c = KinesisConsumer("reporting", "arn:aws:kinesis:...", "ACTIVE", created)
    >>> c.active
    True
    """

    name: str
    arn: str
    status: str
    created: datetime

    @property
    def active(self) -> bool:
        """Whether the consumer can be subscribed with (its status is ``ACTIVE``)."""
        return self.status == "ACTIVE"


class KinesisConsumerManager(OptionsBuilder):
    """Lists, registers and deregisters the enhanced fan-out consumers of Kinesis streams, outside any query.

    A registered consumer costs money until it is deregistered. A query with ``consumerMode="efo"`` keeps its
    consumer when it stops (unless ``requireConsumerDeregistration`` is true), and a crashed query cannot
    deregister anything: use this class to find and remove such consumers, or to register one ahead of time.
    It calls the connector's JVM manager through the session's Py4J gateway, with the connection options of
    the source, set with :meth:`option` or the connection builders shared with :class:`KinesisReader`
    (:meth:`region`, :meth:`endpoint`, :meth:`credentials`, :meth:`assume_role`, ...). Consumer names are used
    exactly as given: no prefix is added.

    Parameters
    ----------
    spark : SparkSession
        A classic (not Spark Connect) session with the connector jar on its classpath; see
        :func:`kinesis_spark.configure`.

    Examples
    --------
    >>> manager = KinesisConsumerManager(spark).region("us-east-1")
    >>> manager
    KinesisConsumerManager(region='us-east-1')
    >>> [c.name for c in manager.list_consumers("orders")]  # doctest: +SKIP
    ['kinesis_spark_2f0c...', 'reporting']
    >>> manager.register_consumer("orders", "reporting")  # doctest: +SKIP
    'arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/reporting:1767225600'
    >>> manager.deregister_consumer("orders", "reporting")  # doctest: +SKIP
    True
    """

    def __init__(self, spark: SparkSession) -> None:
        super().__init__()
        self._spark = spark
        self._manager: Any = None
        self._made_with: dict[str, str] = {}

    def list_consumers(self, stream: str) -> list[KinesisConsumer]:
        """Every consumer registered on a stream, in any state.

        Parameters
        ----------
        stream : str
            The stream name.

        Returns
        -------
        list of KinesisConsumer

        Raises
        ------
        KinesisSparkError
            If the options are invalid, the stream does not exist, or Kinesis refuses the call.

        Examples
        --------
        >>> for c in KinesisConsumerManager(spark).list_consumers("orders"):  # doctest: +SKIP
        ...     print(c.name, c.status)
        reporting ACTIVE
        """
        consumers = self._call(lambda m: m.listConsumersAsJava(stream))
        return [
            KinesisConsumer(
                name=str(c.name()),
                arn=str(c.arn()),
                status=str(c.status()),
                created=datetime.fromtimestamp(int(c.createdMillis()) / 1000, tz=timezone.utc),
            )
            for c in consumers
        ]

    def register_consumer(self, stream: str, name: str) -> str:
        """Register a consumer (or reuse the one of that name) and wait until it is ``ACTIVE``.

        Parameters
        ----------
        stream : str
            The stream name.
        name : str
            The consumer name: 1 to 128 characters from ``a-z``, ``A-Z``, ``0-9``, ``_``, ``.`` and ``-``.

        Returns
        -------
        str
            The consumer's ARN.

        Raises
        ------
        KinesisSparkError
            If the name is invalid, the stream does not exist, or Kinesis refuses the registration (a stream
            has at most 20 consumers).

        Examples
        --------
        >>> KinesisConsumerManager(spark).register_consumer("orders", "reporting")  # doctest: +SKIP
        'arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/reporting:1767225600'
        """
        return str(self._call(lambda m: m.registerConsumer(stream, name)))

    def deregister_consumer(self, stream: str, name: str) -> bool:
        """Start deregistering a consumer (Kinesis removes it within seconds).

        Parameters
        ----------
        stream : str
            The stream name.
        name : str
            The consumer name, exactly as registered.

        Returns
        -------
        bool
            ``False`` when the stream has no consumer of that name.

        Raises
        ------
        KinesisSparkError
            If the stream does not exist or Kinesis refuses the call.

        Examples
        --------
        >>> KinesisConsumerManager(spark).deregister_consumer("orders", "reporting")  # doctest: +SKIP
        True
        """
        return bool(self._call(lambda m: m.deregisterConsumer(stream, name)))

    def _call(self, action: Any) -> Any:
        """Run ``action`` on the JVM manager (made again when options changed); errors as :mod:`errors`."""
        try:
            options = self._spark_options()
            if self._manager is None or options != self._made_with:
                builder = self._jvm_class().newManager()
                for key, value in options.items():
                    builder = builder.option(key, value)
                self._manager, self._made_with = builder.create(), options
            return action(self._manager)
        except KinesisSparkError:
            raise
        except Exception as exc:
            translated = translate(exc)
            if translated is not exc:
                raise translated from exc
            message = _java_message(exc)
            if message is None:
                raise
            raise KinesisSparkError(message) from exc

    def _jvm_class(self) -> Any:
        jvm = jvm_of(
            self._spark,
            "KinesisConsumerManager",
            "Manage enhanced fan-out consumers from a classic session "
            "(kinesis_spark.configure(SparkSession.builder).getOrCreate()), or with the AWS CLI or boto3 "
            "(aws kinesis list-stream-consumers / register-stream-consumer / deregister-stream-consumer); "
            "queries with consumerMode=efo register and deregister their own consumers on the server.",
        )
        return jvm_class(jvm, _JVM_CLASS)


def _java_message(exc: BaseException) -> str | None:
    """Return the message of the JVM exception behind ``exc`` (converted by PySpark, or a Py4J error)."""
    origin = getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)
    if origin is not None:
        try:
            return str(origin.getMessage())
        except Exception:  # the gateway is gone
            return None
    desc = getattr(exc, "desc", None)
    return str(desc) if desc else None
