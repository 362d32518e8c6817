"""Checks of the options every part of the connector that talks to AWS shares (reader and writer).

Mirrors the JVM's ``aws/ConnectionOptions``, with the option catalog's bounds and messages:
:data:`VALUE_CHECKS` refuse a bad value as soon as it is set, :func:`check_connection` refuses combinations
when the reader or writer is about to start, in the JVM's order and with its messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from . import _option_keys as keys
from ._catalog import OptionEntry, conflicting_options, invalid_option, option_requires_other
from ._option_checks import ValueCheck, ValueChecks
from ._values import check_region, check_url, java_trim

__all__ = ["TEXT_CHECKS", "VALUE_CHECKS", "check_connection"]

_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}", re.ASCII)
_SESSION_NAME = re.compile(r"[\w+=,.@-]{2,64}", re.ASCII)
_EXTERNAL_ID = re.compile(r"[\w+=,.@:/-]{2,1224}", re.ASCII)

# Only meaningful with roleArn, in the order the JVM names the first one set without it.
_ROLE_OPTIONS = (
    keys.ROLE_EXTERNAL_ID,
    keys.ROLE_SESSION_NAME,
    keys.ROLE_SESSION_DURATION,
    keys.STS_ENDPOINT,
    keys.STS_REGION,
)


def _role_arn(entry: OptionEntry, value: str) -> None:
    if _ROLE_ARN.fullmatch(java_trim(value)) is None:
        raise invalid_option(entry.name, value, entry.accepted)


def _session_name(entry: OptionEntry, value: str) -> None:
    name = java_trim(value)
    if _SESSION_NAME.fullmatch(name) is None:
        raise invalid_option(entry.name, name, entry.accepted)


def _external_id(entry: OptionEntry, value: str) -> None:
    if _EXTERNAL_ID.fullmatch(java_trim(value)) is None:
        # The external id is a shared secret of sorts: the JVM describes what is wrong without echoing it.
        raise invalid_option(entry.name, "<not shown>", entry.accepted)


def _region(entry: OptionEntry, value: str) -> str:
    return check_region(entry.name, value, entry.accepted)


def _url(entry: OptionEntry, value: str) -> None:
    check_url(entry.name, value, entry.accepted)


#: The forms of the connection's text options that Python can check as the JVM does, by option name.
TEXT_CHECKS: Mapping[str, Callable[[OptionEntry, str], object]] = {
    keys.REGION: _region,
    keys.ENDPOINT: _url,
    keys.ROLE_ARN: _role_arn,
    keys.ROLE_SESSION_NAME: _session_name,
    keys.ROLE_EXTERNAL_ID: _external_id,
    keys.STS_REGION: _region,
    keys.STS_ENDPOINT: _url,
}

#: Lower-cased option name -> check of one value (raises KinesisOptionError): the catalog's kinds and
#: :data:`TEXT_CHECKS`.
VALUE_CHECKS: Mapping[str, ValueCheck] = ValueChecks(("connection",), TEXT_CHECKS)


def check_connection(options: Mapping[str, str]) -> None:
    """Refuse combinations of connection options the JVM refuses, with its messages.

    Parameters
    ----------
    options : Mapping[str, str]
        Lower-cased option names to values; every value already passed :data:`VALUE_CHECKS`.

    Raises
    ------
    KinesisOptionError
        Keys given without their pair, a provider class together with keys, role options without
        ``roleArn``, or ``caBundle`` with ``insecureTrustAllCertificates=true``.

    Examples
    --------
    >>> check_connection({"awsaccesskey": "AKID"})
    Traceback (most recent call last):
    ...
    kinesis_spark.errors.KinesisOptionError: Option 'awsAccessKey' is set but 'awsSecretKey' is not: set both or neither.
    """  # noqa: E501

    def given(key: str) -> bool:
        return key.lower() in options

    access, secret = given(keys.AWS_ACCESS_KEY), given(keys.AWS_SECRET_KEY)
    if access and not secret:
        raise option_requires_other(keys.AWS_ACCESS_KEY, keys.AWS_SECRET_KEY)
    if secret and not access:
        raise option_requires_other(keys.AWS_SECRET_KEY, keys.AWS_ACCESS_KEY)
    if not access and given(keys.AWS_SESSION_TOKEN):
        raise option_requires_other(keys.AWS_SESSION_TOKEN, keys.AWS_ACCESS_KEY)
    if given(keys.CREDENTIALS_PROVIDER_CLASS):
        if access:
            raise conflicting_options(keys.CREDENTIALS_PROVIDER_CLASS, keys.AWS_ACCESS_KEY)
    elif given(keys.CREDENTIALS_PROVIDER_PARAM):
        raise option_requires_other(keys.CREDENTIALS_PROVIDER_PARAM, keys.CREDENTIALS_PROVIDER_CLASS)
    if not given(keys.ROLE_ARN):
        for option in _ROLE_OPTIONS:
            if given(option):
                raise option_requires_other(option, keys.ROLE_ARN)
    trust_all = options.get(keys.INSECURE_TRUST_ALL_CERTIFICATES.lower())
    trusting_all = trust_all is not None and VALUE_CHECKS[keys.INSECURE_TRUST_ALL_CERTIFICATES.lower()](
        trust_all
    )
    if trusting_all and given(keys.CA_BUNDLE):
        raise conflicting_options(keys.CA_BUNDLE, keys.INSECURE_TRUST_ALL_CERTIFICATES)
