"""The IAM policies of docs/permissions.md, enforced: each way of reading and writing works with exactly its
documented policy, and fails without any one of its actions, with the connector's error naming that action.

The policies are read from the page itself (the fenced ```json block after each ``<!-- policy: NAME -->``), so the
page cannot drift from what runs here. The limits proxy enforces them (``allowed_actions``) in front of the
emulator and answers a call they do not allow as AWS does (AccessDeniedException; for SubscribeToShard on its
HTTP/2 stream); a second one in front of moto's STS enforces ``sts:AssumeRole``. One proxy per service for the
whole module, its policy changed per test, and the suite's one SparkSession: each case is one AvailableNow query
or one batch write.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from pathlib import Path

import pytest
from kinesis_spark.errors import KinesisCredentialsError, translate

from harness.awslabs_deaggregation import deaggregated_by_awslabs
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.limits_proxy import LimitsProxy
from harness.moto import MotoServer
from test_efo import consumers, wait_for_consumers
from test_polling_source import numbered

DOC = Path(__file__).resolve().parents[1] / "docs" / "permissions.md"
POLICY_BLOCK = re.compile(r"<!-- policy: (?P<name>[\w-]+) -->\s*```json\n(?P<body>.*?)```", re.DOTALL)
ROLE = "arn:aws:iam::123456789012:role/kinesis-reader"
RECORDS = 40


def documented_policies() -> dict[str, list[str]]:
    """Policy name -> the actions its Allow statements list, from docs/permissions.md."""
    policies: dict[str, list[str]] = {}
    for block in POLICY_BLOCK.finditer(DOC.read_text()):
        actions: list[str] = []
        for statement in json.loads(block["body"])["Statement"]:
            assert statement["Effect"] == "Allow", f"policy {block['name']}: only Allow statements are modelled"
            listed = statement["Action"]
            actions += [listed] if isinstance(listed, str) else listed
        policies[block["name"]] = actions
    return policies


POLICIES = documented_policies()


def without(policy: str) -> list[tuple[str, str]]:
    return [(policy, action) for action in POLICIES[policy]]


@pytest.fixture(scope="module")
def front(emulator, tmp_path_factory):
    """The limits proxy with no quota, only a policy: every Kinesis call of the module goes through it."""
    with LimitsProxy(emulator.endpoint, enabled=False, log_path=tmp_path_factory.getbasetemp() / "iam-front.log") as p:
        yield p


@pytest.fixture(scope="module")
def sts_front(tmp_path_factory):
    """moto's STS behind a limits proxy that enforces the STS part of a policy."""
    base = tmp_path_factory.getbasetemp()
    with (
        MotoServer(base / "iam-moto-sts.log") as sts,
        LimitsProxy(sts.endpoint, enabled=False, log_path=base / "iam-sts-front.log") as p,
    ):
        yield p


@pytest.fixture
def policy(front, spark):
    """``policy(actions)``: the Kinesis front allows exactly ``actions`` from now on, with fresh counters."""

    def allow(actions: list[str]) -> None:
        front.set_limits(allowed_actions=[a for a in actions if a.startswith("kinesis:")])
        front.reset()

    yield allow
    for query in spark.streams.active:
        query.stop()


def source(spark, endpoint: str, stream: str, **options: str):
    reader = spark.readStream.format("kinesis").option("streamName", stream).option("region", REGION)
    reader = reader.option("endpoint", endpoint).option("initialPosition", "trim_horizon")
    reader = reader.option("awsAccessKey", ACCESS_KEY).option("awsSecretKey", SECRET_KEY)
    return reader.options(**options).load()


def read_available(spark, tmp_path: Path, build) -> list[bytes]:
    """The data of every record ``build()``'s source holds now, read by one AvailableNow query (``build`` runs
    inside the caller's ``pytest.raises`` too: ``load()`` is where some calls are made)."""
    name = f"iam_{uuid.uuid4().hex[:12]}"
    query = (
        build()
        .select("data")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / name))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(120), "the AvailableNow query did not finish in 120 s"
    finally:
        query.stop()
    return [bytes(row.data) for row in spark.table(name).collect()]


