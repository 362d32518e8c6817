"""InitialPosition.per_shard and the per-shard checks of option ``initialPosition`` (no Spark needed)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from kinesis_spark import InitialPosition, KinesisOptionError
from kinesis_spark._position import check_initial_position

SHARD = "shardId-000000000000"


def test_per_shard_builds_the_json_the_connector_reads():
    position = InitialPosition.per_shard(
        {
            SHARD: InitialPosition.after_sequence_number("495"),
            "shardId-000000000001": InitialPosition.latest(),
        },
        default=InitialPosition.at_timestamp(datetime(2024, 1, 1, tzinfo=timezone.utc)),
    )
    assert json.loads(position.option_value) == {
        "default": {"at_timestamp": "2024-01-01T00:00:00.000Z", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"},
        "shards": {SHARD: {"after_sequence_number": "495"}, "shardId-000000000001": "latest"},
    }
    check_initial_position(position.option_value, ["orders"])


def test_per_shard_of_several_streams():
    position = InitialPosition.per_shard(streams={"a": {SHARD: InitialPosition.at_sequence_number("7")}})
    assert json.loads(str(position)) == {"streams": {"a": {SHARD: {"at_sequence_number": "7"}}}}
    check_initial_position(str(position), ["a", "b"])
    with pytest.raises(KinesisOptionError, match="among those read \\(b\\), not 'a'"):
        check_initial_position(str(position), ["b"])


def test_a_sequence_number_is_not_a_default():
    with pytest.raises(KinesisOptionError, match="a sequence number or shard_end belongs to one shard"):
        InitialPosition.per_shard(default=InitialPosition.at_sequence_number("1"))


@pytest.mark.parametrize("bad", ["", "12x", "١٢", 12])
def test_sequence_numbers_are_decimal_strings(bad):
    with pytest.raises(ValueError, match="decimal digits"):
        InitialPosition.after_sequence_number(bad)  # type: ignore[arg-type]


def test_shards_need_one_stream_to_belong_to():
    value = json.dumps({"shards": {SHARD: "latest"}})
    check_initial_position(value)  # streams unknown: checked later, with them
    several = 'instead of "shards" when reading several streams \\(a, b\\)'
    with pytest.raises(KinesisOptionError, match=several):
        check_initial_position(value, ["a", "b"])


def test_per_shard_takes_initial_positions_only():
    with pytest.raises(TypeError, match="takes InitialPosition values"):
        InitialPosition.per_shard({SHARD: "latest"})  # type: ignore[dict-item]


def test_a_position_can_name_a_user_record_inside_an_aggregate():
    position = InitialPosition.per_shard(
        {
            SHARD: InitialPosition.after_sequence_number("495", sub_sequence_number=3),
            "shardId-000000000001": InitialPosition.at_sequence_number("7", 0),
        }
    )
    assert json.loads(str(position))["shards"] == {
        SHARD: {"after_sequence_number": "495", "sub_sequence_number": 3},
        "shardId-000000000001": {"at_sequence_number": "7", "sub_sequence_number": 0},
    }
    check_initial_position(str(position), ["orders"])
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(ValueError, match="a sub-sequence number is a whole number of at least 0"):
            InitialPosition.after_sequence_number("495", bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("position", "expected"),
    [
        ({"after_sequence_number": "1", "sub_sequence_number": -1}, "KPL aggregate), not -1."),
        ({"after_sequence_number": "1", "sub_sequence_number": "3"}, 'KPL aggregate), not "3".'),
        ({"after_sequence_number": "1", "sub_sequence_number": True}, "KPL aggregate), not true."),
        ({"sub_sequence_number": 1}, """aggregate) or 'shard_end', not {"sub_sequence_number":1}."""),
    ],
)
def test_a_bad_sub_sequence_number_is_refused_as_the_jvm_refuses_it(position, expected):
    value = json.dumps({"shards": {SHARD: position}})
    with pytest.raises(KinesisOptionError) as refused:
        check_initial_position(value, ["orders"])
    message = str(refused.value)
    assert f"the position of shard '{SHARD}' of stream 'orders'" in message and message.endswith(expected), (
        message
    )


def test_shard_end_names_a_shard_read_to_its_end_and_only_per_shard():
    position = InitialPosition.per_shard(
        {SHARD: InitialPosition.shard_end()}, default=InitialPosition.latest()
    )
    assert json.loads(str(position)) == {"default": "latest", "shards": {SHARD: "shard_end"}}
    check_initial_position(str(position), ["orders"])
    check_initial_position(json.dumps({"shards": {SHARD: " Shard_End "}}), ["orders"])
    with pytest.raises(KinesisOptionError, match="a sequence number or shard_end belongs to one shard"):
        check_initial_position('{"default": "shard_end"}', ["orders"])
    with pytest.raises(KinesisOptionError, match="Invalid value 'shard_end' for option 'initialPosition'"):
        check_initial_position("shard_end")
