"""``InitialPosition``: where a query without a checkpoint starts reading (option ``initialPosition``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone

from . import _option_keys as keys
from ._values import java_trim
from .errors import invalid_option

__all__ = ["InitialPosition", "check_initial_position"]

# java.text.SimpleDateFormat syntax, the one the connector reads "format" in: milliseconds and an ISO offset.
_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
_DEFAULT_FORMAT = "MM/dd/yyyy HH:mm:ss ZZZ"
_ACCEPTED = (
    """'latest', 'trim_horizon', 'earliest', or JSON {"at_timestamp": "06/25/2020 10:23:45 PDT"} with an """
    f"""optional "format" field (default "{_DEFAULT_FORMAT}")"""
)


@dataclass(frozen=True)
class InitialPosition:
    """Where a query that has no checkpoint starts reading.

    Create one with :meth:`latest`, :meth:`trim_horizon` (alias :meth:`earliest`) or :meth:`at_timestamp`
    and pass it to :meth:`kinesis_spark.KinesisReader.initial_position`. A restarted query always continues
    from its checkpoint instead.

    Attributes
    ----------
    option_value : str
        The value of option ``initialPosition`` that stands for this position.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> InitialPosition.trim_horizon()
    InitialPosition('trim_horizon')
    >>> print(InitialPosition.at_timestamp(datetime(2020, 6, 25, 17, 23, 45, 120000, tzinfo=timezone.utc)))
    {"at_timestamp": "2020-06-25T17:23:45.120Z", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"}
    """

    option_value: str

    @classmethod
    def latest(cls) -> InitialPosition:
        """Start with the records that arrive after the query first starts (the default).

        The start time is kept in the first offset, so a query that fails before its first batch completes
        does not skip what arrived in between.
        """
        return cls("latest")

    @classmethod
    def trim_horizon(cls) -> InitialPosition:
        """Start with the oldest record still in each shard."""
        return cls("trim_horizon")

    @classmethod
    def earliest(cls) -> InitialPosition:
        """Start with the oldest record still in each shard, like :meth:`trim_horizon`."""
        return cls.trim_horizon()

    @classmethod
    def at_timestamp(cls, when: datetime) -> InitialPosition:
        r"""Start with the records whose approximate arrival time is at or after ``when`` (to the ms).

        Parameters
        ----------
        when : datetime
            A timezone-aware ``datetime``; a naive one is refused, since it could mean any time zone.

        Returns
        -------
        InitialPosition

        Raises
        ------
        TypeError
            If ``when`` is not a ``datetime``.
        ValueError
            If ``when`` has no time zone.

        Examples
        --------
        >>> from datetime import datetime, timedelta, timezone
        >>> cet = timezone(timedelta(hours=1))
        >>> InitialPosition.at_timestamp(datetime(2024, 1, 31, 23, 30, tzinfo=cet)).option_value
        '{"at_timestamp": "2024-01-31T22:30:00.000Z", "format": "yyyy-MM-dd\'T\'HH:mm:ss.SSSXXX"}'
        """
        if not isinstance(when, datetime):
            raise TypeError(f"InitialPosition.at_timestamp takes a datetime, got {when!r}")
        if when.tzinfo is None or when.utcoffset() is None:
            raise ValueError(
                f"InitialPosition.at_timestamp needs a timezone-aware datetime, got the naive {when!r}: "
                "add tzinfo, e.g. when.replace(tzinfo=timezone.utc) or when.astimezone()"
            )
        utc = when.astimezone(timezone.utc)
        stamp = utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
        return cls(json.dumps({"at_timestamp": stamp, "format": _TIMESTAMP_FORMAT}))

    def __str__(self) -> str:
        return self.option_value

    def __repr__(self) -> str:
        return f"InitialPosition({self.option_value!r})"


def check_initial_position(value: str) -> None:
    """``InitialPosition.parse`` of the JVM, except the timestamp itself, which only ``SimpleDateFormat`` reads.

    Examples
    --------
    >>> check_initial_position('{"at_timestamp": 5}')
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value '{"at_timestamp": 5}' for option 'initialPosition': expected a string field "at_timestamp"; 'latest', ...
    """  # noqa: E501
    option = keys.INITIAL_POSITION
    text = java_trim(value)
    if text.lower() in ("latest", "trim_horizon", "earliest"):
        return
    if not text.startswith("{"):
        raise invalid_option(option, value, _ACCEPTED)
    # Like Jackson, read the first JSON value and ignore what follows it.
    try:
        fields, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        fields = None
    if not isinstance(fields, dict):
        raise invalid_option(option, text, _ACCEPTED)
    if not isinstance(fields.get("at_timestamp"), str):
        raise invalid_option(option, text, f'a string field "at_timestamp"; {_ACCEPTED}')
    if "format" in fields and not isinstance(fields["format"], str):
        raise invalid_option(option, text, '"format" to be a string')
