"""Shared machinery for the integration tests and the examples.

A local Kinesis emulator (:mod:`harness.emulator`), a boto3 view of it that the tests use to create,
fill and reshard streams (:mod:`harness.kinesis`), a local SparkSession with the connector jar
(:mod:`harness.spark`) and a replay-safe micro-batch sink (:mod:`harness.sink`).
"""
