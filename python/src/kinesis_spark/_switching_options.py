"""Checks of the options of a start where another consumer stopped.

They are ``kclLeaseTable``, ``awslabsCheckpointLocation`` (with ``awslabsMetadataPath`` or
``awslabsDynamoDbTable``) and DynamoDB's ``dynamoDb*`` connection. The JVM's ``KclLeaseTableOptions``,
``AwslabsCheckpointOptions`` and ``DynamoDbConnectionOptions`` read them; their kinds, defaults and messages
come from the option catalog's ``kclLeaseTable``, ``awslabsCheckpoint`` and ``dynamoDb`` parts. DynamoDB's
region, endpoint, role and external id take the forms of their stream counterparts, so they are checked as
those are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from . import _option_keys as keys
from ._catalog import OptionEntry, conflicting_options, entries, invalid_option, option_requires_other
from ._connection_options import TEXT_CHECKS as CONNECTION_TEXT_CHECKS
from ._position import is_per_shard
from ._values import java_trim

__all__ = ["TEXT_CHECKS", "check_switching"]

# DynamoDB's naming rules for tables.
_TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,255}", re.ASCII)


def _table(entry: OptionEntry, value: str) -> None:
    table = java_trim(value)
    if _TABLE_NAME.fullmatch(table) is None:
        raise invalid_option(entry.name, table, entry.accepted)


def _path(entry: OptionEntry, value: str) -> None:
    path = java_trim(value)
    if not path:
        raise invalid_option(entry.name, path, entry.accepted)


#: The switching options' texts Python checks as the JVM does, by option name.
TEXT_CHECKS: Mapping[str, Callable[[OptionEntry, str], object]] = {
    keys.KCL_LEASE_TABLE: _table,
    keys.AWSLABS_CHECKPOINT_LOCATION: _path,
    keys.AWSLABS_METADATA_PATH: _path,
    keys.AWSLABS_DYNAMODB_TABLE: _table,
    keys.DYNAMODB_REGION: CONNECTION_TEXT_CHECKS[keys.REGION],
    keys.DYNAMODB_ENDPOINT: CONNECTION_TEXT_CHECKS[keys.ENDPOINT],
    keys.DYNAMODB_ROLE_ARN: CONNECTION_TEXT_CHECKS[keys.ROLE_ARN],
    keys.DYNAMODB_ROLE_EXTERNAL_ID: CONNECTION_TEXT_CHECKS[keys.ROLE_EXTERNAL_ID],
}


def check_switching(options: Mapping[str, str], streams: int) -> None:
    """Refuse the switching options as a whole as the JVM's ``KinesisSourceOptions`` does, with its messages.

    ``options`` are lower-cased option names to values, each already checked on its own; ``streams`` is how many
    streams the query reads.

    >>> check_switching({"dynamodbregion": "eu-west-1"}, 1)
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Option 'dynamoDbRegion' is set but 'kclLeaseTable' or 'awslabsDynamoDbTable' is not: set both or neither.
    """  # noqa: E501

    def given(name: str) -> str | None:
        return options.get(name.lower())

    awslabs = given(keys.AWSLABS_CHECKPOINT_LOCATION) is not None
    if not awslabs:
        for name in (keys.AWSLABS_METADATA_PATH, keys.AWSLABS_DYNAMODB_TABLE):
            if given(name) is not None:
                raise option_requires_other(name, keys.AWSLABS_CHECKPOINT_LOCATION)
    elif given(keys.AWSLABS_METADATA_PATH) is not None and given(keys.AWSLABS_DYNAMODB_TABLE) is not None:
        # The old query kept its positions in one place: files under its metadata path, or DynamoDB.
        raise conflicting_options(keys.AWSLABS_METADATA_PATH, keys.AWSLABS_DYNAMODB_TABLE)
    if given(keys.KCL_LEASE_TABLE) is None and given(keys.AWSLABS_DYNAMODB_TABLE) is None:
        for entry in entries("dynamoDb"):
            if given(entry.name) is not None:
                either = f"{keys.KCL_LEASE_TABLE}' or '{keys.AWSLABS_DYNAMODB_TABLE}"
                raise option_requires_other(entry.name, either)
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
    if given(keys.KCL_LEASE_TABLE) is not None and awslabs:
        raise conflicting_options(keys.KCL_LEASE_TABLE, keys.AWSLABS_CHECKPOINT_LOCATION)
    starts = [keys.KCL_LEASE_TABLE] if given(keys.KCL_LEASE_TABLE) is not None else []
    starts += [keys.AWSLABS_CHECKPOINT_LOCATION] if awslabs else []
    for start in starts:
        position = given(keys.INITIAL_POSITION)
        if position is not None and is_per_shard(position):
            # The old consumer's positions give each shard its start; per-shard ones would say two things.
            raise conflicting_options(start, keys.INITIAL_POSITION)
        if start == keys.AWSLABS_CHECKPOINT_LOCATION and streams > 1:
            # An awslabs query reads one stream; its checkpoint says where in that one.
            raise invalid_option(
                keys.STREAM_NAME,
                given(keys.STREAM_NAME) or "",
                f"one stream with '{keys.AWSLABS_CHECKPOINT_LOCATION}' "
                "(an awslabs connector query reads one stream)",
            )
