"""The client side of the Spark Connect real-time resharding test, run in the pyspark-client environment: a real-time
query (40 s batches) of STREAM through a Connect server, each row's batch, shard and the time it reached the writer
appended to a file under ROWS, until a file ``ROWS-STOP`` appears (the test merges the shards meanwhile); then the
query's progress reports go to ``ROWS-progress.json``.

``python connect_real_time_merge.py URL ENDPOINT STREAM ROWS``
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from kinesis_spark import InitialPosition, KinesisReader
from kinesis_spark.errors import translate_errors

REGION = "us-east-1"


class ShardTimes:
    """A ForeachWriter: each task attempt appends ``batch<TAB>shardId<TAB>epoch seconds`` per row to a file of its
    own under ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.batch = epoch_id
        self.file = open(f"{self.root}/p{partition_id}-e{epoch_id}-{uuid.uuid4().hex}", "a")  # noqa: SIM115
        return True

    def process(self, row: Any) -> None:
        self.file.write(f"{self.batch}\t{row.shardId}\t{time.time()}\n")
        self.file.flush()

    def close(self, error: BaseException | None) -> None:
        self.file.close()


def main(url: str, endpoint: str, stream: str, rows: str) -> int:
    spark = SparkSession.builder.remote(url).getOrCreate()
    df = (KinesisReader(spark).stream_names(stream).region(REGION).endpoint(endpoint).credentials("a", "b")
          .initial_position(InitialPosition.trim_horizon()).load())
    query = (df.writeStream.foreach(ShardTimes(rows)).outputMode("update")
             .option("checkpointLocation", f"{rows}-checkpoint").trigger(realTime="40 seconds").start())
    stop = Path(f"{rows}-STOP")
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
        Path(f"{rows}-progress.json").write_text(json.dumps(reports))
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
