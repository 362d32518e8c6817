"""Checks of the source's own options, mirroring the JVM's ``KinesisSourceOptions.parse``.

:data:`VALUE_CHECKS` refuse a bad value as soon as it is set; :func:`check_source` refuses what only the whole
set of options shows (no stream, ARNs in another region, connection combinations) when ``load()`` is called.
Options with awslabs names (``kinesis.*``) are translated by the JVM before it checks them, so when any is
present the combination checks are left to the JVM.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import _option_keys as keys
from ._connection_options import VALUE_CHECKS as CONNECTION_CHECKS
from ._connection_options import check_connection
from ._error_types import invalid_option, missing_option
from ._position import check_initial_position
from ._values import (
    INT_MAX,
    LONG_MAX,
    check_boolean,
    check_bytes,
    check_decimal,
    check_duration,
    check_long,
    check_region,
    java_trim,
)

__all__ = ["VALUE_CHECKS", "StreamRef", "check_source", "parse_streams"]

# Limits of Kinesis, as the JVM states them.
_MAX_RECORDS_PER_FETCH = 10000
_MAX_SHARDS_PER_DESCRIBE = 10000
_MAX_FETCH_RATE_MBS = 2.0
_MIN_FETCH_PERIOD_MS = 200

_STREAM_NAME = re.compile(r"[a-zA-Z0-9_.-]{1,128}")
_STREAM_ARN = re.compile(
    r"arn:(aws[a-z-]*):kinesis:([a-z]{2}(?:-[a-z]+)+-[0-9]+):([0-9]{12}):stream/([a-zA-Z0-9_.-]{1,128})"
)
_STREAMS_ACCEPTED = (
    "comma-separated stream names (1-128 characters from a-z, A-Z, 0-9, '_', '-' and '.') or stream ARNs "
    "('arn:aws:kinesis:<region>:<account>:stream/<name>')"
)


@dataclass(frozen=True)
class StreamRef:
    """A stream given by name, or by ARN (then with the ARN's region)."""

    name: str
    arn_region: str | None = None


def parse_streams(value: str) -> list[StreamRef]:
    """Parse option ``streamName``: names and ARNs, comma-separated, each listed once.

    Examples
    --------
    >>> parse_streams("clicks, arn:aws:kinesis:eu-west-1:123456789012:stream/orders")
    [StreamRef(name='clicks', arn_region=None), StreamRef(name='orders', arn_region='eu-west-1')]
    """
    # String.split of Java: trailing empty strings are dropped, unless nothing matched at all.
    parts = value.split(",")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] and "," in value:
        parts = []
    refs: list[StreamRef] = []
    for part in map(java_trim, parts):
        arn = _STREAM_ARN.fullmatch(part)
        if arn is not None:
            refs.append(StreamRef(arn[4], arn[2]))
        elif _STREAM_NAME.fullmatch(part) is not None:
            refs.append(StreamRef(part))
        else:
            raise invalid_option(keys.STREAM_NAME, value, _STREAMS_ACCEPTED)
    if not refs:
        raise missing_option(keys.STREAM_NAME, "a Kinesis stream name, or a comma-separated list")
    names = [ref.name for ref in refs]
    if len(set(names)) != len(names):
        raise invalid_option(keys.STREAM_NAME, value, "each stream listed once (by name or ARN)")
    return refs


def _long(option: str, minimum: int, maximum: int) -> Callable[[str], object]:
    return lambda value: check_long(option, value, minimum, maximum)


def _duration(option: str, minimum_ms: int) -> Callable[[str], object]:
    return lambda value: check_duration(option, value, minimum_ms)


def _boolean(option: str) -> Callable[[str], object]:
    return lambda value: check_boolean(option, value)


def _bytes(option: str) -> Callable[[str], object]:
    return lambda value: check_bytes(option, value)


