"""A job for the decoding recipes' test: encodes orders the way a producer would, writes them to stream ``orders``
with the connector's sink, runs one recipe of docs/snippets/decoding/ as a user would (its own code, unchanged), and
prints the rows it decoded as one ``RESULT {json}`` line.

``python decode_recipe.py FORMAT RECIPE JAR ORDERS_JSON``, run with the working directory the recipe's
relative paths are in, and the AWS SDK's environment variables pointing at the emulator.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the suite's harness, as the tests import it
from harness.spark import local_spark  # noqa: E402


def main(kind: str, recipe: str, jar: str, orders_json: str) -> None:
    spark = local_spark(f"kinesis-spark-decoding-{kind}", jar=Path(jar))
    orders = spark.createDataFrame(json.loads(orders_json), "order_id STRING, amount DOUBLE, customer STRING")
    fields = F.struct("order_id", "amount", "customer")
    # The recipes' producers: each encodes the orders as its recipe expects them.
    encoders = {"json": F.to_json}
    data = encoders[kind](fields)
    (orders.select(F.col("order_id").alias("partitionKey"), data.alias("data"))
     .write.format("kinesis").option("streamName", "orders").option("region", "us-east-1")
     .mode("append").save())

    exec(compile(Path(recipe).read_text(), recipe, "exec"), {"__name__": "__main__", "spark": spark})  # noqa: S102

    rows = spark.read.parquet(f"decoded/orders-{kind}").select("order_id", "amount", "customer").collect()
    print("RESULT " + json.dumps([list(r) for r in rows]), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
