"""The client side of the Spark Connect real-time resharding test, run in the pyspark-client environment: a real-time
query (40 s batches) of STREAM through a Connect server into :class:`harness.real_time.RealTimeSink` under ROOT, until
a file ``ROOT/STOP`` appears (the test merges the shards meanwhile); then the query's progress reports go to
``ROOT/progress.json``.

``python connect_real_time_merge.py URL ENDPOINT STREAM ROOT``
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the harness, beside this directory

from harness import real_time  # noqa: E402
from harness.real_time import RealTimeSink  # noqa: E402
from kinesis_spark import InitialPosition, KinesisReader  # noqa: E402
from kinesis_spark.errors import translate_errors  # noqa: E402
from pyspark import cloudpickle  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

REGION = "us-east-1"


def main(url: str, endpoint: str, stream: str, root: str) -> int:
    # The server's Python workers cannot import the harness: its ForeachWriter travels by value.
    cloudpickle.register_pickle_by_value(real_time)
    spark = SparkSession.builder.remote(url).getOrCreate()
    df = (KinesisReader(spark).stream_names(stream).region(REGION).endpoint(endpoint).credentials("a", "b")
          .initial_position(InitialPosition.trim_horizon()).load())
    query = RealTimeSink(Path(root)).start(df, "40 seconds")
    stop = Path(root) / "STOP"
    try:
        while not stop.exists():
            with translate_errors():
                error = query.exception()
                if error is not None:
                    raise error
            time.sleep(0.5)
    finally:
        query.stop()
        reports = [json.loads(p.json) if hasattr(p, "json") else p for p in query.recentProgress]
        (Path(root) / "progress.json").write_text(json.dumps(reports))
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
