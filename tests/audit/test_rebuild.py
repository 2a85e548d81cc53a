"""A JSON column is read as the bounded reader reads it, whichever parser gets there first."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.audit.rebuild import _json

NESTED_64 = "[" * 64 + "]" * 64


def _nested(depth: int) -> Any:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(("text", "value"), [
    ('{"tool": "logs", "bytes": 35, "duplicate": false, "fallback_type": null}',
     {"tool": "logs", "bytes": 35, "duplicate": False, "fallback_type": None}),
    (' {"a": [1, 2.5, {"b": "c"}]}\n', {"a": [1, 2.5, {"b": "c"}]}),
    ('"quoted"', "quoted"),
    ("-9223372036854775808", -9223372036854775808),
    ("9223372036854775807", 9223372036854775807),
    (NESTED_64, _nested(64)),
    ("plain words", "plain words"),
    ('{"a": 1} and more', '{"a": 1} and more'),
    ("", ""),
])
def test_a_json_column_within_bounds_reads_as_its_value(text: str, value: Any) -> None:
    assert _json(text) == value


@pytest.mark.parametrize(("text", "refusal"), [
    ("NaN", "NaN is not a number JSON allows"),
    ('{"t": Infinity}', "Infinity is not a number JSON allows"),
    ("[1e400]", "the number 1e400 is too large"),
    ("9223372036854775808", "the integer 9223372036854775808 is outside the 64-bit range"),
    ('{"n": -9223372036854775809}', "the integer -9223372036854775809 is outside the 64-bit"),
    ("[" * 65 + "]" * 65, "nested 65 levels deep, more than the 64"),
])
def test_a_json_column_beyond_the_bounds_is_refused_by_the_bounded_reader(
        text: str, refusal: str) -> None:
    with pytest.raises(ValueError, match=f"^a JSON column: {refusal}"):
        _json(text)


def test_a_value_that_is_not_text_is_kept() -> None:
    detail = {"already": "parsed"}
    assert _json(detail) is detail and _json(None) is None
