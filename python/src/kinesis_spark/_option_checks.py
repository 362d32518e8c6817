"""Checks of single option values, made from the option catalog's entries (:mod:`kinesis_spark._catalog`).

An option of a kind the catalog describes fully (an integer, a decimal, a duration, a size, a boolean, one of
a few words) is checked with the catalog's bounds and message. A ``text`` option's form (a stream name, a
position, a region) is checked by the code given for it, or by the JVM alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

from ._catalog import OptionEntry, entries, invalid_option
from ._values import check_boolean, check_bytes, check_choice, check_decimal, check_duration, check_long

__all__ = ["ValueCheck", "ValueChecks", "entry_check"]

#: A check of one value: returns the value read, or raises KinesisOptionError.
ValueCheck = Callable[[str], object]


def _duration(entry: OptionEntry, value: str) -> int:
    ms = check_duration(entry.name, value, entry.bounds["minMs"], entry.accepted)
    if "maxMs" in entry.bounds and ms > entry.bounds["maxMs"]:
        raise invalid_option(entry.name, value, entry.bounds["rangeAccepted"])
    return ms


def _bytes(entry: OptionEntry, value: str) -> int:
    size = check_bytes(entry.name, value, entry.accepted)
    if "minBytes" in entry.bounds and size < entry.bounds["minBytes"]:
        raise invalid_option(entry.name, value, entry.bounds["minAccepted"])
    return size


_BY_KIND: Mapping[str, Callable[[OptionEntry, str], object]] = {
    "integer": lambda e, v: check_long(e.name, v, e.bounds["min"], e.bounds["max"], e.accepted),
    "decimal": lambda e, v: check_decimal(e.name, v, e.bounds["exclusiveMin"], e.bounds["max"], e.accepted),
    "duration": _duration,
    "bytes": _bytes,
    "boolean": lambda e, v: check_boolean(e.name, v, e.accepted),
    "choice": lambda e, v: check_choice(e.name, v, e.bounds["words"], e.accepted),
}


def entry_check(entry: OptionEntry) -> ValueCheck | None:
    """Return the check of ``entry``'s values by its kind; ``None`` for ``text`` (checked by code).

    Examples
    --------
    >>> check = entry_check(next(e for e in entries("sink") if e.name == "maxInflightRequests"))
    >>> check("8")
    8
    """
    by_kind = _BY_KIND.get(entry.kind)
    return None if by_kind is None else functools.partial(by_kind, entry)


class ValueChecks(Mapping[str, ValueCheck]):
    """Lower-cased option name -> check of one value, for the options of ``parts`` of the catalog.

    Made on first use, so the package imports without the catalog. ``by_code`` gives the checks of ``text``
    options, by option name (as the JVM writes it); their ``accepted`` text is the catalog's.

    Examples
    --------
    >>> checks = ValueChecks(("source",), {})
    >>> checks["maxrecordsperfetch"]("500")
    500
    >>> checks["maxrecordsperfetch"]("0")
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Invalid value '0' for option 'maxRecordsPerFetch': expected an integer from 1 to 10000.
    """  # noqa: E501

    def __init__(
        self, parts: tuple[str, ...], by_code: Mapping[str, Callable[[OptionEntry, str], object]]
    ) -> None:
        self._parts = parts
        self._by_code = by_code

    @functools.cached_property
    def _checks(self) -> dict[str, ValueCheck]:
        checks: dict[str, ValueCheck] = {}
        for part in self._parts:
            for entry in entries(part):
                code = self._by_code.get(entry.name)
                check = functools.partial(code, entry) if code is not None else entry_check(entry)
                if check is not None:
                    checks[entry.name.lower()] = check
        return checks

    def __getitem__(self, key: str) -> ValueCheck:
        return self._checks[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._checks)

    def __len__(self) -> int:
        return len(self._checks)
