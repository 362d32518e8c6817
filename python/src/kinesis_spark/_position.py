"""``InitialPosition``: where a query without a checkpoint starts reading (option ``initialPosition``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from . import _option_keys as keys
from ._catalog import entry, invalid_option
from ._values import LONG_MAX, java_trim

__all__ = ["InitialPosition", "check_initial_position", "is_per_shard"]

# java.text.SimpleDateFormat syntax, the one the connector reads "format" in: milliseconds and an ISO offset.
_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
_PER_SHARD_KEYS = ("default", "shards", "streams")


def _accepted() -> str:
    # What initialPosition accepts, as the option catalog says it.
    return entry("source", keys.INITIAL_POSITION).accepted


_NAMES = ("latest", "trim_horizon", "earliest")
_SEQUENCE_KEYS = ("at_sequence_number", "after_sequence_number")
# Beside a sequence number: a user record's index inside its KPL aggregate.
_SUB_SEQUENCE_KEY = "sub_sequence_number"
# Per shard only: a closed shard read to its end.
_SHARD_END = "shard_end"


@dataclass(frozen=True)
class InitialPosition:
    """Where a query that has no checkpoint starts reading.

    Create one with :meth:`latest`, :meth:`trim_horizon` (alias :meth:`earliest`) or :meth:`at_timestamp`
    and pass it to :meth:`kinesis_spark.KinesisReader.initial_position`. To continue where another consumer
    stopped, give shards their own positions with :meth:`per_shard` (:meth:`at_sequence_number`,
    :meth:`after_sequence_number` and :meth:`shard_end` are positions of one shard). A restarted query always
    continues from its checkpoint instead.

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

    @classmethod
    def at_sequence_number(
        cls, sequence_number: str, sub_sequence_number: int | None = None
    ) -> InitialPosition:
        """Start one shard at the record with ``sequence_number``.

        Every user record of a KPL aggregate, or from user record ``sub_sequence_number`` of it on. Only for
        :meth:`per_shard`: a sequence number belongs to one shard.

        Examples
        --------
        >>> InitialPosition.at_sequence_number("4959", sub_sequence_number=2)
        InitialPosition('{"at_sequence_number": "4959", "sub_sequence_number": 2}')
        """
        return cls(json.dumps(_sequence_position("at_sequence_number", sequence_number, sub_sequence_number)))

    @classmethod
    def after_sequence_number(
        cls, sequence_number: str, sub_sequence_number: int | None = None
    ) -> InitialPosition:
        """Start one shard after the record with ``sequence_number`` (the last one another consumer read).

        With ``sub_sequence_number``, after that user record of its KPL aggregate (a consumer that stopped
        inside one): the aggregate's later user records come first. Only for :meth:`per_shard`: a sequence
        number belongs to one shard.
        """
        return cls(
            json.dumps(_sequence_position("after_sequence_number", sequence_number, sub_sequence_number))
        )

    @classmethod
    def shard_end(cls) -> InitialPosition:
        """Mark one closed shard as read to its end: none of it is read, its children from their beginning.

        Only for :meth:`per_shard`: where another consumer finished a shard before it was split or merged.

        >>> InitialPosition.shard_end()
        InitialPosition('shard_end')
        """
        return cls(_SHARD_END)

    @classmethod
    def per_shard(
        cls,
        shards: Mapping[str, InitialPosition] | None = None,
        *,
        streams: Mapping[str, Mapping[str, InitialPosition]] | None = None,
        default: InitialPosition | None = None,
    ) -> InitialPosition:
        """Give shards positions of their own; the others start at ``default`` (latest when not given).

        Parameters
        ----------
        shards : Mapping[str, InitialPosition], optional
            Shard id to position, when the query reads one stream.
        streams : Mapping[str, Mapping[str, InitialPosition]], optional
            Stream name to (shard id to position), when it reads several.
        default : InitialPosition, optional
            Where the other shards start: latest, trim_horizon or at_timestamp.

        Examples
        --------
        >>> print(InitialPosition.per_shard(
        ...     {"shardId-000000000000": InitialPosition.after_sequence_number("49590338271490256608559692538361571095921575989136588898")},
        ...     default=InitialPosition.trim_horizon()))
        {"default": "trim_horizon", "shards": {"shardId-000000000000": {"after_sequence_number": "49590338271490256608559692538361571095921575989136588898"}}}
        """  # noqa: E501
        value: dict[str, Any] = {}
        if default is not None:
            value["default"] = _json_value(default)
        if shards is not None:
            value["shards"] = {shard: _json_value(p) for shard, p in shards.items()}
        if streams is not None:
            value["streams"] = {
                stream: {shard: _json_value(p) for shard, p in positions.items()}
                for stream, positions in streams.items()
            }
        text = json.dumps(value)
        check_initial_position(text)
        return cls(text)

    def __str__(self) -> str:
        return self.option_value

    def __repr__(self) -> str:
        return f"InitialPosition({self.option_value!r})"


