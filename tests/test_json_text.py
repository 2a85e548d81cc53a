"""JSON writers give exactly the text json.dumps writes, failures included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness_lab.json_text import dumps, json_writer

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


CANONICAL: dict[str, Any] = {"sort_keys": True, "separators": (",", ":"), "default": str}


@pytest.mark.parametrize("value", VALUES[:3] + VALUES[5:], ids=range(len(VALUES) - 2))
def test_a_writer_with_options_writes_what_json_dumps_writes_with_them(value: Any) -> None:
    assert json_writer(**CANONICAL)(value) == json.dumps(value, **CANONICAL)


def test_a_writer_with_a_default_encodes_what_json_cannot_through_it() -> None:
    assert json_writer(**CANONICAL)({"b": object, "a": 1}) == '{"a":1,"b":"<class \'object\'>"}'


def test_a_writer_refuses_keys_it_cannot_sort_as_json_dumps_does() -> None:
    with pytest.raises(TypeError) as ours:
        json_writer(sort_keys=True)({1: "a", "b": 2})
    with pytest.raises(TypeError) as theirs:
        json.dumps({1: "a", "b": 2}, sort_keys=True)
    assert str(ours.value) == str(theirs.value)


def test_a_dict_that_contains_itself_is_a_value_error_for_a_writer_with_options() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = {"again": loop}
    with pytest.raises(ValueError, match="Circular reference"):
        json_writer(**CANONICAL)(loop)


def test_a_writer_can_be_used_again_after_refusing_a_value() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        dumps(loop)
    with pytest.raises(TypeError):
        dumps({"a": object()})
    assert dumps({"a": [1, {"b": None}]}) == '{"a": [1, {"b": null}]}'
