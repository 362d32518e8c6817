from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "kinesis_spark",
        "kinesis_spark._errors",
        "kinesis_spark._jar",
        "kinesis_spark._reader",
        "kinesis_spark._versions",
    ],
)
def test_docstring_examples(module: str) -> None:
    # Examples that need a running session are marked +SKIP; the rest run here. KinesisReader touches the
    # session only in load(), so a placeholder is enough for the option examples.
    result = doctest.testmod(
        importlib.import_module(module), extraglobs={"spark": object()}, optionflags=doctest.ELLIPSIS
    )
    assert result.failed == 0
