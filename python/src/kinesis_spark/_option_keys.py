"""Option names as users write them (matching is case-insensitive), as in the JVM's ``KinesisOptionKeys``."""

from __future__ import annotations

STREAM_NAME = "streamName"
REGION = "region"
ENDPOINT = "endpoint"
INITIAL_POSITION = "initialPosition"
AWS_ACCESS_KEY = "awsAccessKey"
AWS_SECRET_KEY = "awsSecretKey"
AWS_SESSION_TOKEN = "awsSessionToken"
ROLE_ARN = "roleArn"
ROLE_EXTERNAL_ID = "roleExternalId"
ROLE_SESSION_NAME = "roleSessionName"
ROLE_SESSION_DURATION = "roleSessionDuration"
STS_ENDPOINT = "stsEndpoint"
STS_REGION = "stsRegion"
CREDENTIALS_PROVIDER_CLASS = "credentialsProviderClass"
CREDENTIALS_PROVIDER_PARAM = "credentialsProviderParam"
CA_BUNDLE = "caBundle"
INSECURE_TRUST_ALL_CERTIFICATES = "insecureTrustAllCertificates"

MAX_RECORDS_PER_FETCH = "maxRecordsPerFetch"
FAIL_ON_DATA_LOSS = "failOnDataLoss"
MAX_FETCH_RATE = "maxFetchRate"
MIN_FETCH_PERIOD = "minFetchPeriod"
MAX_FETCH_DURATION = "maxFetchDuration"
FETCH_BUFFER_SIZE = "fetchBufferSize"
SHARDS_PER_TASK = "shardsPerTask"
SHARD_FETCH_INTERVAL = "shardFetchInterval"
COALESCE_THRESHOLD_BLOCK_SIZE = "coalesceThresholdBlockSize"
COALESCE_BIN_SIZE = "coalesceBinSize"
MAX_SHARDS_PER_DESCRIBE = "maxShardsPerDescribe"
MAX_RECORDS_PER_TRIGGER = "maxRecordsPerTrigger"
MAX_BYTES_PER_TRIGGER = "maxBytesPerTrigger"
ALLOW_STREAM_REMOVAL = "allowStreamRemoval"
INCLUDE_SUB_SEQUENCE_NUMBER = "includeSubSequenceNumber"
REAL_TIME_TASKS = "realTimeTasks"

# Enhanced fan-out (Databricks names).
CONSUMER_MODE = "consumerMode"
CONSUMER_NAME = "consumerName"
CONSUMER_NAME_PREFIX = "consumerNamePrefix"
REQUIRE_CONSUMER_DEREGISTRATION = "requireConsumerDeregistration"
CONSUMER_REFRESH_INTERVAL = "consumerRefreshInterval"

# A start where another consumer stopped: a KCL application's lease table or an awslabs connector query's
# checkpoint, and DynamoDB's connection (for either) where it differs from the stream's.
KCL_LEASE_TABLE = "kclLeaseTable"
AWSLABS_CHECKPOINT_LOCATION = "awslabsCheckpointLocation"
AWSLABS_METADATA_PATH = "awslabsMetadataPath"
AWSLABS_DYNAMODB_TABLE = "awslabsDynamoDbTable"
DYNAMODB_REGION = "dynamoDbRegion"
DYNAMODB_ENDPOINT = "dynamoDbEndpoint"
DYNAMODB_AWS_ACCESS_KEY = "dynamoDbAwsAccessKey"
DYNAMODB_AWS_SECRET_KEY = "dynamoDbAwsSecretKey"
DYNAMODB_AWS_SESSION_TOKEN = "dynamoDbAwsSessionToken"
DYNAMODB_ROLE_ARN = "dynamoDbRoleArn"
DYNAMODB_ROLE_EXTERNAL_ID = "dynamoDbRoleExternalId"

#: Options whose values are secrets, never shown by ``repr()`` of a reader or writer.
SECRET = frozenset(
    {
        AWS_ACCESS_KEY,
        AWS_SECRET_KEY,
        AWS_SESSION_TOKEN,
        ROLE_EXTERNAL_ID,
        DYNAMODB_AWS_ACCESS_KEY,
        DYNAMODB_AWS_SECRET_KEY,
        DYNAMODB_AWS_SESSION_TOKEN,
        DYNAMODB_ROLE_EXTERNAL_ID,
    }
)

#: The prefix of the awslabs connector's option names, which the JVM translates to ours before checking.
AWSLABS_PREFIX = "kinesis."

#: The short name the connector registers with Spark.
FORMAT = "kinesis"
#: The connector's provider class: a name for ``format()`` that no other Kinesis connector answers to (on a
#: runtime with its own ``kinesis`` source, such as Databricks).
PROVIDER_CLASS = "io.kinesisspark.KinesisSourceProvider"