def _sequence_number(sequence_number: str) -> str:
    if not isinstance(sequence_number, str) or not sequence_number.isascii() or not sequence_number.isdigit():
        raise ValueError(f"a Kinesis sequence number is a string of decimal digits, not {sequence_number!r}")
    return sequence_number


def _is_sub_sequence_number(value: object) -> bool:
    # A JSON whole number the JVM reads into a long: no bool (a Python int), no float, none below 0.
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LONG_MAX


def _sequence_position(key: str, sequence_number: str, sub_sequence_number: int | None) -> dict[str, Any]:
    position: dict[str, Any] = {key: _sequence_number(sequence_number)}
    if sub_sequence_number is not None:
        if not _is_sub_sequence_number(sub_sequence_number):
            raise ValueError(
                f"a sub-sequence number is a whole number of at least 0, not {sub_sequence_number!r}"
            )
        position[_SUB_SEQUENCE_KEY] = sub_sequence_number
    return position


def _json_value(position: InitialPosition) -> Any:
    if not isinstance(position, InitialPosition):
        raise TypeError(f"InitialPosition.per_shard takes InitialPosition values, got {position!r}")
    text = position.option_value
    return json.loads(text) if text.startswith("{") else text


def _compact(value: Any) -> str:
    """JSON as json4s's ``compact`` writes it (no spaces), for messages that quote part of the option."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def check_initial_position(value: str, streams: Sequence[str] | None = None) -> None:
    """``InitialPosition.parse`` of the JVM, except the timestamp itself, which only ``SimpleDateFormat`` reads.

    ``streams`` are the names the query reads; without them, what depends on them is not checked.

    Examples
    --------
    >>> check_initial_position('{"at_timestamp": 5}')
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value '{"at_timestamp": 5}' for option 'initialPosition': expected a string field "at_timestamp"; 'latest', ...
    """  # noqa: E501
    option = keys.INITIAL_POSITION
    text = java_trim(value)
    if not text.startswith("{"):
        if text.lower() not in _NAMES:
            raise invalid_option(option, value, _accepted())
        return
    # Like Jackson, read the first JSON value and ignore what follows it.
    try:
        fields, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        fields = None
    if not isinstance(fields, dict):
        raise invalid_option(option, text, _accepted())
    if any(k in _PER_SHARD_KEYS for k in fields):
        _check_per_shard(text, fields, streams)
    else:
        _check_at_timestamp(text, fields)


def is_per_shard(value: str) -> bool:
    """Whether a valid option value gives positions per shard (JSON with "default", "shards" or "streams").

    >>> is_per_shard('{"default": "latest"}'), is_per_shard("trim_horizon")
    (True, False)
    """
    text = java_trim(value)
    if not text.startswith("{"):
        return False
    try:
        fields, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return False
    return isinstance(fields, dict) and any(k in _PER_SHARD_KEYS for k in fields)


def _check_at_timestamp(text: str, fields: Mapping[str, Any]) -> None:
    option = keys.INITIAL_POSITION
    if not isinstance(fields.get("at_timestamp"), str):
        raise invalid_option(option, text, f'a string field "at_timestamp"; {_accepted()}')
    if "format" in fields and not isinstance(fields["format"], str):
        raise invalid_option(option, text, '"format" to be a string')


def _check_per_shard(text: str, fields: Mapping[str, Any], streams: Sequence[str] | None) -> None:
    def fail(what: str) -> Exception:
        return invalid_option(keys.INITIAL_POSITION, text, what)

    for key in fields:
        if key not in _PER_SHARD_KEYS:
            raise fail(
                f'no field "{key}" beside "default", "shards" and "streams" '
                '(a stream-wide "at_timestamp" goes in "default")'
            )
    if "default" in fields:
        default = fields["default"]
        if _position(default, 'the "default" position', text) in ("sequence", _SHARD_END):
            raise fail(
                f'"default" to be latest, trim_horizon or at_timestamp, not {_compact(default)}: '
                "a sequence number or shard_end belongs to one shard"
            )

    def check_shards(stream: str, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise fail(f"{where} to be an object of shard id to position, not {_compact(value)}")
        for shard, position in value.items():
            if java_trim(shard) == "":
                raise fail(f"shard ids in {where} that are not empty")
            _position(position, f"the position of shard '{shard}' of stream '{stream}'", text)

    if "shards" in fields and streams is not None:
        if len(streams) != 1:
            raise fail(
                '"streams": {"<stream>": {"<shard id>": ...}} instead of "shards" when reading several '
                f"streams ({', '.join(streams)})"
            )
        check_shards(streams[0], fields["shards"], '"shards"')
    if "streams" in fields:
        by_stream = fields["streams"]
        if not isinstance(by_stream, dict):
            raise fail(f'"streams" to be an object of stream name to shards, not {_compact(by_stream)}')
        for stream, shards in by_stream.items():
            if streams is not None and stream not in streams:
                among = ", ".join(streams)
                raise fail(f"stream names in \"streams\" among those read ({among}), not '{stream}'")
            check_shards(stream, shards, f"stream '{stream}' of \"streams\"")
    if streams is not None and len(streams) == 1 and isinstance(fields.get("shards"), dict):
        by_stream = fields.get("streams")
        named = by_stream.get(streams[0], {}) if isinstance(by_stream, dict) else {}
        for shard in fields["shards"]:
            if isinstance(named, dict) and shard in named:
                raise fail(f"one position per shard, not 2 for shard '{shard}' of stream '{streams[0]}'")


def _position(value: Any, what: str, text: str) -> str:
    """Check one position; return its kind: "name", "timestamp", "sequence" or "shard_end"."""
    expected = (
        f"""{what} to be 'latest', 'trim_horizon', 'earliest', {{"at_timestamp": ..., "format": ...}}, """
        f"""{{"at_sequence_number": "<n>"}} or {{"after_sequence_number": "<n>"}} (either with """
        f""""{_SUB_SEQUENCE_KEY}": <i> inside a KPL aggregate) or '{_SHARD_END}', not {_compact(value)}"""
    )
    option = keys.INITIAL_POSITION
    if isinstance(value, str) and java_trim(value).lower() == _SHARD_END:
        return _SHARD_END
    if isinstance(value, str):
        if java_trim(value).lower() not in _NAMES:
            raise invalid_option(option, text, expected)
        return "name"
    if not isinstance(value, dict):
        raise invalid_option(option, text, expected)
    sequence_keys = [k for k in _SEQUENCE_KEYS if k in value]
    sequence_fields = len(value) - (_SUB_SEQUENCE_KEY in value)
    if sequence_fields == 1 and len(sequence_keys) == 1 and isinstance(value[sequence_keys[0]], str):
        seq = value[sequence_keys[0]]
        if not seq or len(seq) > 128 or not all("0" <= c <= "9" for c in seq):
            digits = f"{what} to hold a sequence number of 1 to 128 digits, not '{seq}'"
            raise invalid_option(option, text, digits)
        sub = value.get(_SUB_SEQUENCE_KEY, 0)
        if not _is_sub_sequence_number(sub):
            whole = (
                f'{what} to hold a "{_SUB_SEQUENCE_KEY}" that is a whole number of at least 0 (a user '
                f"record's index in its KPL aggregate), not {_compact(sub)}"
            )
            raise invalid_option(option, text, whole)
        return "sequence"
    if not sequence_keys and "at_timestamp" in value and _SUB_SEQUENCE_KEY not in value:
        _check_at_timestamp(text, value)
        return "timestamp"
    raise invalid_option(option, text, expected)
