"""Option values read as the connector's JVM side reads them: Java's and Spark's syntax of numbers and sizes.

Each ``check_*`` function takes the option's name, its value as the string Spark would pass to the connector,
and the option's bounds and ``accepted`` text from the option catalog (:mod:`kinesis_spark._catalog`), and
raises :class:`~kinesis_spark.errors.KinesisOptionError` with the JVM's message when the JVM would refuse it
(``OptionValues.parseLong``/``parseDouble``/``parseDuration``/``parseBytes``/``parseBoolean``,
``ConnectionOptions.parseRegion``/``parseUrl``). They never refuse what the JVM accepts: where the JVM's rules
cannot be reproduced exactly (a ``java.net.URI`` host), they check less and leave the rest to the JVM, whose
error is translated into the same exception at ``load()``.

The ``render_*`` functions turn typed Python values into such strings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

from ._catalog import invalid_option

__all__ = [
    "LONG_MAX",
    "check_boolean",
    "check_bytes",
    "check_choice",
    "check_decimal",
    "check_duration",
    "check_long",
    "check_region",
    "check_url",
    "java_trim",
    "render_boolean",
    "render_bytes",
    "render_decimal",
    "render_duration",
    "render_long",
    "render_text",
]

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)

# java.lang.String.trim() removes every character up to U+0020, and nothing else.
_JAVA_WHITESPACE = "".join(chr(c) for c in range(0x21))

# Long.parseLong: an optional sign and decimal digits (Character.digit accepts every Unicode decimal digit).
_LONG = re.compile(r"[+-]?\d+")
# Double.parseDouble (FloatingDecimal): decimal or hex notation, an optional f/d suffix, NaN, Infinity.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?")
_HEX_DECIMAL = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?")
_NAMED_DECIMAL = re.compile(r"[+-]?(?:NaN|Infinity)")

# JavaUtils.timeStringAs / byteStringAs (Spark): a number and an optional lower-case unit.
_DURATION = re.compile(r"(-?[0-9]+)([a-z]+)?")
_DURATION_UNIT_US = {"us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "min": 60_000_000}
_DURATION_UNIT_US |= {"h": 3_600_000_000, "d": 86_400_000_000}
_BYTES = re.compile(r"([0-9]+)([a-z]+)?")
_BYTE_UNITS = {"b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30}
_BYTE_UNITS |= {"t": 2**40, "tb": 2**40, "p": 2**50, "pb": 2**50}

_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-[0-9]+")
_URL_SCHEMES = ("http", "https")


def java_trim(value: str) -> str:
    r"""Strip characters up to U+0020 from both ends, as Java's ``String.trim()`` does.

    Examples
    --------
    >>> java_trim("\t 10s \n")
    '10s'
    """
    return value.strip(_JAVA_WHITESPACE)


def check_long(option: str, value: str, minimum: int, maximum: int, accepted: str) -> int:
    """``OptionValues.parseLong``: an integer in [``minimum``, ``maximum``]; ``,`` and ``_`` ignored.

    Examples
    --------
    >>> check_long("coalesceBinSize", "128_000_000", 1, LONG_MAX, "an integer of at least 1")
    128000000
    >>> check_long("maxShardsPerDescribe", "0", 1, 10000, "an integer from 1 to 10000")
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value '0' for option 'maxShardsPerDescribe': expected an integer from 1 to 10000.
    """  # noqa: E501
    digits = java_trim(value).replace(",", "").replace("_", "")
    if _LONG.fullmatch(digits) is None:
        raise invalid_option(option, value, accepted)
    number = int(digits)
    if not LONG_MIN <= number <= LONG_MAX or not minimum <= number <= maximum:
        raise invalid_option(option, value, accepted)
    return number


def check_decimal(option: str, value: str, exclusive_minimum: float, maximum: float, accepted: str) -> float:
    """``OptionValues.parseDouble``: a decimal number in (``exclusive_minimum``, ``maximum``].

    Examples
    --------
    >>> check_decimal("maxFetchRate", "1.5", 0.0, 2.0, "a decimal number greater than 0.0 and at most 2.0")
    1.5
    >>> check_decimal("maxFetchRate", "0", 0.0, 2.0, "a decimal number greater than 0.0 and at most 2.0")
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value '0' for option 'maxFetchRate': expected a decimal number greater than 0.0 and at most 2.0.
    """  # noqa: E501
    text = java_trim(value)
    if _DECIMAL.fullmatch(text):
        number = float(text.rstrip("fFdD"))
    elif _HEX_DECIMAL.fullmatch(text):
        number = float.fromhex(text.rstrip("fFdD"))
    elif _NAMED_DECIMAL.fullmatch(text):
        number = float(text)
    else:
        raise invalid_option(option, value, accepted)
    if number != number or number <= exclusive_minimum or number > maximum:  # NaN is refused too
        raise invalid_option(option, value, accepted)
    return number


def check_duration(option: str, value: str, minimum_ms: int, accepted: str) -> int:
    """``OptionValues.parseDuration``: a Spark duration string of at least ``minimum_ms``; returns ms.

    A bare number means milliseconds; units are ``us``, ``ms``, ``s``, ``m``/``min``, ``h`` and ``d``.

    Examples
    --------
    >>> check_duration("minFetchPeriod", "2m", 200, "a duration of at least 200ms")
    120000
    >>> check_duration("minFetchPeriod", "100ms", 200, "a duration of at least 200ms")
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value '100ms' for option 'minFetchPeriod': expected a duration of at least 200ms.
    """  # noqa: E501
    found = _DURATION.fullmatch(java_trim(java_trim(value).lower()))
    if found is None:
        raise invalid_option(option, value, accepted)
    number, unit = int(found[1]), found[2] or "ms"
    if not LONG_MIN <= number <= LONG_MAX or unit not in _DURATION_UNIT_US:
        raise invalid_option(option, value, accepted)
    micros = number * _DURATION_UNIT_US[unit]
    # TimeUnit.convert truncates toward zero (and saturates, which the bound check below makes moot).
    ms = abs(micros) // 1000 * (1 if micros >= 0 else -1)
    if ms < minimum_ms:
        raise invalid_option(option, value, accepted)
    return ms


def check_bytes(option: str, value: str, accepted: str) -> int:
    """``OptionValues.parseBytes``: a positive Spark byte size (binary units); returns bytes.

    Examples
    --------
    >>> check_bytes("maxBytesPerTrigger", "10mb", "a positive byte size")
    10485760
    >>> check_bytes("fetchBufferSize", "1.5gb", "a positive byte size")
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value '1.5gb' for option 'fetchBufferSize': expected a positive byte size.
    """  # noqa: E501
    found = _BYTES.fullmatch(java_trim(java_trim(value).lower()))
    if found is None:
        raise invalid_option(option, value, accepted)
    number, unit = int(found[1]), found[2] or "b"
    if number > LONG_MAX or unit not in _BYTE_UNITS:
        raise invalid_option(option, value, accepted)
    size = number * _BYTE_UNITS[unit]
    if size > LONG_MAX or size <= 0:  # ByteUnit refuses to overflow a long
        raise invalid_option(option, value, accepted)
    return size


def check_boolean(option: str, value: str, accepted: str) -> bool:
    """``OptionValues.parseBoolean``: ``true`` or ``false``, in any case.

    Examples
    --------
    >>> check_boolean("failOnDataLoss", " FALSE ", "'true' or 'false'")
    False
    """
    text = java_trim(value).lower()
    if text not in ("true", "false"):
        raise invalid_option(option, value, accepted)
    return text == "true"


def check_choice(option: str, value: str, words: Sequence[str], accepted: str) -> str:
    """``OptionKind.Choice``: one of ``words``, in any case; returns the word in lower case.

    Examples
    --------
    >>> check_choice("consumerMode", " EFO", ["polling", "efo"], "'polling' or 'efo'")
    'efo'
    """
    word = java_trim(value).lower()
    if word not in words:
        raise invalid_option(option, value, accepted)
    return word


def check_region(option: str, value: str, accepted: str) -> str:
    """``ConnectionOptions.parseRegion``: an AWS region name; returns it trimmed.

    Examples
    --------
    >>> check_region("region", "eu-west-1 ", "an AWS region name")
    'eu-west-1'
    """
    region = java_trim(value)
    if _REGION.fullmatch(region) is None:
        raise invalid_option(option, value, accepted)
    return region


def check_url(option: str, value: str, accepted: str) -> None:
    """``ConnectionOptions.parseUrl``, in part: an ``http://`` or ``https://`` URL with a host.

    ``java.net.URI`` refuses some hosts that Python accepts (an ``_`` in a name, for one); those are left
    to the JVM.

    Examples
    --------
    >>> check_url("endpoint", "localhost:4566", "an http:// or https:// URL")
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value 'localhost:4566' for option 'endpoint': expected an http:// or https:// URL.
    """  # noqa: E501
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(java_trim(value))
        host = parts.hostname
    except ValueError:
        host = None
    else:
        host = host if parts.scheme.lower() in _URL_SCHEMES else None
    if not host:
        raise invalid_option(option, value, accepted)


def render_boolean(option: str, value: bool) -> str:
    """Render a bool as ``"true"`` or ``"false"``; anything else is a :class:`TypeError` naming the option."""
    if not isinstance(value, bool):
        raise _wrong_type(option, value, "a bool")
    return "true" if value else "false"


def render_long(option: str, value: int) -> str:
    """Render a Python ``int`` (not a bool) as the option's string."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(option, value, "an int")
    return str(value)


