"""Runs the user guide's Python samples, as a reader would paste them, in one Spark application.

``python run_doc_snippets.py SNIPPETS_JSON JAR WORKDIR``: SNIPPETS_JSON is a list of ``{"id", "code"}``. The
samples name no endpoint and no keys, as they would on AWS: the test runs this job with the AWS SDK's environment
variables (``AWS_ENDPOINT_URL_KINESIS``, ``AWS_ACCESS_KEY_ID``, ...) pointing at the emulator. Each sample runs in
a fresh namespace holding ``spark``; relative output paths (``"checkpoints/..."``, ``"data/..."``) move under
WORKDIR/<id>/, so samples that share a path do not share a checkpoint.

A sample written as an interactive session (``>>>`` lines and what they print) runs as a doctest instead.

A sample's ``query.awaitTermination()`` would wait for ever on a stream: here it waits until the query has
completed a micro-batch (at most two minutes), then stops it. Queries a sample leaves running are treated the same way once it
ends. A sample passes when it raises nothing and every query it started made progress without an error. Prints
one ``RESULT {json}`` line: per sample id, ``"ok"`` or the error.

``SparkSession.builder.remote(url)`` (the Spark Connect page) gives this job's classic session: the sample's
DataFrame code is the same on both, and this job has no Connect server.
"""

from __future__ import annotations

import doctest
import io
import json
import re
import sys
import time
import traceback
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the suite's harness, as the tests import it
from harness.spark import local_spark  # noqa: E402

PROGRESS_TIMEOUT_S = 120.0
RELATIVE_PATH = re.compile(r"""(["'])((?:checkpoints|data|decoded|output)/[^"']*)\1""")


def main(snippets_file: str, jar: str, workdir: str) -> None:
    spark = local_spark("kinesis-spark-doc-snippets", jar=Path(jar))
    started: list[StreamingQuery] = []
    original_start = DataStreamWriter.start

    def start(self: DataStreamWriter, *args: object, **kwargs: object) -> StreamingQuery:
        query = original_start(self, *args, **kwargs)  # type: ignore[arg-type]
        started.append(query)
        return query

    def finish(query: StreamingQuery, timeout: object = None) -> bool:
        # Not processAllAvailable: the test keeps a producer writing, so there is always more available.
        deadline = time.monotonic() + PROGRESS_TIMEOUT_S
        while query.isActive and not query.recentProgress and time.monotonic() < deadline:
            time.sleep(0.2)
        query.stop()
        error = query.exception()
        if error is not None:
            raise error
        return True

    DataStreamWriter.start = start  # type: ignore[method-assign]
    StreamingQuery.awaitTermination = finish  # type: ignore[method-assign,assignment]
    SparkSession.Builder.remote = lambda self, url=None: self  # type: ignore[method-assign,assignment]

    results: dict[str, str] = {}
    for snippet in json.loads(Path(snippets_file).read_text()):
        started.clear()
        base = Path(workdir) / re.sub(r"[^A-Za-z0-9_.-]", "_", snippet["id"])
        code = RELATIVE_PATH.sub(lambda m: f"{m.group(1)}{base / m.group(2)}{m.group(1)}", snippet["code"])
        try:
            if code.lstrip().startswith(">>>"):
                run_doctest(snippet["id"], code, spark)
            else:
                exec(compile(code, snippet["id"], "exec"), {"__name__": "__main__", "spark": spark})  # noqa: S102
            for query in started:
                finish(query)
                if query.lastProgress is None:
                    raise AssertionError(f"query {query.name or query.id} ran no micro-batch")
            results[snippet["id"]] = "ok"
        except BaseException:  # noqa: BLE001 (any failure of a sample is its result)
            results[snippet["id"]] = traceback.format_exc(limit=8)
        finally:
            for query in spark.streams.active:
                query.stop()
    print("RESULT " + json.dumps(results), flush=True)
    spark.stop()


def run_doctest(name: str, code: str, spark: SparkSession) -> None:
    test = doctest.DocTestParser().get_doctest(code, {"spark": spark}, name, name, 0)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.write)
    if runner.failures or not runner.tries:
        raise AssertionError(f"{runner.failures} of {runner.tries} examples failed:\n{report.getvalue()}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
