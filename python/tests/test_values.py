"""The value checks against the JVM's parsing rules (tests-integration/test_python_options.py asks the
JVM itself), with the bounds and messages of the option catalog where an option is named."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from kinesis_spark import KinesisOptionError
from kinesis_spark._connection_options import VALUE_CHECKS as CONNECTION_CHECKS
from kinesis_spark._source_options import VALUE_CHECKS as SOURCE_CHECKS
from kinesis_spark._source_options import StreamRef, parse_streams
from kinesis_spark._values import (
    LONG_MAX,
    check_boolean,
    check_bytes,
    check_decimal,
    check_duration,
    check_long,
    check_url,
    render_decimal,
    render_duration,
)


def catalog_check(part: str, option: str) -> Callable[[str], object]:
    """The package's check of ``option``: the reader's (source) or every part's (connection)."""
    return (SOURCE_CHECKS if part == "source" else CONNECTION_CHECKS)[option.lower()]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", 1), (" 10000 ", 10000), ("1,000", 1000), ("1_0", 10), ("+7", 7), ("٣", 3)],
)
def test_long_accepts_what_long_parse_long_accepts(value: str, expected: int) -> None:
    assert check_long("o", value, 1, 10000, "x") == expected


@pytest.mark.parametrize("value", ["", "1.0", "1e3", "0x10", "10001", "0", "-1", "one", str(LONG_MAX + 1)])
def test_long_refuses_with_the_range_in_the_message(value: str) -> None:
    with pytest.raises(KinesisOptionError) as info:
        catalog_check("source", "maxRecordsPerFetch")(value)
    expected = (
        f"Invalid value '{value}' for option 'maxRecordsPerFetch': expected an integer from 1 to 10000."
    )
    assert str(info.value) == expected


def test_long_without_upper_bound_says_at_least() -> None:
    with pytest.raises(KinesisOptionError, match=r"expected an integer of at least 1\.$"):
        catalog_check("source", "shardsPerTask")("0")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", 1.0), ("2.0", 2.0), (".5", 0.5), ("5.", 5.0), ("1e0", 1.0), ("1.5d", 1.5), ("0x1p1", 2.0)],
)
def test_decimal_accepts_java_double_syntax(value: str, expected: float) -> None:
    assert check_decimal("o", value, 0.0, 10.0, "x") == expected


@pytest.mark.parametrize("value", ["0", "-1", "2.0000001", "NaN", "Infinity", "inf", "nan", "1_0", "", "1,5"])
def test_decimal_refusals(value: str) -> None:
    with pytest.raises(
        KinesisOptionError, match=r"expected a decimal number greater than 0\.0 and at most 2\.0"
    ):
        catalog_check("source", "maxFetchRate")(value)


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        ("210", 210),
        ("210ms", 210),
        ("1s", 1000),
        (" 2M ", 120000),
        ("2min", 120000),
        ("1h", 3600000),
        ("1d", 86400000),
        ("1500us", 1),
        ("200999us", 200),
    ],
)
def test_duration_units(value: str, ms: int) -> None:
    assert check_duration("o", value, 1, "x") == ms


@pytest.mark.parametrize("value", ["1 s", "1.5s", "s", "1sec", "1w", "", "-1s", "199ms", "199999us"])
def test_duration_refusals_name_the_minimum(value: str) -> None:
    with pytest.raises(KinesisOptionError) as info:
        catalog_check("source", "minFetchPeriod")(value)
    assert str(info.value) == (
        f"Invalid value '{value}' for option 'minFetchPeriod': expected a duration such as '200ms', '1s' or "
        "'2m', of at least 200ms."
    )


@pytest.mark.parametrize(
    ("value", "size"),
    [("1", 1), ("1b", 1), ("1k", 1024), ("1KB", 1024), ("10mb", 10 << 20), ("2g", 2 << 30), ("1pb", 1 << 50)],
)
def test_byte_sizes_are_binary(value: str, size: int) -> None:
    assert check_bytes("o", value, "x") == size


@pytest.mark.parametrize("value", ["0", "0gb", "1.5gb", "-1", "1 mb", "1eb", "10000000pb", "mb"])
def test_byte_size_refusals(value: str) -> None:
    with pytest.raises(KinesisOptionError, match="expected a positive byte size such as '10mb' or '2gb'"):
        catalog_check("source", "fetchBufferSize")(value)


def test_booleans() -> None:
    assert check_boolean("o", "TRUE", "x") is True
    assert check_boolean("o", " false", "x") is False
    with pytest.raises(KinesisOptionError, match="expected 'true' or 'false'"):
        catalog_check("source", "failOnDataLoss")("1")


def test_regions() -> None:
    assert catalog_check("connection", "region")("us-gov-west-1") == "us-gov-west-1"
    for bad in ("us-east", "US-EAST-1", "useast1", ""):
        with pytest.raises(KinesisOptionError, match="expected an AWS region name such as 'us-east-1'"):
            catalog_check("connection", "region")(bad)


@pytest.mark.parametrize(
    "url", ["http://localhost:4566", "HTTPS://kinesis.eu-west-1.amazonaws.com", "http://[::1]:1"]
)
def test_urls_accepted(url: str) -> None:
    check_url("endpoint", url, "x")


@pytest.mark.parametrize("url", ["localhost:4566", "ftp://host", "http://", "http:host", "http://[::1"])
def test_urls_refused(url: str) -> None:
    with pytest.raises(
        KinesisOptionError, match="expected an http:// or https:// URL such as 'https://kinesis"
    ):
        catalog_check("connection", "endpoint")(url)


def test_stream_lists_split_like_java() -> None:
    assert parse_streams("a,b,,") == [StreamRef("a"), StreamRef("b")]
    with pytest.raises(KinesisOptionError, match="expected comma-separated stream names"):
        parse_streams("a,,b")
    with pytest.raises(KinesisOptionError, match="expected comma-separated stream names"):
        parse_streams("")
    with pytest.raises(KinesisOptionError, match="Option 'streamName' is required"):
        parse_streams(",,")
    with pytest.raises(KinesisOptionError, match="each stream listed once"):
        parse_streams("a,arn:aws:kinesis:us-east-1:123456789012:stream/a")


def test_rendered_values_pass_their_checks() -> None:
    for delta in (timedelta(milliseconds=210), timedelta(hours=2), timedelta(seconds=1, microseconds=500)):
        rendered = render_duration("o", delta)
        assert check_duration("o", rendered, 1, "x") == delta // timedelta(milliseconds=1)
    for number in (0.1, 1.0, 1.9999999999999998, 2):
        assert check_decimal("o", render_decimal("o", number), 0.0, 2.0, "x") == number
