"""Print the per-shard start that continues where another consumer stopped, without starting a query.

The other consumer is a KCL application (its lease table) or an awslabs connector query (its checkpoint):

    python -m kinesis_spark.kcl_start_cli --stream orders --lease-table orders-app --option region=us-east-1
    python -m kinesis_spark.kcl_start_cli --stream orders --awslabs-checkpoint hdfs:///checkpoints/orders

The JSON printed is option ``initialPosition``'s value, to review and then give a query in place of
option ``kclLeaseTable`` or ``awslabsCheckpointLocation``; the notes go to standard error. Credentials come
from the environment (the AWS SDK's default chain), or as options: ``--option`` shows them in a process list,
``--options-json FILE`` (``-`` for standard input, a JSON object of option names to values) does not.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import _option_keys as keys
from ._error_types import KinesisSparkError
from ._switch_start import switch_start


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return its exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m kinesis_spark.kcl_start_cli",
        description="Print option initialPosition's value that continues where a KCL application or an "
        "awslabs connector query stopped.",
    )
    parser.add_argument("--stream", required=True, help="the stream (option streamName)")
    old = parser.add_mutually_exclusive_group(required=True)
    old.add_argument("--lease-table", help="the KCL application's lease table (its name)")
    old.add_argument("--awslabs-checkpoint", help="the awslabs connector query's checkpoint location")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another option of the query, such as region=us-east-1 or dynamoDbEndpoint=http://...",
    )
    parser.add_argument(
        "--options-json",
        metavar="FILE",
        help="options as a JSON object of names to values, from FILE or - (standard input): keys stay "
        "off the command line",
    )
    args = parser.parse_args(argv)
    options: dict[str, str] = {}
    if args.options_json is not None:
        text = sys.stdin.read() if args.options_json == "-" else Path(args.options_json).read_text()
        loaded = json.loads(text)
        if not isinstance(loaded, dict):
            parser.error("--options-json takes a JSON object of option names to values")
        options.update({str(name): str(value) for name, value in loaded.items()})
    for option in args.option:
        name, sep, value = option.partition("=")
        if not sep:
            # Not echoed: it may be a key given without its name.
            parser.error("--option takes NAME=VALUE, and one was given without '='")
        options[name] = value
    try:
        if args.lease_table is not None:
            options[keys.KCL_LEASE_TABLE] = args.lease_table
        else:
            options[keys.AWSLABS_CHECKPOINT_LOCATION] = args.awslabs_checkpoint
        start = switch_start(args.stream, **options)
    except KinesisSparkError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for note in start.notes:
        print(f"note: {note}", file=sys.stderr)
    print(start.initial_position)
    return 0


if __name__ == "__main__":
    sys.exit(main())
