"""Checks of the source's own options, mirroring the JVM's ``KinesisSourceOptions.parse``.

:data:`VALUE_CHECKS` refuse a bad value as soon as it is set; :func:`check_source` refuses what only the whole
set of options shows (no stream, ARNs in another region, connection combinations) when ``load()`` is called.
Options with awslabs names (``kinesis.*``) are translated by the JVM before it checks them, so when any is
present the combination checks are left to the JVM.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from . import _option_keys as keys
from ._catalog import entry, invalid_option, missing_option
from ._connection_options import TEXT_CHECKS as CONNECTION_TEXT_CHECKS
from ._connection_options import VALUE_CHECKS as CONNECTION_CHECKS
from ._connection_options import check_connection
from ._option_checks import ValueCheck, ValueChecks
from ._position import check_initial_position
from ._switching_options import TEXT_CHECKS as SWITCHING_TEXT_CHECKS
from ._switching_options import check_switching
from ._values import java_trim

__all__ = ["VALUE_CHECKS", "StreamRef", "check_source", "parse_streams"]

_STREAM_NAME = re.compile(r"[a-zA-Z0-9_.-]{1,128}")
_STREAM_ARN = re.compile(
    r"arn:(aws[a-z-]*):kinesis:([a-z]{2}(?:-[a-z]+)+-[0-9]+):([0-9]{12}):stream/([a-zA-Z0-9_.-]{1,128})"
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
            raise invalid_option(keys.STREAM_NAME, value, _streams_accepted())
    if not refs:
        raise missing_option(keys.STREAM_NAME, "a Kinesis stream name, or a comma-separated list")
    names = [ref.name for ref in refs]
    if len(set(names)) != len(names):
        raise invalid_option(keys.STREAM_NAME, value, "each stream listed once (by name or ARN)")
    return refs


def _streams_accepted() -> str:
    return entry("source", keys.STREAM_NAME).accepted


#: Lower-cased option name -> check of one value (raises KinesisOptionError): the catalog's source, enhanced
#: fan-out and connection options, with the stream list, the initial position and the connection's text
#: options checked by code.
VALUE_CHECKS: Mapping[str, ValueCheck] = ValueChecks(
    ("source", "efo", "kclLeaseTable", "awslabsCheckpoint", "dynamoDb", "connection"),
    {
        **CONNECTION_TEXT_CHECKS,
        **SWITCHING_TEXT_CHECKS,
        keys.STREAM_NAME: lambda _, value: parse_streams(value),
        keys.INITIAL_POSITION: lambda _, value: check_initial_position(value),
    },
)


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
    region = str(CONNECTION_CHECKS[keys.REGION.lower()](region_option)) if region_option is not None else None
    region = region or (arn_regions[0] if arn_regions else None)
    if any(arn_region != region for arn_region in arn_regions) or len(arn_regions) > 1:
        raise invalid_option(
            keys.STREAM_NAME,
            streams,
            f"stream ARNs in the region the query connects to ({region}), like the option 'region'",
        )
    check_switching(options, len(refs))
