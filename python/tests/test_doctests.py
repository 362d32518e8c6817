from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import kinesis_spark

MODULES = ["kinesis_spark"] + [
    f"kinesis_spark.{info.name}" for info in pkgutil.iter_modules(kinesis_spark.__path__)
]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    # Examples that need a running session are marked +SKIP; the rest run here. The reader and writer touch
    # the session or DataFrame only in load()/start()/save(), so placeholders serve the option examples.
    result = doctest.testmod(
        importlib.import_module(module),
        extraglobs={"spark": object(), "df": object()},
        optionflags=doctest.ELLIPSIS,
    )
    assert result.failed == 0


def test_every_module_is_examined() -> None:
    assert {"kinesis_spark.errors", "kinesis_spark._reader", "kinesis_spark._writer"} <= set(MODULES)