#: Lower-cased option name -> check of one value (raises KinesisOptionError).
VALUE_CHECKS: Mapping[str, Callable[[str], object]] = {
    **CONNECTION_CHECKS,
    keys.STREAM_NAME.lower(): parse_streams,
    keys.INITIAL_POSITION.lower(): check_initial_position,
    keys.MAX_RECORDS_PER_FETCH.lower(): _long(keys.MAX_RECORDS_PER_FETCH, 1, _MAX_RECORDS_PER_FETCH),
    keys.FAIL_ON_DATA_LOSS.lower(): _boolean(keys.FAIL_ON_DATA_LOSS),
    keys.MAX_FETCH_RATE.lower(): lambda v: check_decimal(keys.MAX_FETCH_RATE, v, 0.0, _MAX_FETCH_RATE_MBS),
    keys.MIN_FETCH_PERIOD.lower(): _duration(keys.MIN_FETCH_PERIOD, _MIN_FETCH_PERIOD_MS),
    keys.MAX_FETCH_DURATION.lower(): _duration(keys.MAX_FETCH_DURATION, 1),
    keys.FETCH_BUFFER_SIZE.lower(): _bytes(keys.FETCH_BUFFER_SIZE),
    keys.SHARDS_PER_TASK.lower(): _long(keys.SHARDS_PER_TASK, 1, INT_MAX),
    keys.SHARD_FETCH_INTERVAL.lower(): _duration(keys.SHARD_FETCH_INTERVAL, 1),
    keys.COALESCE_THRESHOLD_BLOCK_SIZE.lower(): _long(keys.COALESCE_THRESHOLD_BLOCK_SIZE, 1, LONG_MAX),
    keys.COALESCE_BIN_SIZE.lower(): _long(keys.COALESCE_BIN_SIZE, 1, LONG_MAX),
    keys.MAX_SHARDS_PER_DESCRIBE.lower(): _long(keys.MAX_SHARDS_PER_DESCRIBE, 1, _MAX_SHARDS_PER_DESCRIBE),
    keys.MAX_RECORDS_PER_TRIGGER.lower(): _long(keys.MAX_RECORDS_PER_TRIGGER, 1, LONG_MAX),
    keys.MAX_BYTES_PER_TRIGGER.lower(): _bytes(keys.MAX_BYTES_PER_TRIGGER),
    keys.ALLOW_STREAM_REMOVAL.lower(): _boolean(keys.ALLOW_STREAM_REMOVAL),
    keys.INCLUDE_SUB_SEQUENCE_NUMBER.lower(): _boolean(keys.INCLUDE_SUB_SEQUENCE_NUMBER),
}


def check_source(options: Mapping[str, str]) -> None:
    """Refuse a set of source options the JVM would refuse as a whole, with its messages.

    Parameters
    ----------
    options : Mapping[str, str]
        Lower-cased option names to values; every value already passed :data:`VALUE_CHECKS`.

    Raises
    ------
    KinesisOptionError
        No ``streamName``; stream ARNs of another region than the query's; see also
        :func:`kinesis_spark._connection_options.check_connection`.

    Examples
    --------
    >>> check_source({"region": "us-east-1"})
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Option 'streamName' is required: a Kinesis stream name, or a comma-separated list.
    """  # noqa: E501
    if any(key.startswith(keys.AWSLABS_PREFIX) for key in options):
        return
    streams = options.get(keys.STREAM_NAME.lower())
    if streams is None:
        raise missing_option(keys.STREAM_NAME, "a Kinesis stream name, or a comma-separated list")
    refs = parse_streams(streams)
    arn_regions = list(dict.fromkeys(ref.arn_region for ref in refs if ref.arn_region))
    position = options.get(keys.INITIAL_POSITION.lower())
    if position is not None:  # positions per shard name streams, which only the whole set tells
        check_initial_position(position, [ref.name for ref in refs])
    check_connection(options)
    # One client per query serves every stream, so every ARN must name the region the query connects to.
    region_option = options.get(keys.REGION.lower())
    region = check_region(keys.REGION, region_option) if region_option is not None else None
    region = region or (arn_regions[0] if arn_regions else None)
    if any(arn_region != region for arn_region in arn_regions) or len(arn_regions) > 1:
        raise invalid_option(
            keys.STREAM_NAME,
            streams,
            f"stream ARNs in the region the query connects to ({region}), like the option 'region'",
        )