def assert_denied(failure: BaseException, front: LimitsProxy, action: str) -> None:
    """The failure is the connector's, says which action is missing, and the front did refuse that action."""
    error = translate(failure)
    assert isinstance(error, KinesisCredentialsError), f"{type(error).__name__}: {error}"
    message = str(error)
    assert f"lack the IAM permission {action}; AWS said: AccessDeniedException: User: " in message, message
    assert f"is not authorized to perform: {action} on resource: arn:aws:kinesis:" in message, message
    operation = action.split(":", 1)[1]
    assert front.operation_stats(operation)["denied_calls"] > 0, front.stats()["operations"]


def test_every_mode_has_a_documented_policy():
    assert set(POLICIES) == {"polling", "efo", "sink", "assume-role"}, POLICIES
    for name, actions in POLICIES.items():
        assert actions and len(actions) == len(set(actions)), (name, actions)


@pytest.mark.parametrize(("mode", "options"), [("polling", {}), ("efo", {"consumerMode": "efo"})])
def test_reading_works_with_exactly_the_documented_policy(
    spark, kinesis, stream, front, policy, tmp_path, mode, options
):
    name = stream(2)
    puts = kinesis.put_records(name, numbered(RECORDS))
    policy(POLICIES[mode])
    data = read_available(spark, tmp_path, lambda: source(spark, front.endpoint, name, **options))
    assert Counter(data) == Counter(p.data for p in puts)
    stats = front.stats()["operations"]
    assert all(op.get("denied_calls", 0) == 0 for op in stats.values()), stats
    if mode == "efo":  # the records came by subscriptions through the front, not by polling around it
        assert front.operation_stats("SubscribeToShard")["calls"] >= 2, stats
        assert front.operation_stats("GetRecords")["calls"] == 0, stats


@pytest.mark.parametrize(("mode", "action"), without("polling") + without("efo"))
def test_reading_without_one_action_fails_naming_it(spark, kinesis, stream, front, policy, tmp_path, mode, action):
    name = stream(1)
    kinesis.put_records(name, numbered(RECORDS))
    policy([a for a in POLICIES[mode] if a != action])
    options = {"consumerMode": "efo"} if mode == "efo" else {}
    with pytest.raises(Exception) as failure:
        read_available(spark, tmp_path, lambda: source(spark, front.endpoint, name, **options))
    assert_denied(failure.value, front, action)


def write(spark, endpoint: str, stream: str, rows: list[tuple[str, bytes]], **options: str) -> None:
    frame = spark.createDataFrame(rows, "partitionKey string, data binary")
    writer = frame.write.format("kinesis").option("streamName", stream).option("region", REGION)
    writer = writer.option("endpoint", endpoint).option("awsAccessKey", ACCESS_KEY).option("awsSecretKey", SECRET_KEY)
    writer.options(**options).mode("append").save()


def test_writing_works_with_exactly_the_documented_policy(spark, kinesis, stream, front, policy):
    name = stream(2)
    rows = numbered(RECORDS)
    policy(POLICIES["sink"])
    write(spark, front.endpoint, name, rows, aggregation="true")
    assert deaggregated_by_awslabs(kinesis.read_all(name)) == Counter(rows)
    assert front.operation_stats("ListShards")["calls"] > 0 and front.operation_stats("PutRecords")["calls"] > 0


@pytest.mark.parametrize(("mode", "action"), without("sink"))
def test_writing_without_one_action_fails_naming_it(spark, kinesis, stream, front, policy, mode, action):
    name = stream(1)
    policy([a for a in POLICIES[mode] if a != action])
    with pytest.raises(Exception) as failure:
        write(spark, front.endpoint, name, numbered(RECORDS), aggregation="true")
    assert_denied(failure.value, front, action)
    assert kinesis.read_all(name) == [], "nothing was written"


def test_writing_without_list_shards_still_writes_when_not_aggregating(spark, kinesis, stream, front, policy):
    """ListShards only paces the sink (docs/permissions.md): denied, the sink is paced by refusal instead."""
    name = stream(1)
    rows = numbered(RECORDS)
    policy([a for a in POLICIES["sink"] if a != "kinesis:ListShards"])
    write(spark, front.endpoint, name, rows)
    assert Counter((r["PartitionKey"], r["Data"]) for r in kinesis.read_all(name)) == Counter(rows)
    assert front.operation_stats("ListShards")["denied_calls"] > 0


def assume_role_source(spark, front: LimitsProxy, sts_front: LimitsProxy, stream: str, session: str):
    return source(spark, front.endpoint, stream, roleArn=ROLE, roleSessionName=session, stsEndpoint=sts_front.endpoint)


