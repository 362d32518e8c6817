from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

# The producer put one JSON object per record: {"order_id": "o-1", "amount": 12.5, "customer": "ana"}
order = StructType([
    StructField("order_id", StringType()),
    StructField("amount", DoubleType()),
    StructField("customer", StringType()),
])

orders = (spark.readStream.format("kinesis")
          .option("streamName", "orders")
          .option("region", "us-east-1")
          .option("initialPosition", "trim_horizon")
          .load()
          # data is BINARY: cast it to a string, then parse it.
          .select(F.from_json(F.col("data").cast("string"), order).alias("order"), "approximateArrivalTimestamp")
          .select("order.*", "approximateArrivalTimestamp"))

query = (orders.writeStream.format("parquet")
         .option("path", "decoded/orders-json")
         .option("checkpointLocation", "checkpoints/orders-json")
         .trigger(availableNow=True)
         .start())
query.awaitTermination()