def render_decimal(option: str, value: float) -> str:
    """Render a ``float`` or ``int`` as the option's string (``repr``, which Java reads back exactly)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _wrong_type(option, value, "a float")
    return repr(float(value))


def render_bytes(option: str, value: int | str) -> str:
    """Render a size in bytes (``int``); pass a Spark byte string such as ``"10mb"`` as it is.

    Examples
    --------
    >>> render_bytes("maxBytesPerTrigger", 1024), render_bytes("maxBytesPerTrigger", "10mb")
    ('1024', '10mb')
    """
    if isinstance(value, str):
        return value
    return render_long(option, value)


def render_duration(option: str, value: timedelta | str) -> str:
    """Render a ``timedelta`` in the largest exact unit; pass a Spark duration string as it is.

    Examples
    --------
    >>> from datetime import timedelta
    >>> [render_duration("o", timedelta(**kw)) for kw in ({"minutes": 2}, {"seconds": 1.5}, {"hours": 36})]
    ['2m', '1500ms', '36h']
    >>> render_duration("o", timedelta(microseconds=1500))
    '1500us'
    """
    if isinstance(value, str):
        return value
    if not isinstance(value, timedelta):
        raise _wrong_type(option, value, "a datetime.timedelta or a duration string such as '10s'")
    micros = value // timedelta(microseconds=1)
    if micros == 0:
        return "0ms"
    for unit in ("h", "m", "s", "ms"):
        size = _DURATION_UNIT_US[unit]
        if micros % size == 0:
            return f"{micros // size}{unit}"
    return f"{micros}us"


def render_text(option: str, value: object) -> str:
    """Pass a ``str`` as it is; anything else is a :class:`TypeError` naming the option."""
    if not isinstance(value, str):
        raise _wrong_type(option, value, "a str")
    return value


def _wrong_type(option: str, value: object, expected: str) -> TypeError:
    return TypeError(f"option '{option}' takes {expected}, got {value!r} ({type(value).__name__})")
