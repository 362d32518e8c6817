"""Checks of the options every part of the connector that talks to AWS shares (reader and writer).

Mirrors the JVM's ``aws/ConnectionOptions``: :data:`VALUE_CHECKS` refuse a bad value as soon as it is set,
:func:`check_connection` refuses combinations when the reader or writer is about to start, in the JVM's
order and with its messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from . import _option_keys as keys
from ._error_types import conflicting_options, invalid_option, option_requires_other
from ._values import check_boolean, check_duration, check_region, check_url, java_trim

__all__ = ["VALUE_CHECKS", "check_connection"]

_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}", re.ASCII)
_SESSION_NAME = re.compile(r"[\w+=,.@-]{2,64}", re.ASCII)
_EXTERNAL_ID = re.compile(r"[\w+=,.@:/-]{2,1224}", re.ASCII)
_MIN_ROLE_SESSION_MS = 900 * 1000
_MAX_ROLE_SESSION_MS = 43200 * 1000

# Only meaningful with roleArn, in the order the JVM names the first one set without it.
_ROLE_OPTIONS = (
    keys.ROLE_EXTERNAL_ID,
    keys.ROLE_SESSION_NAME,
    keys.ROLE_SESSION_DURATION,
    keys.STS_ENDPOINT,
    keys.STS_REGION,
)


def _role_arn(value: str) -> None:
    if _ROLE_ARN.fullmatch(java_trim(value)) is None:
        raise invalid_option(
            keys.ROLE_ARN, value, "an IAM role ARN such as 'arn:aws:iam::123456789012:role/kinesis-reader'"
        )


def _session_name(value: str) -> None:
    name = java_trim(value)
    if _SESSION_NAME.fullmatch(name) is None:
        accepted = "2 to 64 characters from a-z, A-Z, 0-9 and '=,.@-_'"
        raise invalid_option(keys.ROLE_SESSION_NAME, name, accepted)


def _session_duration(value: str) -> None:
    ms = check_duration(keys.ROLE_SESSION_DURATION, value, _MIN_ROLE_SESSION_MS)
    if ms > _MAX_ROLE_SESSION_MS:
        raise invalid_option(keys.ROLE_SESSION_DURATION, value, "a duration from '15m' to '12h'")


def _external_id(value: str) -> None:
    if _EXTERNAL_ID.fullmatch(java_trim(value)) is None:
        # The external id is a shared secret of sorts: the JVM describes what is wrong without echoing it.
        raise invalid_option(
            keys.ROLE_EXTERNAL_ID, "<not shown>", "2 to 1,224 characters from a-z, A-Z, 0-9 and '+=,.@:/-'"
        )


#: Lower-cased option name -> check of one value (raises KinesisOptionError).
VALUE_CHECKS: Mapping[str, Callable[[str], object]] = {
    keys.REGION.lower(): lambda v: check_region(keys.REGION, v),
    keys.ENDPOINT.lower(): lambda v: check_url(keys.ENDPOINT, v, "https://kinesis.us-east-1.amazonaws.com"),
    keys.ROLE_ARN.lower(): _role_arn,
    keys.ROLE_SESSION_NAME.lower(): _session_name,
    keys.ROLE_SESSION_DURATION.lower(): _session_duration,
    keys.ROLE_EXTERNAL_ID.lower(): _external_id,
    keys.STS_REGION.lower(): lambda v: check_region(keys.STS_REGION, v),
    keys.STS_ENDPOINT.lower(): lambda v: check_url(
        keys.STS_ENDPOINT, v, "https://sts.us-east-1.amazonaws.com"
    ),
    keys.INSECURE_TRUST_ALL_CERTIFICATES.lower(): (
        lambda v: check_boolean(keys.INSECURE_TRUST_ALL_CERTIFICATES, v)
    ),
}


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
    trusting_all = trust_all is not None and check_boolean(keys.INSECURE_TRUST_ALL_CERTIFICATES, trust_all)
    if trusting_all and given(keys.CA_BUNDLE):
        raise conflicting_options(keys.CA_BUNDLE, keys.INSECURE_TRUST_ALL_CERTIFICATES)
