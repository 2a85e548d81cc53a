"""Rebuilding a run from its rows: a JSON column is read as the bounded reader reads it,
whichever parser gets there first, and a time the row does not keep is the trace's."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.audit.rebuild import _json, rebuild
from harness_lab.audit.sources import export_lines
from harness_lab.record import RunRecord
from tests.conftest import build
from tests.test_harness import SUCCESS_STEPS

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


def _rebuilt(record: RunRecord, *, later: float = 0.0, **row: Any) -> RunRecord:
    """``record`` rebuilt from its export lines, its trace ``later`` seconds later and its
    row's columns changed as ``row`` says (None: the column is left out)."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for line in export_lines(record):
        table = line.pop("table")
        if table == "trace_event":
            line["t"] += later
        tables.setdefault(table, []).append(line)
    [stored] = tables["diagnosis_run"]
    stored.update(row)
    return rebuild({k: v for k, v in stored.items() if v is not None}, tables["trace_event"],
                   tables.get("tool_invocation", []), tables.get("sse_event", []))


def test_a_row_without_its_times_is_timed_by_its_trace() -> None:
    record = build(SUCCESS_STEPS).run("why is checkout slow?")
    first, last = record.trace[0].t, record.trace[-1].t
    assert first < last
    rebuilt = _rebuilt(record, later=5.0, created_at=None, finished_at=None)
    assert (rebuilt.started_at, rebuilt.finished_at) == (first + 5.0, last + 5.0)


def test_a_row_created_and_finished_at_zero_keeps_its_zeros() -> None:
    record = build(SUCCESS_STEPS).run("why is checkout slow?")
    rebuilt = _rebuilt(record, created_at=0.0, finished_at=0.0)
    assert (rebuilt.started_at, rebuilt.finished_at) == (0.0, 0.0)