def test_a_role_is_assumed_with_exactly_the_documented_policy(
    spark, kinesis, stream, front, sts_front, policy, tmp_path
):
    """The starting keys may only assume the role; the role's credentials make the (polling) Kinesis calls."""
    name = stream(1)
    puts = kinesis.put_records(name, numbered(RECORDS))
    policy(POLICIES["polling"])
    sts_front.set_limits(allowed_actions=POLICIES["assume-role"])
    sts_front.reset()
    session = f"iam-{uuid.uuid4().hex[:8]}"  # a provider of its own, not one cached by another test
    data = read_available(spark, tmp_path, lambda: assume_role_source(spark, front, sts_front, name, session))
    assert Counter(data) == Counter(p.data for p in puts)
    signers = front.stats()["signers"]
    assert signers and all(key.startswith("ASIA") for key in signers), f"not signed by the role: {signers}"
    assert sts_front.operation_stats("POST /")["calls"] > 0, sts_front.stats()["operations"]


def test_without_assume_role_the_query_fails_naming_it(spark, kinesis, stream, front, sts_front, policy, tmp_path):
    name = stream(1)
    policy(POLICIES["polling"])
    sts_front.set_limits(allowed_actions=[a for a in POLICIES["assume-role"] if a != "sts:AssumeRole"])
    sts_front.reset()
    session = f"iam-{uuid.uuid4().hex[:8]}"
    with pytest.raises(Exception) as failure:
        read_available(spark, tmp_path, lambda: assume_role_source(spark, front, sts_front, name, session))
    error = translate(failure.value)
    assert isinstance(error, KinesisCredentialsError), f"{type(error).__name__}: {error}"
    assert ROLE in str(error) and "AccessDenied" in str(error), str(error)
    assert "is not authorized to perform: sts:AssumeRole on resource: " + ROLE in str(error), str(error)
    assert sts_front.operation_stats("AssumeRole")["denied_calls"] > 0, sts_front.stats()["operations"]


@pytest.mark.parametrize("deregister_allowed", [True, False])
def test_consumer_deregistration_needs_its_own_action(
    spark, kinesis, stream, front, policy, tmp_path, deregister_allowed
):
    """With requireConsumerDeregistration=true the stopping query deregisters its consumer when the policy allows
    kinesis:DeregisterStreamConsumer; when it does not, the query still ends well and the consumer stays."""
    name = stream(1)
    puts = kinesis.put_records(name, numbered(RECORDS))
    policy(POLICIES["efo"] + (["kinesis:DeregisterStreamConsumer"] if deregister_allowed else []))
    options = {"consumerMode": "efo", "consumerName": "iam-deregistered", "requireConsumerDeregistration": "true"}
    data = read_available(spark, tmp_path, lambda: source(spark, front.endpoint, name, **options))
    assert Counter(data) == Counter(p.data for p in puts)
    denied = front.operation_stats("DeregisterStreamConsumer")["denied_calls"]
    if deregister_allowed:
        assert denied == 0
        wait_for_consumers(kinesis, name, {})  # DELETING for a moment, then gone
    else:
        assert denied == 1
        assert consumers(kinesis, name) == {"kinesis_spark_iam-deregistered": "ACTIVE"}


@pytest.mark.parametrize(
    ("mode", "operation", "action"),
    [("polling", "GetRecords", "kms:Decrypt"), ("sink", "PutRecords", "kms:GenerateDataKey")],
)
def test_a_kms_key_refused_names_the_kms_permission(
    spark, kinesis, stream, front, policy, tmp_path, mode, operation, action
):
    """The emulator cannot encrypt, so Kinesis's answer for a stream whose KMS key the caller may not use
    (KMSAccessDeniedException, in the GetRecords and PutRecords API references) is injected by the front."""
    name = stream(1)
    kinesis.put_records(name, numbered(RECORDS))
    policy(POLICIES[mode])
    front.set_limits(faults={operation: {"KMSAccessDeniedException": 1.0}})
    try:
        with pytest.raises(Exception) as failure:
            if mode == "sink":
                write(spark, front.endpoint, name, numbered(RECORDS))
            else:
                read_available(spark, tmp_path, lambda: source(spark, front.endpoint, name))
    finally:
        front.set_limits(faults=None)
    error = translate(failure.value)
    assert isinstance(error, KinesisCredentialsError), f"{type(error).__name__}: {error}"
    assert f"lack the IAM permission {action}; AWS said: KMSAccessDeniedException: " in str(error), str(error)
