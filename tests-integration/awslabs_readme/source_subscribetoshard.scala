// From the awslabs connector's README (github.com/awslabs/spark-sql-kinesis-connector, Apache License 2.0):
// "Configure Kinesis Source with SubscribeToShard consumer type",
// quoted byte for byte as the README has it. test_awslabs_migration.py pastes it after preamble.scala.

val kinesis = spark
              .readStream
              .format("aws-kinesis")
              .option("kinesis.region", "us-east-2")
              .option("kinesis.streamName", "teststream")
              .option("kinesis.consumerType", "SubscribeToShard")
              .option("kinesis.endpointUrl", endpointUrl)
              .option("kinesis.startingposition", "LATEST")
              .option("kinesis.consumerName", "TestConsumer")
              .load()
