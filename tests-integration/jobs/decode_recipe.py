"""A job for the decoding recipes' test: encodes orders the way a producer would, writes them to stream ``orders``
with the connector's sink, runs one recipe of docs/snippets/decoding/ as a user would (its own code, unchanged), and
prints the rows it decoded as one ``RESULT {json}`` line.

``python decode_recipe.py FORMAT RECIPE JAR ORDERS_JSON``, run with the working directory the recipe's
relative paths are in, and the AWS SDK's environment variables pointing at the emulator.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the suite's harness, as the tests import it
from harness.spark import SCALA_BINARY, local_spark  # noqa: E402

ORDER_COLUMNS = "order_id STRING, amount DOUBLE, customer STRING"
# The schema the Avro recipe decodes with; the producer below writes with its own copy, as producers do.
AVRO_SCHEMA = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "order_id", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "customer", "type": "string"},
    ],
}
# Spark modules a recipe needs besides the connector, as a user passes them with --packages.
PACKAGES = {"avro": f"org.apache.spark:spark-avro_{SCALA_BINARY}:{pyspark.__version__}"}


def json_records(spark: SparkSession, orders: list[list]) -> DataFrame:
    """One JSON object per order, encoded by Spark's to_json."""
    df = spark.createDataFrame(orders, ORDER_COLUMNS)
    return df.select(F.col("order_id").alias("partitionKey"), F.to_json(F.struct(*df.columns)).alias("data"))


def avro_records(spark: SparkSession, orders: list[list]) -> DataFrame:
    """Avro binary per order (no header), encoded outside Spark by fastavro, as a non-Spark producer would."""
    import fastavro

    schema = fastavro.parse_schema(AVRO_SCHEMA)

    def encode(order: list) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, dict(zip(("order_id", "amount", "customer"), order)))
        return out.getvalue()

    return spark.createDataFrame([(o[0], bytearray(encode(o))) for o in orders], "partitionKey STRING, data BINARY")


ENCODERS = {"json": json_records, "avro": avro_records}


def main(kind: str, recipe: str, jar: str, orders_json: str) -> None:
    conf = {"spark.jars.packages": PACKAGES[kind]} if kind in PACKAGES else None
    spark = local_spark(f"kinesis-spark-decoding-{kind}", jar=Path(jar), conf=conf)
    records = ENCODERS[kind](spark, json.loads(orders_json))
    (records.write.format("kinesis").option("streamName", "orders").option("region", "us-east-1")
     .mode("append").save())

    exec(compile(Path(recipe).read_text(), recipe, "exec"), {"__name__": "__main__", "spark": spark})  # noqa: S102

    rows = spark.read.parquet(f"decoded/orders-{kind}").select("order_id", "amount", "customer").collect()
    print("RESULT " + json.dumps([list(r) for r in rows]), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
