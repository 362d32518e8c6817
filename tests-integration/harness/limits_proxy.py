"""A proxy in front of the Kinesis emulator that enforces Kinesis's per-shard quotas.

No emulator throttles (see ``/work/shared/notes/emulators.md``), so rate-limit tests and honest benchmarks
put this proxy between the client and the emulator. It answers a call over quota the way Kinesis does and
passes everything else through unchanged:

========================  ===================================================================================
GetRecords                at most ``get_records_calls_per_s`` served calls per shard in any 1 s window; a
                          read budget per shard (``read_bytes_per_s``, holding at most one second's worth)
                          that every response debits by its record data bytes, a call made while it is
                          negative is throttled; after a response of ``large_response_bytes`` or more, calls
                          on that shard within ``large_response_penalty_s`` are throttled
GetShardIterator          at most ``get_shard_iterator_calls_per_s`` served calls per shard in any 1 s window;
                          with ``kinesis_clock_offset_s`` set, an AT_TIMESTAMP time ahead of Kinesis's clock
                          (this machine's plus the offset) is refused with ``InvalidArgumentException``, as
                          AWS refuses it (kinesis-local accepts it)
PutRecord, PutRecords     at most ``write_records_per_s`` records and ``write_bytes_per_s`` bytes (data plus
                          partition key) per shard in any 1 s window. PutRecords throttles single entries:
                          they come back with ``ErrorCode`` ProvisionedThroughputExceededException and count
                          in ``FailedRecordCount``; they are never sent to the emulator.
                          ``refuse_entries_every``: every N-th PutRecords entry the proxy sees is refused so too,
                          wherever it sits in its call (a partial failure in the middle of a call, not only of its
                          tail, as a shard over its rate answers)
control plane             ``control_calls_per_s``: operation -> calls per second for the whole account (off
                          by default; Kinesis's are e.g. DescribeStreamSummary 20, DescribeStream 10,
                          ListStreamConsumers 5 per stream, in the Developer Guide's "Quotas and limits"); a
                          call over it gets HTTP 400 ``LimitExceededException`` "Rate exceeded for <operation>",
                          as Kinesis answers, and is not sent to the emulator. Set it lower than Kinesis's to
                          model other applications of the account using the rest
retention                 ``retention_s`` (a moving horizon: now minus it) and ``trim_horizon_ms`` (a fixed one,
                          epoch milliseconds): records that arrived before the later of the two are gone. The
                          proxy takes them out of GetRecords responses, so every way of reading (TRIM_HORIZON,
                          AT_TIMESTAMP, an iterator at or after a trimmed sequence number, an iterator issued
                          before the trim) reads on from the oldest record left, which is what AWS documents
                          for the one case it describes (GetShardIterator: "If the time stamp is older than the
                          current trim horizon, the iterator returned is for the oldest untrimmed data record")
                          and what its error list implies for sequence numbers (no error names trimmed data;
                          GetRecords may answer with no records, and "it might take multiple calls to get to a
                          portion of the shard that contains records"). Counted as ``trimmed_records``. The highest
                          sequence number GetRecords served per shard (what its reader fetched) is kept as
                          ``last_served`` (``stream/shard`` -> sequence number)
ListShards                the ``AFTER_SHARD_ID`` ShardFilter applied (some emulators ignore it); ``omit_shards``:
                          shard ids left out of every ListShards response (of any stream), as an
                          incomplete listing would leave them out. A response that did leave one out (the
                          shard was in the emulator's answer, after the filter) counts in ``omitted_listings``,
                          and each shard left out in ``omitted_shards``
any operation             ``faults``: operation -> {error code: share of calls, or a schedule}. A share (a
                          number) answers that share of the operation's calls, drawn at random, with the error
                          instead of sending them to the emulator, e.g. ``{"GetRecords":
                          {"KMSThrottlingException": 0.05, "InternalFailure": 0.01}}``; ``fault_seed`` seeds
                          the draws, so that a run's sequence of draws is the same every time. A schedule,
                          ``{"every": N, "first": F, "times": K}``, answers the F-th call of the operation (F
                          defaults to N) and every N-th after it with the error, K times at most (default: no
                          end), so that the fault fires a known number of times whatever the timing; when two
                          codes of one operation fall due on the same call, the first listed takes it and the
                          other takes the next call. Only the calls that can meet a code count for it (see
                          ``ExpiredNextTokenException``). ``InternalFailure`` comes with HTTP 500,
                          ``ServiceUnavailable`` with 503, every other code with 400 (counted as
                          ``faulted_calls`` of the operation, as are refused AT_TIMESTAMP times, and by error
                          code in ``faults_by_code``, with the time of each in ``fault_times``).
                          ``ConnectionReset`` is no answer at all: the proxy reads the request and resets the
                          connection (TCP RST). ``ConnectionHang`` is no answer either, and no reset: the proxy
                          reads the request and holds the connection open, silent, until the client gives up and
                          closes it (its socket timeout), then resets it. ``ExpiredNextTokenException`` (HTTP 400, "the pagination token
                          passed to the operation is expired" in the ListShards API reference) is only given to
                          calls that carry a ``NextToken``
slow calls                ``delays_s``: operation -> seconds each of its calls waits in the proxy before it is
                          served (a slow Kinesis; longer than the client's socket timeout, a hung call), counted
                          in ``delayed_calls`` of the operation
IAM policy                ``allowed_actions``: the IAM actions the caller's policy allows (``None``: every
                          one). A call whose action is not among them, ``kinesis:<X-Amz-Target operation>``
                          or, for a call signed for STS, ``sts:<Action>``, is answered as AWS answers an
                          implicit deny and is not forwarded (counted as ``denied_calls``); see
                          :func:`access_denied_message`. Kinesis: HTTP 400 ``AccessDeniedException``; STS:
                          HTTP 403 ``AccessDenied`` in its XML. Put a proxy in front of moto's STS too (its
                          ``target``) to enforce ``sts:AssumeRole``
========================  ===================================================================================

A throttled call gets HTTP 400 with ``x-amzn-ErrorType: ProvisionedThroughputExceededException`` and a body
``{"__type": "ProvisionedThroughputExceededException", "message": "Rate exceeded for shard ..."}`` in the
request's own encoding: JSON for ``application/x-amz-json-1.1`` (boto3), CBOR for
``application/x-amz-cbor-1.1`` (the AWS SDK for Java v2's default for Kinesis). boto3 reads the error code
from ``__type`` only; the Java SDK reads the ``x-amzn-ErrorType`` header first and ``__type`` after it, so
both are sent. Both SDKs count this code as a throttling error for their retry policies.

How calls are tied to shards:

* GetShardIterator names its stream and shard; the iterator it returns is remembered with them, and so is the
  ``NextShardIterator`` of every GetRecords response, so a GetRecords call (which carries nothing but an
  opaque iterator) is charged to its shard. Iterators are forgotten 5 minutes after they were issued, when
  Kinesis expires them. A GetRecords call with an iterator the proxy never saw is passed through and counted
  under the shard ``"?"`` of stream ``"?"``.
* Writes are placed before they are forwarded, the way Kinesis places them: the MD5 of the partition key (or
  the ``ExplicitHashKey``) as a 128-bit number, against the hash key ranges of the stream's open shards from
  ListShards (cached for ``shard_map_ttl_s`` and dropped after a reshard through the proxy). Every
  acknowledged entry's ``ShardId`` is compared with the prediction; a miss is counted
  (``placement_mismatches``) and drops the cache.

Counters (``stats()`` in-process, or ``GET /__proxy/stats``; ``reset()`` / ``POST /__proxy/reset``), per
stream, shard and operation: ``calls``, ``throttled_calls``, ``records``, ``throttled_records``, ``bytes``
(record bytes served or written), ``max_calls_1s`` (calls received, throttled or not, in any 1 s window),
``max_served_calls_1s``, ``max_records_1s``, ``max_bytes_1s``, ``data_span_ms`` (first to last call with data); per operation over all shards, ``calls``,
``throttled_calls``, ``faulted_calls``, ``bytes``, ``cbor_calls`` (requests encoded in CBOR) and ``data_span_s`` (seconds from the
first to the last call that served or stored data), ``faults_by_code`` (error code -> faults injected) and
``fault_times`` (error code -> the epoch time, in seconds, of each fault injected, to compare with when a query
ran); for ListShards also ``shards_listed``, ``filtered_calls``
(calls with a ``ShardFilter``), ``answered_calls``, ``omitted_listings`` and ``omitted_shards``, counted together when the emulator's answer comes back (``calls``
counts a call when it arrives, so across a ``reset`` or a ``stats`` taken mid-call the two can differ by one). ``GET``/``POST /__proxy/limits``
read and change the limits of a running proxy.

HTTP/2 with prior knowledge (h2c), which the AWS SDK's Netty client uses for SubscribeToShard on a plain
``http://`` endpoint, is told apart from HTTP/1.1 by the connection preface (RFC 9113 section 3.4). The proxy is
then the HTTP/2 server: each request, once whole, is counted under its operation and judged like an HTTP/1.1 call
by the policy (a denied one gets the AccessDeniedException answer on its stream, before any event stream starts)
and by ``faults`` (an error code is answered on the stream the same way, ``ConnectionReset`` resets the whole
connection, ending every subscription on it mid-stream, ``ConnectionHang`` leaves the stream unanswered); the rest
are forwarded over an HTTP/2 connection of the proxy's own to the emulator, and their answers (event streams)
passed back as they come. A change of ``allowed_actions`` closes the open HTTP/2 connections, so the client's
next ones are judged by the new policy. No other limit applies to HTTP/2 (SubscribeToShard's 5-second rule is the
emulator's). The proxy runs on 127.0.0.1 on a free
port, in a subprocess by default (so a client in the same Python process does not share its GIL) or in a
background thread. Run it by hand with ``python tests-integration/harness/limits_proxy.py --target URL``.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import bisect
import collections
import contextlib
import dataclasses
import hashlib
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from xml.sax.saxutils import escape as xml_escape
from pathlib import Path
from types import TracebackType
from typing import Any

import aiohttp
import cbor2
from aiohttp import web
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import (
    ConnectionTerminated,
    DataReceived,
    RequestReceived,
    ResponseReceived,
    StreamEnded,
    StreamReset,
    TrailersReceived,
    WindowUpdated,
)
from h2.exceptions import ProtocolError, StreamClosedError
from multidict import CIMultiDict

MIB = 1024 * 1024

TARGET_PREFIX = "Kinesis_20131202."
JSON_TYPE = "application/x-amz-json-1.1"
CBOR_TYPE = "application/x-amz-cbor-1.1"
THROTTLED = "ProvisionedThroughputExceededException"
LIMIT_EXCEEDED = "LimitExceededException"
# HTTP status of injected faults (see Limits.faults); 400 for every other code.
FAULT_STATUS = {"InternalFailure": 500, "ServiceUnavailable": 503}
# A fault that is no answer: the connection is reset once the request was read.
CONNECTION_RESET = "ConnectionReset"
# A fault that is silence: the connection stays open, unanswered, until the client closes it (at most HANG_MAX_S).
CONNECTION_HANG = "ConnectionHang"
HANG_MAX_S = 300.0
# A fault only calls with a pagination token can meet.
EXPIRED_NEXT_TOKEN = "ExpiredNextTokenException"
# The counters kept per operation over all shards (see the module documentation).
OPERATION_COUNTERS = (
    "calls", "throttled_calls", "faulted_calls", "denied_calls", "delayed_calls", "bytes", "cbor_calls",
    "trimmed_records"
)
ITERATOR_LIFETIME_S = 300.0  # Kinesis expires a shard iterator 5 minutes after issuing it
WINDOW_S = 1.0
UNKNOWN = "?"
# Calls after which the open shards (and so the placement of writes) may have changed.
RESHARDING_OPERATIONS = frozenset(
    {"CreateStream", "DeleteStream", "SplitShard", "MergeShards", "UpdateShardCount"}
)
# Headers that describe one connection, not the message (RFC 9110 section 7.6.1), plus the ones the proxy
# recomputes. Accept-Encoding is dropped so that the emulator never compresses what the proxy must read.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "expect",
        "accept-encoding",
    }
)


@dataclasses.dataclass
class Limits:
    """Per-shard quotas; the defaults are Kinesis's. ``None`` switches a limit off."""

    get_records_calls_per_s: int | None = 5
    read_bytes_per_s: float | None = 2 * MIB
    large_response_bytes: int | None = 10 * MIB
    large_response_penalty_s: float = 5.0
    get_shard_iterator_calls_per_s: int | None = 5
    write_records_per_s: int | None = 1000
    # Every N-th PutRecords entry refused as throttled, wherever it is in its call (see the module's table).
    refuse_entries_every: int | None = None
    write_bytes_per_s: int | None = 1 * MIB
    # Account-level calls per second per control-plane operation, e.g. {"DescribeStreamSummary": 5}.
    control_calls_per_s: dict[str, float] | None = None
    # Operation -> {error code: share of its calls answered with that error, or a schedule {"every", "first",
    # "times"}} (see the module documentation).
    faults: dict[str, dict[str, Any]] | None = None
    # Kinesis's clock minus this machine's, in seconds (negative: Kinesis behind); None: times are not checked.
    kinesis_clock_offset_s: float | None = None
    # Retention: records that arrived more than this many seconds ago are gone (a moving trim horizon).
    retention_s: float | None = None
    # Records that arrived before this time (epoch milliseconds) are gone (a trim horizon moved by hand).
    trim_horizon_ms: float | None = None
    # Shard ids left out of ListShards responses.
    omit_shards: list[str] | None = None
    # The IAM actions the caller may perform ("kinesis:GetRecords", "sts:AssumeRole"); None: every action.
    allowed_actions: list[str] | None = None
    # Seed of the draws of share-based faults; None: a different sequence every run.
    fault_seed: int | None = None
    # Operation -> seconds each call waits before it is served.
    delays_s: dict[str, float] | None = None

    def __post_init__(self) -> None:
        for op, codes in (self.faults or {}).items():
            for code, spec in codes.items():
                _check_fault(op, code, spec)

    @classmethod
    def disabled(cls) -> Limits:
        """No limit at all: a plain pass-through proxy that still counts."""
        return cls(None, None, None, 0.0, None, None, None, None, None, None, None, None, None)

    def updated(self, **changes: Any) -> Limits:
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise TypeError(f"unknown limits {sorted(unknown)}")
        return dataclasses.replace(self, **changes)


