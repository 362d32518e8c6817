"""Users of the awslabs connector switch by changing nothing: ``format("aws-kinesis")`` with its ``kinesis.*``
option names reads the same records as our own names do."""

from __future__ import annotations

from harness.emulator import ACCESS_KEY, SECRET_KEY
from test_polling_source import assert_delivered_exactly, assert_load_fails, numbered


def test_aws_kinesis_format_with_awslabs_option_names(spark, emulator, kinesis, stream, sink):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(300))
    source = (
        spark.readStream.format("aws-kinesis")
        .option("kinesis.region", "us-east-1")
        .option("kinesis.streamName", name)
        .option("kinesis.consumerType", "GetRecords")
        .option("kinesis.endpointUrl", emulator.endpoint)
        .option("kinesis.startingposition", "TRIM_HORIZON")
        .option("kinesis.awsAccessKeyId", ACCESS_KEY)
        .option("kinesis.awsSecretKey", SECRET_KEY)
        .load()
    )
    # The awslabs columns in their order (its streamName is our stream), then shardId, which it does not have.
    assert source.columns == [
        "data", "streamName", "partitionKey", "sequenceNumber", "approximateArrivalTimestamp", "shardId",
    ]  # fmt: skip
    rows = sink.wait_for_rows(sink.start(source.withColumnRenamed("streamName", "stream")), 300)
    assert_delivered_exactly(rows, puts, name)


def test_an_awslabs_consumer_type_outside_its_values_is_refused_at_load(spark, emulator, stream):
    name = stream(1)

    def load():
        return (
            spark.readStream.format("aws-kinesis")
            .option("kinesis.region", "us-east-1")
            .option("kinesis.streamName", name)
            .option("kinesis.endpointUrl", emulator.endpoint)
            .option("kinesis.consumerType", "Push")
            .load()
        )

    assert_load_fails(load, "kinesis.consumerType", "'Push'", "'GetRecords' or 'SubscribeToShard'")
