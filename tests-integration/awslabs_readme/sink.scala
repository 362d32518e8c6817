// From the awslabs connector's README (github.com/awslabs/spark-sql-kinesis-connector, Apache License 2.0):
// "Using the Kinesis Sink", quoted byte for byte as the README has it. It needs the `kinesis` DataFrame of a source
// example. test_awslabs_migration.py replaces its two literals that only make sense on AWS (the endpoint and the
// checkpoint folder) before pasting it, and also pastes it without its groupBy line (see the test).

// Cast data into string and group by data column
kinesis
  .selectExpr("CAST(rand() AS STRING) as partitionKey","CAST(data AS STRING)").as[(String,String)]
  .groupBy("data").count()
  .writeStream
  .format("aws-kinesis")
  .outputMode("append")
  .option("kinesis.region", "us-east-1")
  .option("kinesis.streamName", "sparkSinkTest")
  .option("kinesis.endpointUrl", "https://kinesis.us-east-1.amazonaws.com")
  .option("checkpointLocation", "/path/to/checkpoint")
  .start()
