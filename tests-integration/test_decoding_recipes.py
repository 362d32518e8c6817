"""The user guide's recipes for decoding ``data`` (docs/snippets/decoding/: json.py, avro.py) decode exactly what a
producer encoded.

Each recipe runs unchanged in a job of its own (``jobs/decode_recipe.py``), which first writes orders encoded the
recipe's way (JSON by Spark's ``to_json``; Avro binary by fastavro) to stream ``orders`` through the connector's sink.
The Avro job loads ``spark-avro`` of the running Spark with ``spark.jars.packages``, from Maven Central.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from harness.emulator import ACCESS_KEY, REGION, SECRET_KEY
from harness.jobs import job_result, run_checked
from harness.spark import connector_jar

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "docs" / "snippets" / "decoding"
JOB = Path(__file__).resolve().parent / "jobs" / "decode_recipe.py"
ORDERS = [[f"o-{i}", round(i * 1.25, 2), f"customer-{i % 4}"] for i in range(40)]
RECIPES_TESTED = ["json.py", "avro.py"]


@pytest.mark.parametrize("recipe", RECIPES_TESTED)
def test_recipe_decodes_what_was_encoded(recipe, kinesis, emulator, tmp_path):
    kinesis.create_stream("orders", 2)
    try:
        env = {
            **os.environ,
            "AWS_ENDPOINT_URL_KINESIS": emulator.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
        }
        kind = recipe.removesuffix(".py")
        command = [sys.executable, str(JOB), kind, str(RECIPES / recipe), str(connector_jar()), json.dumps(ORDERS)]
        rows = job_result(run_checked(command, env=env, cwd=tmp_path, timeout=600))
    finally:
        kinesis.delete_and_wait("orders")
    assert sorted(map(tuple, rows)) == sorted(map(tuple, ORDERS))
