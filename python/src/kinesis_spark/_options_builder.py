"""Options shared by :class:`KinesisReader` and :class:`KinesisWriter`: collection and connection builders."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import timedelta
from enum import Enum
from typing import ClassVar, TypeVar

from . import _option_keys as keys
from ._connection_options import VALUE_CHECKS
from ._position import InitialPosition
from ._values import render_boolean, render_duration, render_text

__all__ = ["OptionValue", "OptionsBuilder"]

#: A value accepted by ``option()``: ``None`` unsets the option, a ``timedelta`` becomes a duration string,
#: an :class:`InitialPosition` its option value, a bool ``"true"``/``"false"``, anything else ``str(value)``.
OptionValue = str | bool | int | float | timedelta | InitialPosition | None

_Builder = TypeVar("_Builder", bound="OptionsBuilder")


def _render(key: str, value: str | bool | int | float | timedelta | InitialPosition) -> str:
    # Spark parses booleans case-insensitively, but "True" in a logged option map looks like a Python leak.
    if isinstance(value, bool):
        return render_boolean(key, value)
    if isinstance(value, timedelta):
        return render_duration(key, value)
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


class OptionsBuilder:
    """Options by lower-cased name, each checked when set; the connection builders of reader and writer."""

    #: Lower-cased option name -> check of one value; subclasses add their own options.
    _value_checks: ClassVar[Mapping[str, Callable[[str], object]]] = VALUE_CHECKS

    def __init__(self) -> None:
        # lower-cased key -> (key as last given, value as passed to Spark)
        self._options: dict[str, tuple[str, str]] = {}

    def option(self: _Builder, key: str, value: OptionValue) -> _Builder:
        """Set one option, or unset it with ``None``.

        A known option's value is checked at once, with the message the connector would give.

        Parameters
        ----------
        key : str
            Option name, case-insensitive (``"streamName"`` and ``"streamname"`` are the same option).
        value : str, bool, int, float, timedelta, InitialPosition or None
            Booleans become ``"true"``/``"false"``, a ``timedelta`` a duration such as ``"1500ms"``, other
            values ``str(value)``; ``None`` removes the option.

        Returns
        -------
        Self
            This builder, for chaining.

        Raises
        ------
        TypeError
            If ``key`` is not a non-empty string.
        KinesisOptionError
            If the connector would refuse the value.

        Examples
        --------
        >>> from kinesis_spark import KinesisReader
        >>> reader = KinesisReader(spark).option("streamName", "orders").option("maxRecordsPerFetch", 1000)
        >>> reader.option("allowStreamRemoval", False).option("streamName", None)
        KinesisReader(maxRecordsPerFetch='1000', allowStreamRemoval='false')
        """
        if not isinstance(key, str) or not key:
            raise TypeError(f"option key must be a non-empty str, got {key!r}")
        return self._set(key, None if value is None else _render(key, value))

    def options(self: _Builder, **options: OptionValue) -> _Builder:
        """Set several options at once; see :meth:`option`.

        Parameters
        ----------
        **options : str, bool, int, float, timedelta, InitialPosition or None
            Option names and values.

        Returns
        -------
        Self
            This builder, for chaining.

        Examples
        --------
        >>> from kinesis_spark import KinesisReader
        >>> KinesisReader(spark).options(streamName="orders", region="eu-west-1", awsSecretKey="abc")
        KinesisReader(streamName='orders', region='eu-west-1', awsSecretKey=***)
        """
        for key, value in options.items():
            self.option(key, value)
        return self

    # --- where and how to connect ------------------------------------------------------------------------

    def region(self: _Builder, name: str) -> _Builder:
        """Set the AWS region of the streams (option ``region``), such as ``"us-east-1"``.

        Without it the region comes from a stream ARN, an AWS endpoint's name, or the AWS SDK's lookup
        (``AWS_REGION``, the profile, instance metadata).
        """
        return self._set(keys.REGION, render_text(keys.REGION, name))

    def endpoint(self: _Builder, url: str) -> _Builder:
        """Set the Kinesis endpoint URL (option ``endpoint``): a VPC endpoint, or a local emulator.

        Examples
        --------
        >>> from kinesis_spark import KinesisReader
        >>> KinesisReader(spark).endpoint("http://127.0.0.1:4566")
        KinesisReader(endpoint='http://127.0.0.1:4566')
        """
        return self._set(keys.ENDPOINT, render_text(keys.ENDPOINT, url))

    def credentials(
        self: _Builder, access_key: str, secret_key: str, session_token: str | None = None
    ) -> _Builder:
        """Sign requests with these keys (options ``awsAccessKey``, ``awsSecretKey``, ``awsSessionToken``).

        Without keys, the AWS SDK's default credentials chain is used. The values never appear in
        ``repr()``, logs or error messages.

        Parameters
        ----------
        access_key, secret_key : str
            The access key id and its secret.
        session_token : str, optional
            The session token of temporary keys; ``None`` unsets it.

        Examples
        --------
        >>> from kinesis_spark import KinesisReader
        >>> KinesisReader(spark).credentials("AKIDEXAMPLE", "wJalrXUtnFEMI", session_token="FwoGZX")
        KinesisReader(awsAccessKey=***, awsSecretKey=***, awsSessionToken=***)
        """
        return self._set_all(
            {
                keys.AWS_ACCESS_KEY: render_text(keys.AWS_ACCESS_KEY, access_key),
                keys.AWS_SECRET_KEY: render_text(keys.AWS_SECRET_KEY, secret_key),
                keys.AWS_SESSION_TOKEN: _optional_text(keys.AWS_SESSION_TOKEN, session_token),
            }
        )

    def assume_role(
        self: _Builder,
        role_arn: str,
        *,
        external_id: str | None = None,
        session_name: str | None = None,
        session_duration: timedelta | str | None = None,
        sts_endpoint: str | None = None,
        sts_region: str | None = None,
    ) -> _Builder:
        """Assume an IAM role through STS, with the other credentials (option ``roleArn`` and its companions).

        The role's session is renewed in the background before it expires. Arguments left ``None`` unset
        their options, so a second call replaces the first.

        Parameters
        ----------
        role_arn : str
            Such as ``"arn:aws:iam::123456789012:role/kinesis-reader"``.
        external_id : str, optional
            The external id the role's trust policy requires (``roleExternalId``).
        session_name : str, optional
            Shown in CloudTrail (``roleSessionName``, default ``kinesis-spark``).
        session_duration : timedelta or str, optional
            How long each session lasts, 15 minutes to 12 hours (``roleSessionDuration``, default 1 hour).
        sts_endpoint, sts_region : str, optional
            Where AssumeRole is called (``stsEndpoint``, ``stsRegion``; default: the regional STS of the
            streams' region).

        Examples
        --------
        >>> from datetime import timedelta
        >>> from kinesis_spark import KinesisReader
        >>> KinesisReader(spark).assume_role(
        ...     "arn:aws:iam::123456789012:role/reader", session_duration=timedelta(hours=2))
        KinesisReader(roleArn='arn:aws:iam::123456789012:role/reader', roleSessionDuration='2h')
        """
        return self._set_all(
            {
                keys.ROLE_ARN: render_text(keys.ROLE_ARN, role_arn),
                keys.ROLE_EXTERNAL_ID: _optional_text(keys.ROLE_EXTERNAL_ID, external_id),
                keys.ROLE_SESSION_NAME: _optional_text(keys.ROLE_SESSION_NAME, session_name),
                keys.ROLE_SESSION_DURATION: (
                    None
                    if session_duration is None
                    else render_duration(keys.ROLE_SESSION_DURATION, session_duration)
                ),
                keys.STS_ENDPOINT: _optional_text(keys.STS_ENDPOINT, sts_endpoint),
                keys.STS_REGION: _optional_text(keys.STS_REGION, sts_region),
            }
        )

    def credentials_provider(self: _Builder, class_name: str, param: str | None = None) -> _Builder:
        """Take credentials from a JVM class (``credentialsProviderClass``, ``credentialsProviderParam``).

        The class implements ``io.kinesisspark.aws.KinesisCredentialsProvider``, with a public constructor
        taking ``param`` as one ``String``, or none; it must be on the classpath of the driver and executors.
        """
        return self._set_all(
            {
                keys.CREDENTIALS_PROVIDER_CLASS: render_text(keys.CREDENTIALS_PROVIDER_CLASS, class_name),
                keys.CREDENTIALS_PROVIDER_PARAM: _optional_text(keys.CREDENTIALS_PROVIDER_PARAM, param),
            }
        )

    def ca_bundle(self: _Builder, path: str | os.PathLike[str]) -> _Builder:
        """Trust the CA certificates of this PEM file instead of the JVM's (option ``caBundle``).

        The file is read on the driver when the query starts; executors need no copy.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"option '{keys.CA_BUNDLE}' takes a path, got {path!r} ({type(path).__name__})")
        return self._set(keys.CA_BUNDLE, os.fspath(path))

    def insecure_trust_all_certificates(self: _Builder, enabled: bool = True) -> _Builder:
        """Turn TLS certificate verification off (``insecureTrustAllCertificates``): local emulators only."""
        option = keys.INSECURE_TRUST_ALL_CERTIFICATES
        return self._set(option, render_boolean(option, enabled))

    # --- plumbing ------------------------------------------------------------------------------------------

    def _set(self: _Builder, key: str, value: str | None) -> _Builder:
        return self._set_all({key: value})

    def _set_all(self: _Builder, values: Mapping[str, str | None]) -> _Builder:
        """Check every value, then set them all (``None`` unsets): all or nothing changes."""
        for key, value in values.items():
            check = self._value_checks.get(key.lower())
            if check is not None and value is not None:
                check(value)
        for key, value in values.items():
            if value is None:
                self._options.pop(key.lower(), None)
            else:
                self._options[key.lower()] = (key, value)
        return self

    def _by_lower_name(self) -> dict[str, str]:
        return {lower: value for lower, (_, value) in self._options.items()}

    def _spark_options(self) -> dict[str, str]:
        return dict(self._options.values())

    def __repr__(self) -> str:
        secret = {key.lower() for key in keys.SECRET}
        shown = ", ".join(
            f"{key}=***" if lower in secret or _looks_secret(lower) else f"{key}={value!r}"
            for lower, (key, value) in self._options.items()
        )
        return f"{type(self).__name__}({shown})"


# Unknown options whose values never appear in repr(), by name.
_SECRET_KEY_PARTS = ("secret", "token", "password")


def _looks_secret(lower_key: str) -> bool:
    return any(part in lower_key for part in _SECRET_KEY_PARTS)


def _optional_text(option: str, value: object) -> str | None:
    return None if value is None else render_text(option, value)
