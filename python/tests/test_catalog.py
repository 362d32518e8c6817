"""The option catalog the JVM writes (options/OptionCatalog.scala) as the package reads it: every option the
package names is in it, the checks made from it refuse what the JVM refuses with its message, and the user
guide's defaults are its defaults."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kinesis_spark import _catalog
from kinesis_spark import _option_keys as keys
from kinesis_spark._catalog import entries, entry
from kinesis_spark._option_checks import ValueChecks, entry_check
from kinesis_spark.errors import JarNotFoundError, KinesisOptionError

PARTS = ("source", "connection", "efo", "kclLeaseTable", "awslabsCheckpoint", "dynamoDb", "sink")
OPTIONS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "options.md"


def test_every_option_the_package_names_is_in_the_catalog_and_its_secrets_are_the_catalogs():
    named = {value for name, value in vars(keys).items() if name.isupper() and isinstance(value, str)}
    named -= {keys.AWSLABS_PREFIX, keys.FORMAT, keys.PROVIDER_CLASS}
    in_catalog = {e.name for part in PARTS for e in entries(part)}
    assert named <= in_catalog, f"not in the catalog: {sorted(named - in_catalog)}"
    assert {e.name for part in PARTS for e in entries(part) if e.secret} == keys.SECRET


@pytest.mark.parametrize(
    ("part", "option", "value", "message"),
    [
        ("source", "maxRecordsPerFetch", "20000", "expected an integer from 1 to 10000."),
        ("source", "maxFetchRate", "2.5", "expected a decimal number greater than 0.0 and at most 2.0."),
        (
            "source",
            "minFetchPeriod",
            "100ms",
            "expected a duration such as '200ms', '1s' or '2m', of at least 200ms.",
        ),
        ("connection", "roleSessionDuration", "13h", "expected a duration from '15m' to '12h'."),
        ("efo", "consumerRefreshInterval", "2h", "expected a duration from '1s' to '3600s'."),
        ("efo", "consumerMode", "fanout", "expected 'polling' or 'efo'."),
        ("sink", "maxInflightRequests", "65", "expected an integer from 1 to 64."),
        (
            "sink",
            "maxBytesPerShardPerSecond",
            "512",
            "expected a byte size of at least 1024 bytes such as '1mb' or '524288'.",
        ),
        (
            "sink",
            "partitionKeyFallback",
            "drop",
            "expected 'fail' (a row without a partition key fails the write)",
        ),
        ("sink", "pacing", "yes", "expected 'true' or 'false'."),
    ],
)
def test_a_check_made_from_the_catalog_refuses_with_the_jvms_message(part, option, value, message):
    check = entry_check(entry(part, option))
    assert check is not None
    with pytest.raises(KinesisOptionError) as refused:
        check(value)
    assert str(refused.value).startswith(f"Invalid value '{value}' for option '{option}': {message}")


def test_every_default_passes_its_own_check():
    for part in PARTS:
        for option in entries(part):
            check = entry_check(option)
            if check is not None and option.default is not None:
                check(option.default)


def test_text_options_are_left_to_the_code_given_for_them():
    checks = ValueChecks(("source",), {keys.STREAM_NAME: lambda e, v: v.upper()})
    assert checks["streamname"]("orders") == "ORDERS"
    assert "initialposition" not in checks  # text, and no code given: the JVM checks it


def _guide_defaults() -> dict[str, str]:
    """Option name -> the default the user guide's tables give, for rows that name one value."""
    defaults: dict[str, str] = {}
    for row in OPTIONS_PAGE.read_text().splitlines():
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        quoted = re.match(r"`([^`]*)`", cells[1])
        number = re.fullmatch(r"[0-9][0-9,.]*", cells[1])
        value = quoted[1] if quoted else number[0].replace(",", "") if number else None
        for name in re.findall(r"`([^`]+)`", cells[0]):
            if value is not None:
                defaults.setdefault(name, value)
    return defaults


def test_the_user_guides_defaults_are_the_catalogs():
    if not OPTIONS_PAGE.is_file():
        pytest.skip("docs/options.md is not beside this copy of the tests (an sdist)")
    guide = _guide_defaults()
    for part in PARTS:
        for option in entries(part):
            if option.default is None:
                continue
            assert option.name in guide, (
                f"the user guide gives no default of '{option.name}' ({option.default})"
            )
            check = entry_check(option)
            same = (
                check(guide[option.name]) == check(option.default)
                if check
                else guide[option.name] == option.default
            )
            assert same, (
                f"'{option.name}': the guide says {guide[option.name]}, the connector {option.default}"
            )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "is not in the package"),
        ("{not json", "is not JSON"),
        ('{"version": 2}', "has version 2"),
        (
            '{"version": 1, "parts": {"source": []}, "messages": {}}',
            "lacks connection, efo, kclLeaseTable, awslabsCheckpoint, dynamoDb, sink, invalid",
        ),
    ],
)
def test_a_missing_or_broken_catalog_is_an_error_saying_how_to_build_it(
    tmp_path, monkeypatch, content, message
):
    file = tmp_path / "option_catalog.json"
    if content is not None:
        file.write_text(content)
    monkeypatch.setattr(_catalog, "CATALOG_FILE", file)
    _catalog._catalog.cache_clear()
    try:
        with pytest.raises(JarNotFoundError, match=message) as failure:
            _catalog.invalid_option("shardsPerTask", "0", "an integer of at least 1")
        assert "dev/build-python.sh" in str(failure.value)
    finally:
        _catalog._catalog.cache_clear()
