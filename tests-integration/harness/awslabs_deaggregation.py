"""Stored records unpacked by an independent KPL de-aggregator (PyPI ``aws-kinesis-agg``), not by our own code."""

from __future__ import annotations

import base64
from collections import Counter

from aws_kinesis_agg.deaggregator import iter_deaggregate_records

KPL_MAGIC = bytes.fromhex("f3899ac2")


def deaggregated_by_awslabs(records: list[dict]) -> Counter:
    """(partition key, data) of every user record in ``records`` (as :meth:`Kinesis.read_all` returns them)."""
    users: Counter = Counter()
    for record in records:
        if record["Data"].startswith(KPL_MAGIC):
            for user in iter_deaggregate_records([record], data_format="Boto3"):
                users[(user["kinesis"]["partitionKey"], base64.b64decode(user["kinesis"]["data"]))] += 1
        else:  # a lone row is put as a plain record, as the KPL does
            users[(record["PartitionKey"], record["Data"])] += 1
    return users
