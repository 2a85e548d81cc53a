"""The rows both stores write: shaped like the records' to_dict(), JSON columns as text."""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from harness_lab.states import InvocationStatus, TraceEventStatus, TraceEventType, TracePhase
from harness_lab.store.errors import (
    EVENT_COLUMNS,
    StoreError,
    event_row,
    event_values,
    invocation_row,
    require_running,
)
from harness_lab.store.sql import trace_event
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent


def event(detail: object) -> TraceEvent:
    """A TOOL_PROGRESS event of run r1 with ``detail``."""
    return TraceEvent("r1", 3, 2, TraceEventType.TOOL_PROGRESS, TracePhase.TOOL,
                      TraceEventStatus.OK, detail)  # type: ignore[arg-type]


def test_an_event_row_is_the_events_dict_with_its_detail_as_json_text() -> None:
    ev = event({"tool": "logs", "bytes": 44})
    row = event_row(ev)
    expected = {"run_id": "r1", "seq": 3, "t": 2.0, "type": "TOOL_PROGRESS", "phase": "TOOL",
                "status": "OK", "detail": '{"tool": "logs", "bytes": 44}'}
    assert row == expected
    assert list(row) == list(ev.to_dict())
    assert [type(row[k]) for k in ("type", "phase", "status", "t")] == [str, str, str, float]


def test_an_events_values_are_its_row_in_the_tables_column_order() -> None:
    ev = event({"tool": "logs"})
    assert list(EVENT_COLUMNS) == [c.name for c in trace_event.c]
    assert event_values(ev) == ("r1", 3, 2.0, "TOOL_PROGRESS", "TOOL", "OK", '{"tool": "logs"}')


def test_a_read_only_mapping_detail_is_written_as_its_items() -> None:
    row = event_row(event(MappingProxyType({"reason": "deadline"})))
    assert json.loads(row["detail"]) == {"reason": "deadline"}


def test_a_detail_that_is_not_json_names_the_run_and_the_event() -> None:
    with pytest.raises(StoreError, match=r"run r1: trace event 3 detail is not JSON"):
        event_row(event({"when": object()}))


def test_an_invocation_scope_that_is_not_json_names_the_invocation() -> None:
    inv = CanonicalInvocation("r1-inv-1", "r1", 0, "logs", {"since": object()}, "{}",
                              InvocationStatus.PROJECTING, 0)
    with pytest.raises(StoreError, match=r"run r1: invocation r1-inv-1 scope is not JSON"):
        invocation_row(inv)


def test_every_value_a_store_holds_is_storable() -> None:
    from harness_lab.store.errors import unstorable

    assert unstorable({"tokens": 2**63 - 1, "low": -(2**63), "query": "caf\u00e9 \U0001f600",
                       "none": None, "ratio": 0.5}) is None


def test_an_integer_beyond_64_bits_is_named_with_its_length() -> None:
    from harness_lab.store.errors import unstorable

    assert unstorable({"query": "ok", "total_tokens": 10**30}) == (
        "total_tokens is 31 digits long, beyond the 64-bit integer a store holds")
    assert unstorable({"input_tokens": -(2**63) - 1}) is not None


def test_a_lone_surrogate_is_named_with_its_position() -> None:
    from harness_lab.store.errors import unstorable

    assert unstorable({"query": "why \ud800 slow?"}) == (
        "query holds '\\ud800' at character 4, which is not valid Unicode text "
        "(a lone surrogate)")


def test_a_count_the_store_cannot_hold_becomes_an_empty_column() -> None:
    from harness_lab.store.errors import storable_int

    assert storable_int(2**63 - 1) == 2**63 - 1
    assert storable_int(2**63) is None


def test_only_a_running_run_may_change() -> None:
    require_running("r1", "RUNNING")
    with pytest.raises(StoreError, match="run r1 has no diagnosis_run row"):
        require_running("r1", None)
    with pytest.raises(StoreError, match="run r1 is already SUCCESS, not RUNNING"):
        require_running("r1", "SUCCESS")