def _check_fault(op: str, code: str, spec: Any) -> None:
    """Refuses a ``faults`` entry that is neither a share nor a schedule (see the module documentation)."""
    if isinstance(spec, dict):
        unknown = set(spec) - {"every", "first", "times"}
        values = [spec.get(k) for k in ("every", "first", "times") if spec.get(k) is not None]
        if unknown or "every" not in spec or not all(isinstance(v, int) and v >= 1 for v in values):
            raise ValueError(f"faults[{op!r}][{code!r}]: a schedule is {{'every': N, 'first': F, 'times': K}} "
                             f"of whole numbers from 1, not {spec!r}")
    elif not isinstance(spec, (int, float)) or not 0 <= spec <= 1:
        raise ValueError(f"faults[{op!r}][{code!r}]: a share is a number from 0 to 1, not {spec!r}")


# --------------------------------------------------------------------------------------------------------
# Counters


class _Window:
    """Events (time, amount) of the last second, with their sum and the largest sum any 1 s window reached."""

    __slots__ = ("events", "peak", "total")

    def __init__(self) -> None:
        self.events: collections.deque[tuple[float, float]] = collections.deque()
        self.total = 0.0
        self.peak = 0.0

    def expire(self, now: float) -> float:
        while self.events and self.events[0][0] <= now - WINDOW_S:
            self.total -= self.events.popleft()[1]
        if not self.events:
            self.total = 0.0  # no drift from float subtraction
        return self.total

    def add(self, now: float, amount: float = 1.0) -> None:
        self.expire(now)
        self.events.append((now, amount))
        self.total += amount
        self.peak = max(self.peak, self.total)


class _OpStats:
    """The counters of one operation on one shard."""

    __slots__ = (
        "_bytes_1s",
        "_calls_1s",
        "_records_1s",
        "_served_1s",
        "bytes",
        "calls",
        "data_first",
        "data_last",
        "records",
        "throttled_calls",
        "throttled_records",
    )

    def __init__(self) -> None:
        self.calls = self.throttled_calls = self.records = self.throttled_records = self.bytes = 0
        self.data_first = self.data_last = 0.0  # monotonic times of the first and last call with data
        self._calls_1s, self._served_1s = _Window(), _Window()
        self._records_1s, self._bytes_1s = _Window(), _Window()

    def call(self, now: float, throttled: bool) -> None:
        self.calls += 1
        self._calls_1s.add(now)
        if throttled:
            self.throttled_calls += 1
        else:
            self._served_1s.add(now)

    def served(self, now: float, records: int, size: int, throttled_records: int = 0) -> None:
        self.records += records
        self.bytes += size
        self.throttled_records += throttled_records
        self._records_1s.add(now, records)
        self._bytes_1s.add(now, size)
        if records > 0:
            self.data_first = self.data_first or now
            self.data_last = now

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "throttled_calls": self.throttled_calls,
            "records": self.records,
            "throttled_records": self.throttled_records,
            "bytes": self.bytes,
            "max_calls_1s": int(self._calls_1s.peak),
            "max_served_calls_1s": int(self._served_1s.peak),
            "max_records_1s": int(self._records_1s.peak),
            "max_bytes_1s": int(self._bytes_1s.peak),
            "data_span_ms": int((self.data_last - self.data_first) * 1000),
        }


EMPTY_OP_STATS: dict[str, int] = _OpStats().as_dict()


class _ShardState:
    """What the limits of one shard remember: served calls per operation, the read budget, writes."""

    __slots__ = ("budget_at", "calls", "penalty_until", "read_budget", "write_bytes", "write_records")

    def __init__(self, limits: Limits, now: float) -> None:
        self.calls: dict[str, _Window] = collections.defaultdict(_Window)
        self.read_budget = float(limits.read_bytes_per_s or 0.0)  # one second's worth to start with
        self.budget_at = now
        self.penalty_until = 0.0
        self.write_records = _Window()
        self.write_bytes = _Window()

    def refill(self, limits: Limits, now: float) -> float:
        rate = limits.read_bytes_per_s
        if rate is not None:
            self.read_budget = min(float(rate), self.read_budget + (now - self.budget_at) * rate)
        self.budget_at = now
        return self.read_budget


