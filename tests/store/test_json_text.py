"""The store's JSON text is exactly what json.dumps writes, failures included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness_lab.store.json_text import dumps

VALUES: list[Any] = [
    {},
    {"tool": "logs", "invocation_id": "run-1-inv-1", "bytes": 44, "duplicate": False},
    {"a": [1, 2.5, None, True], "é": "ü\n\"quoted\""},
    {3: "int key", True: "bool key", None: "none key", 2.5: "float key"},
    [float("nan"), float("inf"), -float("inf"), 1e300, -0.0],
    {"nested": {"deeper": [{"x": 1}, []]}},
    "plain text",
    7,
    None,
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_text_is_the_text_json_dumps_writes(value: Any) -> None:
    assert dumps(value) == json.dumps(value)


@pytest.mark.parametrize("bad", [{"a": object()}, {(1, 2): "tuple key"}], ids=["value", "key"])
def test_an_unencodable_value_raises_the_type_error_json_dumps_raises(bad: Any) -> None:
    with pytest.raises(TypeError) as ours:
        dumps(bad)
    with pytest.raises(TypeError) as theirs:
        json.dumps(bad)
    assert str(ours.value) == str(theirs.value)


def test_a_value_that_contains_itself_is_a_value_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps(loop)


def test_each_call_starts_with_no_memory_of_earlier_values() -> None:
    shared = {"x": 1}
    assert dumps([shared, shared]) == '[{"x": 1}, {"x": 1}]'
    assert dumps(shared) == '{"x": 1}'
