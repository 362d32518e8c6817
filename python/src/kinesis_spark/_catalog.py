"""The connector's option catalog, as the JVM defines it (``options/OptionCatalog.scala``).

For each part of the connector (``source``, ``connection``, ``efo``, ``sink``) the catalog lists every option:
its kind (``integer``, ``decimal``, ``duration``, ``bytes``, ``boolean``, ``choice`` or ``text``), its bounds
or words, its default, what it accepts as the error messages say it, and whether its value is a secret. It
also holds the forms of the option errors' messages. The build writes it into the connector jar and
``dev/build-python.sh`` copies it into this package as ``option_catalog.json``, so the package keeps no copy
of the JVM's rules: a value refused here gets the JVM's message, also in a Spark Connect client, which has no
JVM to ask.

The catalog is read on first use, so the package imports without it (a source checkout before the build).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._error_types import JarNotFoundError, KinesisOptionError
from ._versions import PACKAGE_DIR

__all__ = [
    "CATALOG_FILE",
    "OptionEntry",
    "conflicting_options",
    "entries",
    "entry",
    "invalid_option",
    "missing_option",
    "option_requires_other",
]

#: Where the build puts the catalog in the package.
CATALOG_FILE = PACKAGE_DIR / "option_catalog.json"
# The catalog's form this package reads (OptionCatalog.Version).
_VERSION = 1
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class OptionEntry:
    """One option of the catalog.

    Examples
    --------
    >>> [e for e in entries("source") if e.name == "maxRecordsPerFetch"][0]  # doctest: +NORMALIZE_WHITESPACE
    OptionEntry(name='maxRecordsPerFetch', kind='integer', accepted='an integer from 1 to 10000',
                default='10000', secret=False, bounds={'min': 1, 'max': 10000})
    """

    name: str
    kind: str
    accepted: str
    default: str | None
    secret: bool
    #: What the kind says besides: ``min``/``max`` (integer), ``exclusiveMin``/``max`` (decimal), ``minMs``
    #: and ``maxMs``/``rangeAccepted`` (duration), ``minBytes``/``minAccepted`` (bytes), ``words`` (choice).
    bounds: Mapping[str, Any] = field(default_factory=dict)


_PARTS = ("source", "connection", "efo", "kclLeaseTable", "awslabsCheckpoint", "dynamoDb", "sink")
_FORMS = ("invalid", "missing", "requiresOther", "conflicting")
_REBUILD = "run `bash dev/build-python.sh` with the jar of this source tree"


@functools.cache
def _catalog() -> dict[str, Any]:
    try:
        data = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JarNotFoundError(
            f"the option catalog {CATALOG_FILE} is not in the package: build the connector jar with "
            "`build/sbt connector/assembly`, then run `bash dev/build-python.sh` (it copies the jars and the "
            "catalog into the package)"
        ) from None
    except ValueError as broken:
        raise JarNotFoundError(
            f"the option catalog {CATALOG_FILE} is not JSON ({broken}): {_REBUILD}"
        ) from None
    version = data.get("version") if isinstance(data, dict) else None
    if version != _VERSION:
        raise JarNotFoundError(
            f"the option catalog {CATALOG_FILE} has version {version!r}; this package reads version "
            f"{_VERSION}: {_REBUILD}"
        )
    # A catalog missing a part or a message form would switch checks off without a word: refuse it whole.
    missing = [p for p in _PARTS if p not in data.get("parts", {})] + [
        f for f in _FORMS if f not in data.get("messages", {})
    ]
    if missing:
        raise JarNotFoundError(f"the option catalog {CATALOG_FILE} lacks {', '.join(missing)}: {_REBUILD}")
    catalog: dict[str, Any] = data
    return catalog


@functools.cache
def entries(part: str) -> tuple[OptionEntry, ...]:
    """Return the options of one part of the connector: ``source``, ``connection``, ``efo`` or ``sink``.

    Examples
    --------
    >>> [e.name for e in entries("efo")][:2]
    ['consumerMode', 'consumerName']
    """
    common = {"name", "kind", "accepted", "default", "secret"}
    return tuple(
        OptionEntry(
            name=raw["name"],
            kind=raw["kind"],
            accepted=raw["accepted"],
            default=raw["default"],
            secret=raw["secret"],
            bounds={key: value for key, value in raw.items() if key not in common},
        )
        for raw in _catalog()["parts"][part]
    )


def entry(part: str, name: str) -> OptionEntry:
    """Return the option ``name`` (as the JVM writes it) of ``part``.

    Examples
    --------
    >>> entry("connection", "roleSessionDuration").default
    '1h'
    """
    return next(option for option in entries(part) if option.name == name)


def _message(form: str, **fields: str) -> KinesisOptionError:
    # One pass, as the JVM fills them, so a value that itself holds "{accepted}" is shown as it is.
    text = _PLACEHOLDER.sub(lambda found: fields[found[1]], _catalog()["messages"][form])
    return KinesisOptionError(text)


def invalid_option(option: str, value: str, accepted: str) -> KinesisOptionError:
    """``KinesisErrors.invalidOption``: a value the option does not accept.

    Examples
    --------
    >>> print(invalid_option("shardsPerTask", "0", "an integer of at least 1"))
    Invalid value '0' for option 'shardsPerTask': expected an integer of at least 1.
    """
    return _message("invalid", option=option, value=value, accepted=accepted)


def missing_option(option: str, accepted: str) -> KinesisOptionError:
    """``KinesisErrors.missingOption``: a required option is not set."""
    return _message("missing", option=option, accepted=accepted)


def option_requires_other(option: str, required: str) -> KinesisOptionError:
    """``KinesisErrors.optionRequiresOther``: an option that only means something together with another."""
    return _message("requiresOther", option=option, other=required)


def conflicting_options(option: str, other: str) -> KinesisOptionError:
    """``KinesisErrors.conflictingOptions``: two options that exclude each other."""
    return _message("conflicting", option=option, other=other)