# --------------------------------------------------------------------------------------------------------
# Encoding


def _sdk_cbor_time(millis: float, _immutable: bool) -> datetime:
    """A CBOR time (tag 1) as the AWS SDK for Java writes it in requests: epoch milliseconds, not RFC 8949's seconds."""
    return datetime.fromtimestamp(millis / 1000, timezone.utc)


def _decode(body: bytes, cbor: bool, request: bool = False, keep_times: bool = False) -> Any:
    """A JSON or CBOR document; ``request``: one the connector's SDK sent (its CBOR times are milliseconds);
    ``keep_times``: CBOR times stay tags, so the document encodes back byte for byte as it came."""
    if not cbor:
        return json.loads(body)
    if keep_times:
        return cbor2.loads(body, semantic_decoders={1: lambda value, _immutable: cbor2.CBORTag(1, value)})
    return cbor2.loads(body, semantic_decoders={1: _sdk_cbor_time}) if request else cbor2.loads(body)


def _has_next_token(body: bytes, cbor: bool) -> bool:
    """Whether a request carries a ``NextToken`` (a later page of a listing)."""
    try:
        document = _decode(body, cbor, request=True)
    except Exception:
        return False
    return isinstance(document, dict) and bool(document.get("NextToken"))


def _arrival_ms(value: Any) -> float:
    """A record's ApproximateArrivalTimestamp in epoch milliseconds: JSON gives seconds; CBOR a tag whose number
    is seconds (RFC 8949) or, from emulators made for the Java SDK, milliseconds (told apart by size)."""
    number = value.value if isinstance(value, cbor2.CBORTag) else value
    if isinstance(number, datetime):
        return number.timestamp() * 1000
    number = float(number or 0)
    return number if number > 1e11 else number * 1000


def _encode(document: Any, cbor: bool) -> bytes:
    return cbor2.dumps(document) if cbor else json.dumps(document, separators=(",", ":")).encode()


def _blob_size(value: Any) -> int:
    """Size of a blob: a CBOR byte string, or base64 text (JSON, and the emulator's CBOR responses)."""
    if value is None:
        return 0
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    text = str(value)
    return len(text) * 3 // 4 - (2 if text.endswith("==") else 1 if text.endswith("=") else 0)


def _stream_name(request: dict) -> str:
    name = request.get("StreamName")
    if name:
        return str(name)
    arn = str(request.get("StreamARN") or "")
    return arn.rsplit(":stream/", 1)[-1] if arn else UNKNOWN


SIGV4_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
# The credential scope of a SigV4 signature: key/date/region/service/aws4_request.
SIGV4_SERVICE = re.compile(r"Credential=[^/,\s]+/[^/]+/[^/]+/([^/]+)/aws4_request")
# Who the proxy says was denied: the tests' callers stand for one IAM user of the emulator's account.
PRINCIPAL_NAME = "kinesis-spark-tests"
ACCESS_DENIED = "AccessDeniedException"
# Kinesis operations whose resource is a consumer (the Service Authorization Reference lists the resource type
# "consumer" for them: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonkinesisdatastreams.html).
CONSUMER_OPERATIONS = frozenset({"DescribeStreamConsumer", "DeregisterStreamConsumer", "SubscribeToShard"})
# The first bytes of an HTTP/2 connection with prior knowledge (RFC 9113 section 3.4).
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def access_denied_message(principal: str, action: str, resource: str) -> str:
    """AWS's message for an implicit deny (no policy allows the action), in the format of the IAM User Guide's
    "Troubleshoot access denied error messages"
    (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html): "User user is not authorized
    to perform action on resource because no type policy allows the action action"."""
    return (
        f"User: {principal} is not authorized to perform: {action} on resource: {resource} "
        f"because no identity-based policy allows the {action} action"
    )


def _signed_service(request: web.Request) -> str:
    """The service a request was signed for (``kinesis``, ``sts``), from its SigV4 credential scope."""
    match = SIGV4_SERVICE.search(request.headers.get("Authorization", ""))
    return match.group(1) if match else ""

# --------------------------------------------------------------------------------------------------------
# The proxy


