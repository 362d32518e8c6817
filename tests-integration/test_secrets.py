"""Secret option values (access key id, secret key, session token) appear nowhere a user or an operator can look:
the driver's logs at DEBUG level, `explain()`, what the Spark UI's SQL and streaming pages are built from,
progress reports, the checkpoint, and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness.emulator import REGION
from harness.spark import sql_status_store
from test_polling_source import LOAD_ERRORS, numbered

SECRETS = {
    "awsAccessKey": "AKIDLEAKCHECK7Q3Z",
    "awsSecretKey": "SecretLeakCheck/9x2Vw+kq",
    "awsSessionToken": "TokenLeakCheck4Fq8Zr2Lm",
}


def assert_no_secret(where: str, text: str) -> None:
    for option, value in SECRETS.items():
        assert value not in text, f"the value of option {option!r} appears in {where}"


class DebugLog:
    """A log4j2 file appender on the root logger at DEBUG, attached through Py4J for the test's duration."""

    def __init__(self, spark, path: Path) -> None:
        self.spark, self.path = spark, path
        jvm = spark.sparkContext._jvm
        core = jvm.org.apache.logging.log4j.core
        self.level = jvm.org.apache.logging.log4j.Level
        self.context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
        layout = core.layout.PatternLayout.newBuilder().withPattern("%d %p %c: %m%n%throwable").build()
        self.appender = (
            core.appender.FileAppender.newBuilder().withFileName(str(path)).setName("secret-check").setLayout(layout).build()
        )

    def __enter__(self) -> DebugLog:
        self.appender.start()
        config = self.context.getConfiguration()
        config.addAppender(self.appender)
        config.getRootLogger().addAppender(self.appender, self.level.ALL, None)
        self.spark.sparkContext.setLogLevel("DEBUG")
        self.context.updateLoggers()
        return self

    def __exit__(self, *exc: object) -> None:
        self.spark.sparkContext.setLogLevel("WARN")
        config = self.context.getConfiguration()
        config.getRootLogger().removeAppender("secret-check")
        self.context.updateLoggers()
        self.appender.stop()


def ui_sources(spark) -> str:
    """The SQL executions as the UI's SQL tab renders them (descriptions, details, physical plans)."""
    executions = sql_status_store(spark).executionsList()
    parts = []
    for i in range(executions.size()):
        execution = executions.apply(i)
        parts += [str(execution.description()), str(execution.details()), str(execution.physicalPlanDescription())]
    return "\n".join(parts)


def test_secrets_appear_nowhere(spark, kinesis, stream, emulator, sink, tmp_path, capsys):
    name = stream(1)
    kinesis.put_records(name, numbered(50))
    log_path = tmp_path / "debug.log"

    with DebugLog(spark, log_path):
        source = (
            spark.readStream.format("kinesis")
            .option("streamName", name)
            .option("region", REGION)
            .option("endpoint", emulator.endpoint)
            .option("initialPosition", "trim_horizon")
            .options(**SECRETS)
            .load()
        )
        source.explain(True)
        query = sink.start(source)
        sink.wait_for_rows(query, 50, settle_s=1.0)
        query.explain(True)
        progress = json.dumps([json.loads(p.json) if hasattr(p, "json") else p for p in query.recentProgress])
        status = json.dumps(query.status)
        query.stop()

        # Errors raised with the secrets among the options: a bad option, a missing stream.
        errors = []
        for bad in ({"maxFetchRate": "9"}, {"streamName": "no-such-stream-here"}):
            options = {"streamName": name, "region": REGION, "endpoint": emulator.endpoint, **SECRETS, **bad}
            with pytest.raises(LOAD_ERRORS) as failure:
                spark.readStream.format("kinesis").options(**options).load()
            errors.append(str(failure.value))

    log = log_path.read_text(errors="replace")
    assert len(log) > 10_000 and " DEBUG " in log, "the DEBUG log should have captured the run"
    assert "io.kinesisspark" in log, "the connector's own loggers should appear in the DEBUG log"
    assert_no_secret("the DEBUG log", log)
    printed = capsys.readouterr()
    assert "Kinesis" in printed.out, "explain() output should have been captured"
    assert_no_secret("explain() output", printed.out + printed.err)
    assert_no_secret("progress reports and status", progress + status)
    assert_no_secret("the UI's SQL executions", ui_sources(spark))
    for error in errors:
        assert_no_secret("an error message", error)
    checkpoint_files = [p for p in sink.checkpoint.rglob("*") if p.is_file()]
    assert any("offsets" in str(p) for p in checkpoint_files), checkpoint_files
    for path in checkpoint_files:
        assert_no_secret(f"checkpoint file {path}", path.read_bytes().decode("utf-8", errors="replace"))
