from pyspark.sql.avro.functions import from_avro

# The producer put each order as Avro binary (the record's fields only: no container-file header, no schema
# registry prefix), written with this schema:
order_schema = """{"type": "record", "name": "Order", "fields": [
    {"name": "order_id", "type": "string"},
    {"name": "amount", "type": "double"},
    {"name": "customer", "type": "string"}]}"""

orders = (spark.readStream.format("kinesis")
          .option("streamName", "orders")
          .option("region", "us-east-1")
          .option("initialPosition", "trim_horizon")
          .load()
          # from_avro decodes the BINARY column directly.
          .select(from_avro("data", order_schema).alias("order"), "approximateArrivalTimestamp")
          .select("order.*", "approximateArrivalTimestamp"))

query = (orders.writeStream.format("parquet")
         .option("path", "decoded/orders-avro")
         .option("checkpointLocation", "checkpoints/orders-avro")
         .trigger(availableNow=True)
         .start())
query.awaitTermination()
