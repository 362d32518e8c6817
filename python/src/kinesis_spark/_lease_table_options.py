"""Checks of the options of a start where a KCL application stopped: ``kclLeaseTable`` and ``dynamoDb*``.

The JVM's ``KclLeaseTableOptions`` reads them; their kinds, defaults and messages come from the option
catalog's ``kclLeaseTable`` part. DynamoDB's region, endpoint, role and external id take the forms of their
stream counterparts, so they are checked as those are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from . import _option_keys as keys
from ._catalog import OptionEntry, conflicting_options, entries, invalid_option, option_requires_other
from ._connection_options import TEXT_CHECKS as CONNECTION_TEXT_CHECKS
from ._position import is_per_shard
from ._values import java_trim

__all__ = ["TEXT_CHECKS", "check_lease_table"]

# DynamoDB's naming rules for tables.
_TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,255}", re.ASCII)


def _table(entry: OptionEntry, value: str) -> None:
    table = java_trim(value)
    if _TABLE_NAME.fullmatch(table) is None:
        raise invalid_option(entry.name, table, entry.accepted)


#: The lease table's text options Python checks as the JVM does, by option name.
TEXT_CHECKS: Mapping[str, Callable[[OptionEntry, str], object]] = {
    keys.KCL_LEASE_TABLE: _table,
    keys.DYNAMODB_REGION: CONNECTION_TEXT_CHECKS[keys.REGION],
    keys.DYNAMODB_ENDPOINT: CONNECTION_TEXT_CHECKS[keys.ENDPOINT],
    keys.DYNAMODB_ROLE_ARN: CONNECTION_TEXT_CHECKS[keys.ROLE_ARN],
    keys.DYNAMODB_ROLE_EXTERNAL_ID: CONNECTION_TEXT_CHECKS[keys.ROLE_EXTERNAL_ID],
}


def check_lease_table(options: Mapping[str, str]) -> None:
    """Refuse the lease table's options as a whole as the JVM's ``KclLeaseTableOptions`` does, with its messages.

    ``options`` are lower-cased option names to values, each already checked on its own.

    >>> check_lease_table({"dynamodbregion": "eu-west-1"})
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Option 'dynamoDbRegion' is set but 'kclLeaseTable' is not: set both or neither.
    """  # noqa: E501

    def given(name: str) -> str | None:
        return options.get(name.lower())

    if given(keys.KCL_LEASE_TABLE) is None:
        for entry in entries("kclLeaseTable"):
            if given(entry.name) is not None:
                raise option_requires_other(entry.name, keys.KCL_LEASE_TABLE)
        return
    # The keys replace the stream's together, and pair up as the stream's do.
    access, secret = given(keys.DYNAMODB_AWS_ACCESS_KEY), given(keys.DYNAMODB_AWS_SECRET_KEY)
    if access is not None and secret is None:
        raise option_requires_other(keys.DYNAMODB_AWS_ACCESS_KEY, keys.DYNAMODB_AWS_SECRET_KEY)
    if access is None and secret is not None:
        raise option_requires_other(keys.DYNAMODB_AWS_SECRET_KEY, keys.DYNAMODB_AWS_ACCESS_KEY)
    if access is None and given(keys.DYNAMODB_AWS_SESSION_TOKEN) is not None:
        raise option_requires_other(keys.DYNAMODB_AWS_SESSION_TOKEN, keys.DYNAMODB_AWS_ACCESS_KEY)
    if given(keys.DYNAMODB_ROLE_ARN) is None and given(keys.DYNAMODB_ROLE_EXTERNAL_ID) is not None:
        raise option_requires_other(keys.DYNAMODB_ROLE_EXTERNAL_ID, keys.DYNAMODB_ROLE_ARN)
    position = given(keys.INITIAL_POSITION)
    if position is not None and is_per_shard(position):
        # The lease table gives each shard its start; per-shard positions beside it would say two things.
        raise conflicting_options(keys.KCL_LEASE_TABLE, keys.INITIAL_POSITION)