class _Proxy:
    """The proxy's state and request handling; every method runs on the proxy's event loop thread, except
    ``stats``, ``reset`` and ``set_limits``, which take the same lock."""

    def __init__(
        self,
        target: str,
        limits: Limits,
        region: str,
        access_key: str,
        secret_key: str,
        account_id: str,
        shard_map_ttl_s: float,
    ) -> None:
        self.target = target.rstrip("/")
        self.limits = limits
        self.region, self.access_key, self.secret_key = region, access_key, secret_key
        self.account_id = account_id
        self.shard_map_ttl_s = shard_map_ttl_s
        self.lock = threading.Lock()
        self.shards: dict[tuple[str, str], _ShardState] = {}
        self.op_stats: dict[tuple[str, str, str], _OpStats] = {}
        self.op_totals: dict[str, dict[str, int]] = {}
        # Operation -> [first, last]: monotonic times of the first and last call that served or stored data.
        self.op_spans: dict[str, list[float]] = {}
        self.iterators: dict[str, tuple[str, str, float]] = {}
        self.iterator_expiry: collections.deque[tuple[float, str]] = collections.deque()
        self.shard_maps: dict[str, tuple[float, list[int], list[str]]] = {}
        self.placement_mismatches = 0
        # Control-plane operation -> its calls served over the last second, for the whole account.
        self.account_calls: dict[str, _Window] = collections.defaultdict(_Window)
        self.random = random.Random(limits.fault_seed)
        # (operation, error code) -> [calls that could meet it, times it fired] under a schedule (Limits.faults).
        self.schedules: dict[tuple[str, str], list[int]] = {}
        self.put_entries_seen = 0  # PutRecords entries so far, for refuse_entries_every
        # (stream, shard) -> the highest sequence number a GetRecords response has served (what the reader fetched).
        self.last_served: dict[tuple[str, str], int] = {}
        # Operation -> error code -> epoch times of the faults injected.
        self.fault_log: dict[str, dict[str, list[float]]] = {}
        # Access key id -> {"calls", "with_session_token"}: which credentials signed the requests.
        self.signers: dict[str, dict[str, int]] = {}
        self.session: aiohttp.ClientSession | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: asyncio.base_events.Server | None = None
        # Open HTTP/2 connections, closed when the policy changes (each is judged by the policy it opened under).
        self.h2_connections: set[_H2Front] = set()

    # ---- state helpers (called with the lock held)

    def _shard(self, stream: str, shard: str, now: float) -> _ShardState:
        state = self.shards.get((stream, shard))
        if state is None:
            state = self.shards[(stream, shard)] = _ShardState(self.limits, now)
        return state

    def _stats(self, stream: str, shard: str, op: str) -> _OpStats:
        stats = self.op_stats.get((stream, shard, op))
        if stats is None:
            stats = self.op_stats[(stream, shard, op)] = _OpStats()
        return stats

    def _total(
        self,
        op: str,
        calls: int = 0,
        throttled: int = 0,
        size: int = 0,
        cbor: int = 0,
        faulted: int = 0,
        denied: int = 0,
        delayed: int = 0,
    ) -> None:
        total = self.op_totals.setdefault(op, dict.fromkeys(OPERATION_COUNTERS, 0))
        total["calls"] += calls
        total["denied_calls"] += denied
        total["delayed_calls"] += delayed
        total["throttled_calls"] += throttled
        total["faulted_calls"] += faulted
        total["bytes"] += size
        total["cbor_calls"] += cbor
        if size > 0:
            now = time.monotonic()
            self.op_spans.setdefault(op, [now, now])[1] = now

    def _remember_iterator(self, iterator: str | None, stream: str, shard: str, now: float) -> None:
        if not iterator:
            return
        while self.iterator_expiry and self.iterator_expiry[0][0] <= now:
            expired = self.iterator_expiry.popleft()[1]
            entry = self.iterators.get(expired)
            if entry is not None and entry[2] + ITERATOR_LIFETIME_S <= now:
                del self.iterators[expired]
        self.iterators[iterator] = (stream, shard, now)
        self.iterator_expiry.append((now + ITERATOR_LIFETIME_S, iterator))

    def _calls_over(self, state: _ShardState, op: str, limit: int | None, now: float) -> bool:
        return limit is not None and state.calls[op].expire(now) >= limit

    # ---- public, thread-safe

    def stats(self) -> dict:
        with self.lock:
            streams: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
            for (stream, shard, op), stats in sorted(self.op_stats.items()):
                streams.setdefault(stream, {}).setdefault(shard, {})[op] = stats.as_dict()
            return {
                "streams": streams,
                "operations": {
                    op: {
                        **total,
                        "data_span_s": self._span(op),
                        "faults_by_code": {code: len(t) for code, t in self.fault_log.get(op, {}).items()},
                        "fault_times": {code: list(t) for code, t in self.fault_log.get(op, {}).items()},
                    }
                    for op, total in sorted(self.op_totals.items())
                },
                "placement_mismatches": self.placement_mismatches,
                "last_served": {f"{stream}/{shard}": str(seq) for (stream, shard), seq in self.last_served.items()},
                "signers": {key: dict(counts) for key, counts in self.signers.items()},
                "known_iterators": len(self.iterators),
                "limits": dataclasses.asdict(self.limits),
            }

    def _span(self, op: str) -> float:
        first, last = self.op_spans.get(op, (0.0, 0.0))
        return last - first

    def reset(self) -> None:
        """Zero the counters and forget every shard's calls, budgets and penalties (iterators are kept)."""
        with self.lock:
            self.op_stats.clear()
            self.op_totals.clear()
            self.op_spans.clear()
            self.account_calls.clear()
            self.shards.clear()
            self.placement_mismatches = 0
            self.last_served.clear()
            self.signers.clear()
            self.fault_log.clear()
            self.schedules.clear()

    def set_limits(self, **changes: Any) -> dict:
        with self.lock:
            self.limits = self.limits.updated(**changes)
            limits = dataclasses.asdict(self.limits)
            if "faults" in changes or "fault_seed" in changes:  # schedules and seeded draws start again
                self.schedules.clear()
                self.random = random.Random(self.limits.fault_seed)
        if "allowed_actions" in changes and self.loop is not None:
            self.loop.call_soon_threadsafe(self._close_h2_connections)
        return limits

    def _close_h2_connections(self) -> None:
        for connection in list(self.h2_connections):
            connection.close()

    # ---- IAM policy

    @property
    def principal(self) -> str:
        return f"arn:aws:iam::{self.account_id}:user/{PRINCIPAL_NAME}"

    def allows(self, action: str) -> bool:
        allowed = self.limits.allowed_actions
        return allowed is None or action in allowed

    def _resource(self, op: str, document: dict) -> str:
        """The ARN a Kinesis call acts on, as its IAM action's resource type names it: the consumer for
        :data:`CONSUMER_OPERATIONS`, the stream otherwise (GetRecords' stream is its iterator's)."""
        if op in CONSUMER_OPERATIONS and document.get("ConsumerARN"):
            return str(document["ConsumerARN"])
        stream = _stream_name(document)
        if stream == UNKNOWN and document.get("ShardIterator"):
            with self.lock:
                stream = self.iterators.get(document["ShardIterator"], (UNKNOWN,))[0]
        if stream == UNKNOWN:
            return "*"
        arn = str(document.get("StreamARN") or f"arn:aws:kinesis:{self.region}:{self.account_id}:stream/{stream}")
        if op in CONSUMER_OPERATIONS and document.get("ConsumerName"):
            return f"{arn}/consumer/{document['ConsumerName']}"
        return arn

    async def _denied(self, request: web.Request, op: str, cbor: bool) -> web.Response | None:
        """The answer to a call the policy does not allow (see :attr:`Limits.allowed_actions`), or None."""
        if self.limits.allowed_actions is None or request.path.startswith("/__proxy/"):
            return None
        body = await request.read()
        if _signed_service(request) == "sts":
            params = dict(urllib.parse.parse_qsl(body.decode(errors="replace")))
            name = params.get("Action") or request.headers.get("X-Amz-Target", "").rpartition(".")[2]
            action = f"sts:{name}"
            if self.allows(action):
                return None
            with self.lock:
                self._total(name, calls=1, denied=1)
            return self._sts_denied(action, params.get("RoleArn", "*"))
        if not op or self.allows(f"kinesis:{op}"):
            return None
        try:
            document = _decode(body, cbor, request=True)
        except Exception:
            document = {}
        resource = self._resource(op, document if isinstance(document, dict) else {})
        with self.lock:
            self._total(op, calls=1, denied=1, cbor=int(cbor))
        return self._error(cbor, ACCESS_DENIED, access_denied_message(self.principal, f"kinesis:{op}", resource))

    def _sts_denied(self, action: str, resource: str) -> web.Response:
        """STS's answer to a denied call: error code ``AccessDenied`` in the XML error of STS's Query protocol
        (the service model's ``"protocol":"query"`` and ``xmlNamespace``), with HTTP 403, which STS's
        DecodeAuthorizationMessage reference gives for a request its caller is not authorized to make
        (https://docs.aws.amazon.com/STS/latest/APIReference/API_DecodeAuthorizationMessage.html); the AWS CLI shows
        it as "An error occurred (AccessDenied) when calling the AssumeRole operation: User: ... is not authorized to
        perform: sts:AssumeRole on resource: ..."."""
        message = access_denied_message(self.principal, action, resource)
        body = (
            '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
            f"<Code>AccessDenied</Code><Message>{xml_escape(message)}</Message></Error>"
            f"<RequestId>{uuid.uuid4()}</RequestId></ErrorResponse>"
        )
        return web.Response(
            status=403, body=body.encode(), headers={"Content-Type": "text/xml", "x-amzn-RequestId": str(uuid.uuid4())}
        )

    def h2_verdict(self, headers: dict[str, str], body: bytes) -> tuple[str, str, tuple | None]:
        """What the proxy does with a whole request that came over HTTP/2 (all the AWS SDK sends that way is
        SubscribeToShard): ``("forward", op, None)``; ``("answer", op, (status, headers, payload))``, an error
        answer on the request's stream before any event stream starts (AccessDeniedException when the policy
        denies the action, or an injected fault's code); or ``(fault, op, None)`` for ``ConnectionReset`` and
        ``ConnectionHang``. Counts the call, and the fault or denial."""
        op = headers.get("x-amz-target", "").removeprefix(TARGET_PREFIX)
        cbor = headers.get("content-type", "").split(";")[0].strip().lower() == CBOR_TYPE
        action = f"kinesis:{op}"
        if not self.allows(action):
            try:
                document = _decode(body, cbor, request=True)
            except Exception:
                document = {}
            with self.lock:
                self._total(op, calls=1, denied=1, cbor=int(cbor))
            resource = self._resource(op, document if isinstance(document, dict) else {})
            return "answer", op, self._h2_error(cbor, ACCESS_DENIED, access_denied_message(self.principal, action,
                                                                                          resource), 400)
        fault = self._fault(op, False) if (self.limits.faults or {}).get(op) else None
        with self.lock:
            self._total(op or "HTTP/2 " + headers.get(":path", ""), calls=1, faulted=int(fault is not None),
                        cbor=int(cbor))
            if fault is not None:
                self._fired(op, fault)
        if fault in (CONNECTION_RESET, CONNECTION_HANG):
            return fault, op, None
        if fault is not None:
            message = f"{fault} injected by the limits proxy"
            return "answer", op, self._h2_error(cbor, fault, message, FAULT_STATUS.get(fault, 400))
        return "forward", op, None

    @staticmethod
    def _h2_error(cbor: bool, code: str, message: str, status: int) -> tuple[int, list[tuple[str, str]], bytes]:
        payload = _encode({"__type": code, "message": message}, cbor)
        return status, [
            ("content-type", CBOR_TYPE if cbor else JSON_TYPE),
            ("x-amzn-errortype", code),
            ("x-amzn-requestid", str(uuid.uuid4())),
            ("content-length", str(len(payload))),
        ], payload

    # ---- HTTP

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/__proxy/"):
            return await self._control(request)
        try:
            return await self._handle_kinesis(request)
        except (aiohttp.ClientError, asyncio.TimeoutError) as error:  # the emulator is gone or hung up
            return web.Response(status=502, text=f"limits proxy: {self.target} failed: {error!r}")

    async def _handle_kinesis(self, request: web.Request) -> web.StreamResponse:
        self._record_signer(request)
        target = request.headers.get("X-Amz-Target", "")
        op = target[len(TARGET_PREFIX) :] if target.startswith(TARGET_PREFIX) else ""
        handler = {
            "GetRecords": self._get_records,
            "GetShardIterator": self._get_shard_iterator,
            "PutRecord": self._put_record,
            "PutRecords": self._put_records,
        }.get(op)
        cbor = request.headers.get("Content-Type", "").split(";")[0].strip().lower() == CBOR_TYPE
        denied = await self._denied(request, op, cbor)
        if denied is not None:
            return denied
        delay = (self.limits.delays_s or {}).get(op)
        if delay:
            with self.lock:
                self._total(op, delayed=1)
            await asyncio.sleep(delay)
        codes = (self.limits.faults or {}).get(op)
        token = bool(codes) and EXPIRED_NEXT_TOKEN in codes and _has_next_token(await request.read(), cbor)
        fault = self._fault(op, token) if codes else None
        if fault is not None:
            await request.read()
            with self.lock:
                self._total(op, calls=1, faulted=1, cbor=int(cbor))
                self._fired(op, fault)
            if fault == CONNECTION_HANG:
                await self._hang(request)
            if fault in (CONNECTION_RESET, CONNECTION_HANG):
                return self._reset(request)
            return self._error(cbor, fault, f"{fault} injected by the limits proxy", FAULT_STATUS.get(fault, 400))
        if handler is None or request.method != "POST":
            now = time.monotonic()
            with self.lock:
                quota = (self.limits.control_calls_per_s or {}).get(op)
                over = quota is not None and self.account_calls[op].expire(now) >= quota
                self._total(op or f"{request.method} {request.path}", calls=1, throttled=int(over), cbor=int(cbor))
                if over:
                    return self._error(cbor, LIMIT_EXCEEDED, f"Rate exceeded for {op} under account {self.account_id}.")
                if quota is not None:
                    self.account_calls[op].add(now)
            if op == "ListShards":
                response = await self._list_shards(request, cbor, set(self.limits.omit_shards or ()))
            else:
                response = await self._pass_through(request)
            if op in RESHARDING_OPERATIONS:
                self.shard_maps.clear()
            return response
        with self.lock:
            self._total(op, cbor=int(cbor))
        body = await request.read()
        try:
            document = _decode(body, cbor, request=True)
        except Exception:  # malformed: let the emulator answer it
            return await self._send(request, body)
        if not isinstance(document, dict):
            return await self._send(request, body)
        return await handler(request, body, document, cbor)

    def _record_signer(self, request: web.Request) -> None:
        """Count the request under the access key id of its SigV4 signature (never the secret: it is not sent)."""
        match = SIGV4_CREDENTIAL.search(request.headers.get("Authorization", ""))
        key = match.group(1) if match else "<unsigned>"
        with self.lock:
            counts = self.signers.setdefault(key, {"calls": 0, "with_session_token": 0})
            counts["calls"] += 1
            counts["with_session_token"] += int("X-Amz-Security-Token" in request.headers)

    async def _control(self, request: web.Request) -> web.Response:
        name = request.path.removeprefix("/__proxy/")
        if name == "stats" and request.method == "GET":
            return web.json_response(self.stats())
        if name == "reset" and request.method == "POST":
            self.reset()
            return web.json_response({"reset": True})
        if name == "limits":
            if request.method == "POST":
                try:
                    return web.json_response(self.set_limits(**(await request.json())))
                except (TypeError, ValueError) as error:
                    return web.json_response({"error": str(error)}, status=400)
            return web.json_response(dataclasses.asdict(self.limits))
        return web.json_response({"error": f"unknown {request.method} {request.path}"}, status=404)

    def _forward_headers(self, request: web.Request) -> dict[str, str]:
        return {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}

    async def _forward(self, request: web.Request, body: bytes) -> aiohttp.ClientResponse:
        assert self.session is not None
        return await self.session.request(
            request.method,
            self.target + request.path_qs,
            headers=self._forward_headers(request),
            data=body,
            allow_redirects=False,
            skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),
        )

    @staticmethod
    def _response(status: int, headers: Any, body: bytes) -> web.Response:
        kept = CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in HOP_BY_HOP)
        return web.Response(status=status, body=body, headers=kept)

    async def _send(self, request: web.Request, body: bytes) -> web.Response:
        """Forward a request whose response the proxy does not need to read."""
        async with await self._forward(request, body) as upstream:
            return self._response(upstream.status, upstream.headers, await upstream.read())

    async def _exchange(self, request: web.Request, body: bytes) -> tuple[web.Response, bytes, int]:
        async with await self._forward(request, body) as upstream:
            raw = await upstream.read()
            return self._response(upstream.status, upstream.headers, raw), raw, upstream.status

    async def _pass_through(self, request: web.Request) -> web.StreamResponse:
        """Forward anything else unchanged, streaming the response (event streams included)."""
        body = await request.read()
        async with await self._forward(request, body) as upstream:
            out = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for key, value in upstream.headers.items():
                if key.lower() not in HOP_BY_HOP:
                    out.headers.add(key, value)
            if upstream.content_length is not None:
                out.content_length = upstream.content_length
            await out.prepare(request)
            async for chunk in upstream.content.iter_any():
                await out.write(chunk)
            await out.write_eof()
            return out

    @staticmethod
    async def _hang(request: web.Request) -> None:
        """Answers nothing until the client closes the connection, or HANG_MAX_S pass."""
        deadline = time.monotonic() + HANG_MAX_S
        while time.monotonic() < deadline and request.transport is not None and not request.transport.is_closing():
            await asyncio.sleep(0.05)

    @staticmethod
    def _reset(request: web.Request) -> web.Response:
        """Resets the request's connection (RST, not a clean close); the response returned is never sent."""
        transport = request.transport
        if transport is not None:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
        return web.Response(status=500)

    def _throttled(self, cbor: bool, stream: str, shard: str) -> web.Response:
        return self._error(cbor, THROTTLED, self._rate_message(stream, shard))

    def _future_timestamp(self, document: dict) -> str | None:
        """AWS's refusal of an AT_TIMESTAMP time ahead of Kinesis's clock, if the request asks for one."""
        offset = self.limits.kinesis_clock_offset_s
        if offset is None or document.get("ShardIteratorType") != "AT_TIMESTAMP":
            return None
        stamp = document.get("Timestamp")
        # JSON carries epoch seconds; CBOR a tagged time, which cbor2 decodes to a datetime.
        seconds = stamp.timestamp() if hasattr(stamp, "timestamp") else float(stamp)
        kinesis_now = time.time() + offset
        if seconds <= kinesis_now:
            return None
        return (
            "The timestampInMillis parameter cannot be greater than the currentTimestampInMillis. "
            f"timestampInMillis: {int(seconds * 1000)}, currentTimestampInMillis: {int(kinesis_now * 1000)}"
        )

    def _fault(self, op: str, has_next_token: bool) -> str | None:
        """The error code to answer this call of ``op`` with instead of serving it (:attr:`Limits.faults`):
        a schedule that is due first, in the order listed, else a draw among the shares."""
        with self.lock:
            codes = (self.limits.faults or {}).get(op) or {}
            chosen: str | None = None
            for code, spec in codes.items():
                if not isinstance(spec, dict) or (code == EXPIRED_NEXT_TOKEN and not has_next_token):
                    continue
                state = self.schedules.setdefault((op, code), [0, 0])
                state[0] += 1
                every, times = spec["every"], spec.get("times")
                due = state[0] >= spec.get("first", every) + state[1] * every
                if chosen is None and due and (times is None or state[1] < times):
                    chosen = code
                    state[1] += 1
            if chosen is not None:
                return chosen
            shares = [(code, spec) for code, spec in codes.items() if not isinstance(spec, dict)]
            if not shares:
                return None
            draw = self.random.random()
            for code, share in shares:
                if draw < share:
                    return None if code == EXPIRED_NEXT_TOKEN and not has_next_token else code
                draw -= share
            return None

    def _fired(self, op: str, code: str) -> None:
        """Counts a fault injected now (called with the lock held)."""
        self.fault_log.setdefault(op, {}).setdefault(code, []).append(round(time.time(), 3))

    @staticmethod
    def _error(cbor: bool, code: str, message: str, status: int = 400) -> web.Response:
        """An error answer with ``code`` in the header and the body, as Kinesis sends them."""
        return web.Response(
            status=status,
            body=_encode({"__type": code, "message": message}, cbor),
            headers={
                "Content-Type": CBOR_TYPE if cbor else JSON_TYPE,
                "x-amzn-ErrorType": code,
                "x-amzn-RequestId": str(uuid.uuid4()),
            },
        )

    def _rate_message(self, stream: str, shard: str) -> str:
        return f"Rate exceeded for shard {shard} in stream {stream} under account {self.account_id}."

    # ---- reads

    async def _get_shard_iterator(
        self, request: web.Request, body: bytes, document: dict, cbor: bool
    ) -> web.Response:
        stream, shard = _stream_name(document), str(document.get("ShardId") or UNKNOWN)
        refusal = self._future_timestamp(document)
        if refusal is not None:
            with self.lock:
                self._total("GetShardIterator", calls=1, faulted=1)
                self._fired("GetShardIterator", "InvalidArgumentException")
            return self._error(cbor, "InvalidArgumentException", refusal)
        now = time.monotonic()
        with self.lock:
            state = self._shard(stream, shard, now)
            throttled = self._calls_over(
                state, "GetShardIterator", self.limits.get_shard_iterator_calls_per_s, now
            )
            self._stats(stream, shard, "GetShardIterator").call(now, throttled)
            self._total("GetShardIterator", calls=1, throttled=int(throttled))
            if throttled:
                return self._throttled(cbor, stream, shard)
            state.calls["GetShardIterator"].add(now)
        response, raw, status = await self._exchange(request, body)
        if status == 200:
            try:
                iterator = _decode(raw, cbor).get("ShardIterator")
            except Exception:
                iterator = None
            with self.lock:
                self._remember_iterator(iterator, stream, shard, time.monotonic())
        return response

    async def _get_records(
        self, request: web.Request, body: bytes, document: dict, cbor: bool
    ) -> web.Response:
        iterator = document.get("ShardIterator")
        now = time.monotonic()
        with self.lock:
            stream, shard, _ = self.iterators.get(iterator, (UNKNOWN, UNKNOWN, now))
            known = shard != UNKNOWN
            throttled = False
            if known:
                limits = self.limits
                state = self._shard(stream, shard, now)
                throttled = (
                    now < state.penalty_until
                    or self._calls_over(state, "GetRecords", limits.get_records_calls_per_s, now)
                    or (limits.read_bytes_per_s is not None and state.refill(limits, now) < 0)
                )
            self._stats(stream, shard, "GetRecords").call(now, throttled)
            self._total("GetRecords", calls=1, throttled=int(throttled))
            if throttled:
                return self._throttled(cbor, stream, shard)
            if known:
                state.calls["GetRecords"].add(now)
        response, raw, status = await self._exchange(request, body)
        if status != 200:
            return response
        try:
            result = _decode(raw, cbor, keep_times=True)
            records = result.get("Records") or []
            next_iterator = result.get("NextShardIterator")
        except Exception:
            return response
        horizon = self._trim_horizon_ms()
        if horizon is not None:
            kept = [r for r in records if _arrival_ms(r.get("ApproximateArrivalTimestamp")) >= horizon]
            if len(kept) < len(records):
                with self.lock:
                    self.op_totals.setdefault("GetRecords", {})["trimmed_records"] = (
                        self.op_totals["GetRecords"].get("trimmed_records", 0) + len(records) - len(kept)
                    )
                records = result["Records"] = kept
                response = self._response(status, response.headers, _encode(result, cbor))
        size = sum(_blob_size(r.get("Data")) for r in records)
        now = time.monotonic()
        with self.lock:
            self._stats(stream, shard, "GetRecords").served(now, len(records), size)
            self._total("GetRecords", size=size)
            if known and records:
                served = int(records[-1].get("SequenceNumber") or 0)
                self.last_served[(stream, shard)] = max(served, self.last_served.get((stream, shard), 0))
            if known:
                limits = self.limits
                state = self._shard(stream, shard, now)
                state.refill(limits, now)
                if limits.read_bytes_per_s is not None:
                    state.read_budget -= size
                if limits.large_response_bytes is not None and size >= limits.large_response_bytes:
                    state.penalty_until = now + limits.large_response_penalty_s
                self._remember_iterator(next_iterator, stream, shard, now)
        return response

    async def _list_shards(self, request: web.Request, cbor: bool, omitted: set[str]) -> web.Response:
        """ListShards, counting the shards it lists (``shards_listed``) and the calls with a ``ShardFilter``
        (``filtered_calls``), leaving out the ``omit_shards``, and applying the AFTER_SHARD_ID filter where the
        emulator does not (ferrokinesis lists every shard; the ListShards API reference: the response "includes
        all the shards, starting with the shard whose ID immediately follows the ShardId that you provided")."""
        body = await request.read()
        try:
            shard_filter = _decode(body, cbor, request=True).get("ShardFilter") or {}
        except Exception:  # malformed: the emulator answers it
            shard_filter = {}
        after = shard_filter.get("ShardId") if shard_filter.get("Type") == "AFTER_SHARD_ID" else None
        response, raw, status = await self._exchange(request, body)
        if status != 200:
            return response
        result = _decode(raw, cbor, keep_times=True)
        shards = result.get("Shards") or []
        # Shard ids sort in the order Kinesis lists them (a fixed-width number).
        asked = [s for s in shards if after is None or s.get("ShardId", "") > after]
        listed = [s for s in asked if s.get("ShardId") not in omitted]
        with self.lock:
            self._total("ListShards")
            total = self.op_totals["ListShards"]
            total["omitted_listings"] = total.get("omitted_listings", 0) + int(len(listed) < len(asked))
            total["omitted_shards"] = total.get("omitted_shards", 0) + len(asked) - len(listed)
            total["shards_listed"] = total.get("shards_listed", 0) + len(listed)
            total["filtered_calls"] = total.get("filtered_calls", 0) + int(bool(shard_filter))
            total["answered_calls"] = total.get("answered_calls", 0) + 1
        if len(listed) == len(shards):
            return response
        result["Shards"] = listed
        return self._response(status, response.headers, _encode(result, cbor))

    def _trim_horizon_ms(self) -> float | None:
        limits = self.limits
        horizons = [h for h in (limits.trim_horizon_ms,) if h is not None]
        if limits.retention_s is not None:
            horizons.append((time.time() - limits.retention_s) * 1000)
        return max(horizons) if horizons else None

    # ---- writes

    async def _shard_map(self, stream: str, document: dict) -> tuple[list[int], list[str]] | None:
        """Starting hash keys (sorted) and ids of the stream's open shards, from a cached ListShards."""
        cached = self.shard_maps.get(stream)
        if cached is not None and time.monotonic() - cached[0] < self.shard_map_ttl_s:
            return cached[1], cached[2]
        shards: list[tuple[int, str]] = []
        request: dict = (
            {"StreamARN": document["StreamARN"]} if document.get("StreamARN") else {"StreamName": stream}
        )
        try:
            while True:
                page = await self._call_target("ListShards", request)
                for shard in page.get("Shards", []):
                    # Open shards only (the emulator writes an explicit null for an open shard's end).
                    if (shard.get("SequenceNumberRange") or {}).get("EndingSequenceNumber") is None:
                        shards.append((int(shard["HashKeyRange"]["StartingHashKey"]), shard["ShardId"]))
                if not page.get("NextToken"):
                    break
                request = {"NextToken": page["NextToken"]}
        except Exception:
            return None
        if not shards:
            return None
        shards.sort()
        starts, ids = [s for s, _ in shards], [i for _, i in shards]
        self.shard_maps[stream] = (time.monotonic(), starts, ids)
        return starts, ids

    async def _call_target(self, op: str, request: dict) -> dict:
        """A Kinesis call of the proxy's own (JSON, SigV4-signed with the configured keys)."""
        assert self.session is not None
        signed = AWSRequest(
            method="POST",
            url=self.target + "/",
            data=json.dumps(request).encode(),
            headers={"Content-Type": JSON_TYPE, "X-Amz-Target": TARGET_PREFIX + op},
        )
        SigV4Auth(Credentials(self.access_key, self.secret_key), "kinesis", self.region).add_auth(signed)
        async with self.session.post(
            self.target + "/", data=signed.body, headers=dict(signed.headers.items())
        ) as response:
            raw = await response.read()
            if response.status != 200:
                raise RuntimeError(f"{op} answered {response.status}: {raw[:200]!r}")
            return json.loads(raw)

    @staticmethod
    def _place(entry: dict, starts: list[int], ids: list[str]) -> str:
        explicit = entry.get("ExplicitHashKey")
        if explicit:
            hash_key = int(explicit)
        else:
            hash_key = int.from_bytes(
                hashlib.md5(str(entry.get("PartitionKey", "")).encode()).digest(), "big"
            )
        return ids[max(0, bisect.bisect_right(starts, hash_key) - 1)]

    @staticmethod
    def _entry_size(entry: dict) -> int:
        return _blob_size(entry.get("Data")) + len(str(entry.get("PartitionKey", "")).encode())

    def _admit_write(self, stream: str, shard: str, size: int, now: float) -> bool:
        """Reserve one record of ``size`` bytes in the shard's write window, if the limits allow it."""
        limits = self.limits
        state = self._shard(stream, shard, now)
        if (
            limits.write_records_per_s is not None
            and state.write_records.expire(now) + 1 > limits.write_records_per_s
        ):
            return False
        if (
            limits.write_bytes_per_s is not None
            and state.write_bytes.expire(now) + size > limits.write_bytes_per_s
        ):
            return False
        state.write_records.add(now, 1)
        state.write_bytes.add(now, size)
        return True

    def _check_placement(self, stream: str, predicted: str, actual: Any) -> None:
        if actual and actual != predicted:
            self.placement_mismatches += 1
            self.shard_maps.pop(stream, None)

    async def _put_record(
        self, request: web.Request, body: bytes, document: dict, cbor: bool
    ) -> web.Response:
        stream = _stream_name(document)
        placement = await self._shard_map(stream, document)
        if placement is None:  # unknown stream or no answer: the emulator says what is wrong
            return await self._send(request, body)
        shard = self._place(document, *placement)
        size = self._entry_size(document)
        now = time.monotonic()
        with self.lock:
            admitted = self._admit_write(stream, shard, size, now)
            stats = self._stats(stream, shard, "PutRecord")
            stats.call(now, not admitted)
            self._total("PutRecord", calls=1, throttled=int(not admitted))
            if not admitted:
                stats.served(now, 0, 0, throttled_records=1)
                return self._throttled(cbor, stream, shard)
        response, raw, status = await self._exchange(request, body)
        if status == 200:
            with self.lock:
                stats.served(time.monotonic(), 1, size)
                self._total("PutRecord", size=size)
                with contextlib.suppress(Exception):  # an answer the proxy cannot read: nothing to check
                    self._check_placement(stream, shard, _decode(raw, cbor).get("ShardId"))
        return response

    async def _put_records(
        self, request: web.Request, body: bytes, document: dict, cbor: bool
    ) -> web.Response:
        stream = _stream_name(document)
        entries = document.get("Records")
        placement = await self._shard_map(stream, document) if isinstance(entries, list) and entries else None
        if placement is None:
            return await self._send(request, body)
        shards = [self._place(entry, *placement) for entry in entries]
        sizes = [self._entry_size(entry) for entry in entries]
        now = time.monotonic()
        with self.lock:
            # An entry refused on the schedule takes none of the shard's write window, as a refused one never does.
            every, first = self.limits.refuse_entries_every, self.put_entries_seen
            self.put_entries_seen += len(entries)
            admitted = [
                not (every and (first + i + 1) % every == 0) and self._admit_write(stream, s, n, now)
                for i, (s, n) in enumerate(zip(shards, sizes, strict=True))
            ]
            for shard in dict.fromkeys(shards):
                self._stats(stream, shard, "PutRecords").call(now, False)
            throttled_count = admitted.count(False)
            self._total("PutRecords", calls=1, throttled=int(throttled_count == len(entries)))
        response: web.Response | None = None
        if throttled_count == len(entries):  # nothing to write: answer without asking the emulator
            result: dict = {"FailedRecordCount": 0, "Records": []}
        else:
            if throttled_count == 0:  # the request goes through untouched
                response, raw, status = await self._exchange(request, body)
            else:  # only the admitted entries go to the emulator
                forwarded = dict(document, Records=[e for e, ok in zip(entries, admitted, strict=True) if ok])
                response, raw, status = await self._exchange(request, _encode(forwarded, cbor))
            if status != 200:  # the emulator refused the whole call: its answer is the answer
                return response
            try:
                result = _decode(raw, cbor)
            except Exception:
                return response
        answered = iter(result.get("Records") or [])
        merged: list[dict] = []
        per_shard: dict[str, list[int]] = {}  # shard -> [records written, bytes written, entries throttled]
        now = time.monotonic()
        with self.lock:
            for shard, size, ok in zip(shards, sizes, admitted, strict=True):
                counts = per_shard.setdefault(shard, [0, 0, 0])
                if ok:
                    entry = next(answered, {})
                    merged.append(entry)
                    if not entry.get("ErrorCode"):
                        counts[0] += 1
                        counts[1] += size
                        self._check_placement(stream, shard, entry.get("ShardId"))
                else:
                    counts[2] += 1
                    merged.append({"ErrorCode": THROTTLED, "ErrorMessage": self._rate_message(stream, shard)})
            for shard, (records, size, throttled) in per_shard.items():
                self._stats(stream, shard, "PutRecords").served(
                    now, records, size, throttled_records=throttled
                )
                self._total("PutRecords", size=size)
        if throttled_count == 0 and response is not None:
            return response
        out = dict(result, Records=merged)
        out["FailedRecordCount"] = int(result.get("FailedRecordCount") or 0) + throttled_count
        out.setdefault("EncryptionType", "NONE")
        return web.Response(
            status=200,
            body=_encode(out, cbor),
            headers={"Content-Type": CBOR_TYPE if cbor else JSON_TYPE, "x-amzn-RequestId": str(uuid.uuid4())},
        )

    # ---- lifecycle

    async def serve(self, sock: socket.socket) -> web.AppRunner:
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
            auto_decompress=False,
        )
        app = web.Application(client_max_size=64 * MIB)  # PutRecords takes up to 5 MB
        app.router.add_route("*", "/{tail:.*}", self.handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        self.loop = asyncio.get_running_loop()
        http1 = runner.server
        assert http1 is not None
        self.server = await self.loop.create_server(lambda: _Sniffer(self, http1), sock=sock)
        return runner

    async def close(self, runner: web.AppRunner) -> None:
        if self.server is not None:
            self.server.close()
        self._close_h2_connections()
        await runner.cleanup()
        if self.session is not None:
            await self.session.close()


class _Sniffer(asyncio.Protocol):
    """The first bytes of a connection tell HTTP/2 with prior knowledge (the preface) from HTTP/1.1; the
    connection is then handed to the protocol that speaks it (aiohttp's handler, or :class:`_H2Front`)."""

    def __init__(self, proxy: _Proxy, http1: Callable[[], asyncio.Protocol]) -> None:
        self.proxy, self.http1 = proxy, http1
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.buffer += data
        head = self.buffer[: len(H2_PREFACE)]
        if len(head) < len(H2_PREFACE) and H2_PREFACE.startswith(head):
            return  # not yet decided
        protocol: asyncio.Protocol = _H2Front(self.proxy) if head == H2_PREFACE else self.http1()
        self.transport.set_protocol(protocol)
        protocol.connection_made(self.transport)
        protocol.data_received(self.buffer)


class _H2Front(asyncio.Protocol):
    """One HTTP/2 connection from a client, which the proxy serves itself: each request, once whole, is judged
    (:meth:`_Proxy.h2_verdict`: the policy, the faults of its operation) and answered with an error, left without an
    answer, its connection reset, or forwarded over the proxy's own HTTP/2 connection to the emulator, whose answer
    (for SubscribeToShard an event stream, for minutes) comes back as it arrives, within the flow-control windows of
    both connections (so a client that reads slowly slows the emulator down, as it would slow Kinesis)."""

    def __init__(self, proxy: _Proxy) -> None:
        self.proxy = proxy
        self.h2 = H2Connection(H2Configuration(client_side=False, header_encoding="utf-8"))
        self.transport: asyncio.Transport | None = None
        self.requests: dict[int, tuple[list[tuple[str, str]], bytearray]] = {}  # client stream -> request so far
        self.upstream: _H2Upstream | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.proxy.h2_connections.add(self)
        self.h2.initiate_connection()
        self.flush()

    def data_received(self, data: bytes) -> None:
        try:
            events = self.h2.receive_data(data)
        except ProtocolError:
            self.flush()
            self.close()
            return
        for event in events:
            self._on_client(event)
        self.flush()

    def _on_client(self, event: object) -> None:
        if isinstance(event, RequestReceived):
            self.requests[event.stream_id] = (list(event.headers), bytearray())  # type: ignore[arg-type]
        elif isinstance(event, DataReceived):
            self.requests.get(event.stream_id, ([], bytearray()))[1].extend(event.data)
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, StreamEnded) and event.stream_id in self.requests:
            headers, body = self.requests.pop(event.stream_id)
            verdict, _, answer = self.proxy.h2_verdict(dict(headers), bytes(body))
            if verdict == "answer":
                assert answer is not None
                status, response_headers, payload = answer
                # The client may have reset the stream in the same read; an error body is far below any window.
                with contextlib.suppress(StreamClosedError, ProtocolError):
                    self.h2.send_headers(event.stream_id, [(":status", str(status)), *response_headers])
                    self.h2.send_data(event.stream_id, payload, end_stream=True)
            elif verdict == CONNECTION_RESET:
                self.reset()
            elif verdict == "forward":
                if self.upstream is None:
                    self.upstream = _H2Upstream(self, self.proxy.target)
                self.upstream.forward(event.stream_id, headers, bytes(body))
            # CONNECTION_HANG: no answer; the client gives the stream (or the connection) up at its timeout.
        elif isinstance(event, WindowUpdated) and self.upstream is not None:
            self.upstream.pump(None if event.stream_id == 0 else event.stream_id)
        elif isinstance(event, StreamReset):
            self.requests.pop(event.stream_id, None)
            if self.upstream is not None:
                self.upstream.cancel(event.stream_id)
        elif isinstance(event, ConnectionTerminated):
            self.close()

    def flush(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(self.h2.data_to_send())

    def reset(self) -> None:
        """Resets the connection (RST, not a clean close): every stream on it ends without a word."""
        if self.transport is not None:
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.proxy.h2_connections.discard(self)
        if self.upstream is not None:
            self.upstream.close()


class _H2Upstream:
    """The proxy's HTTP/2 connection to the emulator for one client connection (:class:`_H2Front`): requests go
    out on streams of its own, and each answer's headers, data and end go back on the client's stream. Data is
    acknowledged to the emulator only once passed to the client, so the client's window bounds what is held here."""

    def __init__(self, front: _H2Front, target: str) -> None:
        self.front = front
        self.h2 = H2Connection(H2Configuration(client_side=True, header_encoding="utf-8"))
        self.writer: asyncio.StreamWriter | None = None
        self.waiting: list[tuple[int, list[tuple[str, str]], bytes]] = []  # until the connection is open
        self.to_client: dict[int, int] = {}  # upstream stream -> client stream
        self.to_upstream: dict[int, int] = {}
        self.held: dict[int, bytearray] = {}  # client stream -> data not yet within the client's window
        self.ended: set[int] = set()  # client streams whose answer ended once their held data is sent
        self.authority = urllib.parse.urlsplit(target).netloc
        self.task = asyncio.ensure_future(self._run(urllib.parse.urlsplit(target)))

    def forward(self, client_stream: int, headers: list[tuple[str, str]], body: bytes) -> None:
        if self.writer is None:
            self.waiting.append((client_stream, headers, body))
            return
        stream = self.h2.get_next_available_stream_id()
        self.to_client[stream], self.to_upstream[client_stream] = client_stream, stream
        self.h2.send_headers(stream, [(k, self.authority if k == ":authority" else v) for k, v in headers])
        self.h2.send_data(stream, body, end_stream=True)  # small (a SubscribeToShard request), within any window
        self.flush()

    def cancel(self, client_stream: int) -> None:
        """The client reset its stream: so is the emulator's."""
        stream = self.to_upstream.get(client_stream)
        self._forget(client_stream)
        if stream is not None:
            with contextlib.suppress(Exception):
                self.h2.reset_stream(stream)
            self.flush()

    def pump(self, client_stream: int | None) -> None:
        """Passes held data to the client as far as its windows allow (``None``: every stream)."""
        for cid in [client_stream] if client_stream is not None else list(self.held):
            held = self.held.get(cid)
            stream = self.to_upstream.get(cid)
            if held is None or stream is None:
                continue
            client = self.front.h2
            try:
                while held:
                    size = min(len(held), client.local_flow_control_window(cid), client.max_outbound_frame_size)
                    if size <= 0:
                        break
                    client.send_data(cid, bytes(held[:size]))
                    del held[:size]
                    self.h2.acknowledge_received_data(size, stream)
                if not held and cid in self.ended:
                    client.end_stream(cid)
                    self._forget(cid)
            except (StreamClosedError, ProtocolError):
                self._forget(cid)
        self.front.flush()
        self.flush()

    def _forget(self, client_stream: int) -> None:
        """Drops a client stream's state; data held for it is acknowledged to the emulator all the same, since it
        counts against the connection's window (h2 gives that back for a closed stream too)."""
        held = self.held.pop(client_stream, None)
        self.ended.discard(client_stream)
        stream = self.to_upstream.pop(client_stream, None)
        self.to_client.pop(stream, None)
        if held and stream is not None:
            with contextlib.suppress(Exception):
                self.h2.acknowledge_received_data(len(held), stream)

    def _on_upstream(self, event: object) -> None:
        cid = self.to_client.get(getattr(event, "stream_id", 0) or 0)
        client = self.front.h2
        if isinstance(event, ResponseReceived) and cid is not None:
            with contextlib.suppress(StreamClosedError, ProtocolError):
                client.send_headers(cid, list(event.headers))  # type: ignore[arg-type]
        elif isinstance(event, DataReceived) and cid is not None:
            self.held.setdefault(cid, bytearray()).extend(event.data)
            padding = event.flow_controlled_length - len(event.data)
            if padding:
                self.h2.acknowledge_received_data(padding, event.stream_id)
            self.pump(cid)
        elif isinstance(event, DataReceived):  # the client's stream is gone
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, (StreamEnded, TrailersReceived)) and cid is not None:
            self.ended.add(cid)
            self.held.setdefault(cid, bytearray())
            self.pump(cid)
        elif isinstance(event, StreamReset) and cid is not None:
            with contextlib.suppress(StreamClosedError, ProtocolError):
                client.reset_stream(cid, event.error_code)
            self._forget(cid)
        elif isinstance(event, ConnectionTerminated):
            self.front.close()

    async def _run(self, target: urllib.parse.SplitResult) -> None:
        try:
            reader, writer = await asyncio.open_connection(target.hostname, target.port)
        except OSError:
            self.front.close()
            return
        self.writer = writer
        try:
            self.h2.initiate_connection()
            for request in self.waiting:
                self.forward(*request)
            self.waiting.clear()
            self.flush()
            while data := await reader.read(65536):
                for event in self.h2.receive_data(data):
                    self._on_upstream(event)
                self.front.flush()
                self.flush()
        except (OSError, ProtocolError, StreamClosedError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self.front.close()

    def flush(self) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(self.h2.data_to_send())

    def close(self) -> None:
        self.task.cancel()
        if self.writer is not None:
            self.writer.close()


def _listen() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


# --------------------------------------------------------------------------------------------------------
# The handle tests use


STARTUP_TIMEOUT_S = 30.0


class LimitsProxy:
    """A running limits proxy in front of ``target_endpoint``; use as a context manager.

    ``limits`` override fields of :class:`Limits` (``LimitsProxy(url, get_records_calls_per_s=None)``);
    ``enabled=False`` starts with every limit off. With ``in_process=False`` (default) the proxy runs in a
    subprocess and the methods below talk to it over HTTP; with ``in_process=True`` it runs on a daemon
    thread of this process. ``region``/``access_key``/``secret_key`` sign the proxy's own ListShards calls.
    """

    def __init__(
        self,
        target_endpoint: str,
        *,
        enabled: bool = True,
        in_process: bool = False,
        region: str = "us-east-1",
        access_key: str = "test",
        secret_key: str = "test",
        account_id: str = "000000000000",
        shard_map_ttl_s: float = 2.0,
        log_path: str | os.PathLike[str] | None = None,
        **limits: Any,
    ) -> None:
        self.target_endpoint = target_endpoint.rstrip("/")
        self.limits = (Limits() if enabled else Limits.disabled()).updated(**limits)
        self.in_process = in_process
        self._settings = dict(
            region=region,
            access_key=access_key,
            secret_key=secret_key,
            account_id=account_id,
            shard_map_ttl_s=shard_map_ttl_s,
        )
        self.log_path = None if log_path is None else os.fspath(log_path)
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._proxy: _Proxy | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: Callable[[], None] | None = None

    @property
    def endpoint(self) -> str:
        if self.port is None:
            raise RuntimeError("proxy not started")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LimitsProxy:
        if self.port is not None:
            raise RuntimeError("proxy already started")
        if self.in_process:
            self._start_thread()
        else:
            self._start_process()
        atexit.register(self.stop)
        return self

    def _start_thread(self) -> None:
        proxy = _Proxy(self.target_endpoint, self.limits, **self._settings)
        loop = asyncio.new_event_loop()
        sock = _listen()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                runner = loop.run_until_complete(proxy.serve(sock))
            except BaseException as error:  # reported to start()
                failure.append(error)
                ready.set()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(proxy.close(runner))
                loop.close()

        thread = threading.Thread(target=run, name="limits-proxy", daemon=True)
        thread.start()
        if not ready.wait(STARTUP_TIMEOUT_S) or failure:
            raise RuntimeError(f"limits proxy did not start: {failure}")
        self._proxy, self._loop, self._thread = proxy, loop, thread
        self.port = sock.getsockname()[1]

    @property
    def pid(self) -> int:
        """The process that serves the proxy: its subprocess, or this one when it runs in process."""
        return self._process.pid if self._process is not None else os.getpid()

    def _start_process(self) -> None:
        command = [
            sys.executable,
            os.path.abspath(__file__),
            "--target",
            self.target_endpoint,
            "--limits",
            json.dumps(dataclasses.asdict(self.limits)),
            "--settings",
            json.dumps(self._settings),
        ]
        if self.log_path is None:
            self.log_path = os.path.join(
                tempfile.gettempdir(), f"kinesis-limits-proxy-{os.getpid()}-{id(self)}.log"
            )
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=log, start_new_session=True
            )
        assert self._process.stdout is not None
        line = self._process.stdout.readline().decode().strip()  # "listening <port>", or EOF on failure
        if not line.startswith("listening "):
            self.stop()
            tail = Path(self.log_path).read_text(errors="replace")[-3000:]
            raise RuntimeError(f"limits proxy did not start (said {line!r}); log {self.log_path}:\n{tail}")
        self.port = int(line.split()[1])

    def stop(self) -> None:
        """Stop the proxy; safe to call more than once."""
        atexit.unregister(self.stop)
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = self._thread = self._proxy = None
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process is not None and process.stdout is not None:
            process.stdout.close()
        self.port = None

    def __enter__(self) -> LimitsProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def cpu_seconds(self) -> float | None:
        """CPU time the proxy process has used so far (subprocess mode on Linux; None otherwise)."""
        if self._process is None:
            return None
        try:
            fields = Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    # ---- counters and limits

    def _control(self, name: str, payload: dict | None = None) -> dict:
        request = urllib.request.Request(
            f"{self.endpoint}/__proxy/{name}",
            data=None if payload is None else json.dumps(payload).encode(),
            method="GET" if payload is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stats(self) -> dict:
        """Every counter (see the module documentation), as a JSON-like dict."""
        return self._proxy.stats() if self._proxy is not None else self._control("stats")

    def reset(self) -> None:
        """Zero the counters and forget every shard's recent calls, read budget and penalty."""
        if self._proxy is not None:
            self._proxy.reset()
        else:
            self._control("reset", {})

    def set_limits(self, **changes: Any) -> dict:
        """Change limits of the running proxy (field names of :class:`Limits`); returns all limits."""
        limits = (
            self._proxy.set_limits(**changes) if self._proxy is not None else self._control("limits", changes)
        )
        self.limits = Limits(**limits)
        return limits

    def shard_stats(
        self, stream: str, shard: str, operation: str, stats: dict | None = None
    ) -> dict[str, int]:
        """The counters of one operation on one shard (zeros if it never saw one)."""
        stats = stats if stats is not None else self.stats()
        return {**EMPTY_OP_STATS, **stats["streams"].get(stream, {}).get(shard, {}).get(operation, {})}

    def operation_stats(self, operation: str, stats: dict | None = None) -> dict[str, Any]:
        """Calls, throttled calls, faulted calls, bytes, CBOR-encoded calls and trimmed records of one operation over
        all shards,
        ``data_span_s``: seconds from the first to the last call that served or stored data, and the faults
        injected by error code (``faults_by_code``, with their epoch times in ``fault_times``)."""
        stats = stats if stats is not None else self.stats()
        return {
            **dict.fromkeys(OPERATION_COUNTERS, 0),
            "data_span_s": 0.0,
            "faults_by_code": {},
            "fault_times": {},
            **stats["operations"].get(operation, {}),
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Kinesis per-shard limits proxy (HTTP/1.1, 127.0.0.1)")
    parser.add_argument("--target", required=True, help="emulator endpoint, e.g. http://127.0.0.1:4568")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--limits", default="{}", help="JSON object of Limits fields")
    parser.add_argument("--no-limits", action="store_true", help="start with every limit off")
    parser.add_argument(
        "--settings", default="{}", help="JSON: region, access_key, secret_key, account_id, ..."
    )
    args = parser.parse_args(argv)
    limits = (Limits.disabled() if args.no_limits else Limits()).updated(**json.loads(args.limits))
    settings = {
        "region": "us-east-1",
        "access_key": "test",
        "secret_key": "test",
        "account_id": "000000000000",
        "shard_map_ttl_s": 2.0,
        **json.loads(args.settings),
    }
    proxy = _Proxy(args.target, limits, **settings)
    if args.port:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", args.port))
        sock.listen(128)
    else:
        sock = _listen()

    async def run() -> None:
        runner = await proxy.serve(sock)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        print(f"listening {sock.getsockname()[1]}", flush=True)
        await stop.wait()
        await proxy.close(runner)

    asyncio.run(run())


if __name__ == "__main__":
    main()
