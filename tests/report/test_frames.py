"""runs_frame and friends: ordered categoricals, store read-back and crosstabs."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from harness_lab.config import HarnessConfig
from harness_lab.core.budget import BudgetLimits
from harness_lab.fakes import Evidence, ScriptedTool, call_tool, draft
from harness_lab.record import RunRecord
from harness_lab.report import (
    categorize,
    crosstab,
    invocations_frame,
    read_invocations,
    read_runs,
    read_trace,
    rejections_frame,
    runs_frame,
    sse_frame,
    state_crosstabs,
    trace_frame,
)
from harness_lab.store.sql import SqlRunStore
from tests.conftest import build, standard_tools
from tests.test_harness import SUCCESS_STEPS

LABELS = ["report", "missing context", "timeout", "disconnect"]
"""Scenario names of :func:`four_runs`, in run order."""

def four_harness(store: SqlRunStore) -> list[RunRecord]:
    """Four runs of one harness (5 s deadline) written to ``store``.

    A report, a fallback, a timeout and a disconnect:

    run-000001 SUCCESS/SUCCESS (0-3 s), run-000002 SUCCESS/FALLBACK MISSING_REQUIRED_CONTEXT
    (3-3 s), run-000003 TIMED_OUT/FAILED (3-13 s, deadline 8), run-000004
    CANCELLED/CANCELLED (13-15 s, deadline 18).
    """
    slow = ScriptedTool("slow", default=Evidence(({"line": "x"},), latency_s=10.0))
    steps = [*SUCCESS_STEPS, draft(missing_info=["which service is slow?"]),
             call_tool("slow", {"service": "checkout"}),
             call_tool("logs", {"service": "checkout"})]
    harness = build(steps, tools=standard_tools(slow=slow),
                    config=HarnessConfig(deadline_s=5.0), store=store, across_runs=True)
    records = [harness.run("why is checkout slow?"), harness.run("it is slow"),
               harness.run("slow?")]
    records.append(harness.run("slow?", disconnect_at=harness.env.now + 1.0))
    return records


@cache
def four_runs() -> tuple[SqlRunStore, tuple[RunRecord, ...]]:
    """:func:`four_harness` on an in-memory store, built once and shared by the tests."""
    store = SqlRunStore("sqlite://")
    return store, tuple(four_harness(store))


def budget_run() -> RunRecord:
    """A run whose one-call tool budget runs out with safe progress (a rejection, no limits)."""
    config = HarnessConfig(budget=BudgetLimits(tool_calls=1))
    return build(SUCCESS_STEPS, config=config).run("why is checkout slow?")


def frame() -> pd.DataFrame:
    return runs_frame(four_runs()[1], labels=LABELS)


def test_run_state_categories_are_the_run_states_in_declaration_order() -> None:
    dtype = frame()["run_state"].dtype
    assert list(dtype.categories) == ["RUNNING", "SUCCESS", "FAILED", "CANCELLED", "TIMED_OUT",
                                      "BUDGET_EXHAUSTED"]
    assert dtype.ordered is True


def test_every_state_axis_column_of_the_runs_frame_is_an_ordered_categorical() -> None:
    df = frame()
    axes = ["intent", "run_state", "release_outcome", "fallback_type", "db_status", "sse_state",
            "collection_state", "stop_reason", "semantic_verdict"]
    assert [name for name in df.columns if isinstance(df[name].dtype, pd.CategoricalDtype)
            ] == axes
    assert all(df[name].dtype.ordered for name in axes)


def test_unsorted_value_counts_follow_the_lifecycle_order_with_zeros() -> None:
    counts = frame()["run_state"].value_counts(sort=False)
    assert list(counts.items()) == [("RUNNING", 0), ("SUCCESS", 2), ("FAILED", 0),
                                    ("CANCELLED", 1), ("TIMED_OUT", 1),
                                    ("BUDGET_EXHAUSTED", 0)]


def test_the_runs_frame_has_the_documented_columns_in_order() -> None:
    assert list(frame().columns) == [
        "run_id", "session_id", "scenario", "intent", "run_state", "termination_reason",
        "release_outcome", "fallback_type", "db_status", "sse_state", "collection_state",
        "stop_reason", "semantic_verdict", "agent_steps", "tool_calls", "rejections",
        "model_calls", "tokens", "bytes", "input_tokens", "output_tokens",
        "headroom_model_calls", "headroom_tool_calls", "headroom_tokens", "headroom_bytes",
        "started_at", "finished_at", "duration_s", "error",
    ]


def test_the_runs_frame_has_one_row_per_record_with_its_label_as_scenario() -> None:
    df = frame()
    assert list(df["run_id"]) == ["run-000001", "run-000002", "run-000003", "run-000004"]
    assert list(df["scenario"]) == LABELS
    assert list(df["release_outcome"]) == ["SUCCESS", "FALLBACK", "FAILED", "CANCELLED"]
    assert list(df["duration_s"]) == [3.0, 0.0, 10.0, 2.0]


def test_the_runs_frame_reads_any_iterable_of_records() -> None:
    df = runs_frame(r for r in four_runs()[1])
    assert len(df) == 4
    assert df["scenario"].isna().all()


def test_labels_of_another_length_than_the_records_are_refused() -> None:
    with pytest.raises(ValueError, match="3 labels for 4 records"):
        runs_frame(four_runs()[1], labels=LABELS[:3])


def test_no_records_give_an_empty_frame_with_the_same_columns_and_dtypes() -> None:
    df = runs_frame([])
    assert len(df) == 0
    assert list(df.columns) == list(frame().columns)
    assert list(df["release_outcome"].dtype.categories) == ["SUCCESS", "FALLBACK", "FAILED",
                                                            "CANCELLED"]


def test_headroom_is_a_nullable_integer_missing_where_a_budget_has_no_limit() -> None:
    df = runs_frame([four_runs()[1][0], budget_run()])
    assert str(df["headroom_tool_calls"].dtype) == "Int64"
    assert list(df["headroom_tool_calls"]) == [6, 0]
    assert df["headroom_model_calls"].tolist() == [13, pd.NA]


def test_categorize_casts_known_columns_and_turns_unknown_values_into_missing() -> None:
    df = categorize(pd.DataFrame({"run_state": ["TIMED_OUT", "BOGUS"], "other": [1, 2]}))
    assert list(df["run_state"].astype(object).where(df["run_state"].notna(), None)) == [
        "TIMED_OUT", None]
    assert df["other"].tolist() == [1, 2]


def test_the_trace_frame_has_one_row_per_event_with_categorical_types() -> None:
    df = trace_frame(four_runs()[1][1:2])
    assert list(df.columns) == ["run_id", "seq", "t", "type", "phase", "status", "detail"]
    assert list(df["type"]) == ["RUN_STARTED", "ROUTING_ATTEMPT", "ROUTING_DECISION",
                                "AGENT_MODEL_STEP", "EVIDENCE_GUARD_INITIAL",
                                "RELEASE_DECISION", "RUN_FINISHED"]
    assert list(df["phase"].dtype.categories) == ["RUN", "ROUTING", "RESPONSE", "AGENT", "TOOL",
                                                  "COLLECTION", "GUARD", "RELEASE"]
    assert df["detail"].iloc[2] == {"intent": "DIAGNOSIS"}


def test_the_invocations_frame_has_one_row_per_canonical_invocation() -> None:
    df = invocations_frame(four_runs()[1])
    assert list(df["invocation_id"]) == ["run-000001-inv-1", "run-000001-inv-2",
                                         "run-000003-inv-1", "run-000004-inv-1"]
    assert list(df["status"]) == ["READY", "READY", "ERROR", "ERROR"]
    assert list(df["error_code"].cat.codes) == [-1, -1, 5, 5]  # ABORTED is the sixth code
    assert list(df["tool"]) == ["logs", "metrics", "slow", "logs"]


def test_the_rejections_frame_lists_preflight_rejections() -> None:
    df = rejections_frame([budget_run()])
    assert list(df.columns) == ["run_id", "tool", "reason", "message", "t"]
    assert list(df["reason"]) == ["BUDGET"]
    assert list(df["tool"]) == ["metrics"]
    assert list(df["t"]) == [2.0]


def test_the_sse_frame_lists_each_runs_public_events_in_order() -> None:
    df = sse_frame(four_runs()[1][:1])
    assert list(df["kind"]) == ["metadata", "status", "status", "status", "content", "done"]
    assert df["data"].iloc[-1] == {"outcome": "SUCCESS"}


def test_read_runs_from_the_harness_store_agrees_with_the_runs_frame() -> None:
    store, _ = four_runs()
    stored = read_runs(store)
    assert list(stored["run_id"]) == ["run-000001", "run-000002", "run-000003", "run-000004"]
    assert list(stored["run_state"]) == ["SUCCESS", "SUCCESS", "TIMED_OUT", "CANCELLED"]
    assert list(stored["release_outcome"]) == list(frame()["release_outcome"])
    assert list(stored["db_status"]) == ["SUCCESS", "SUCCESS", "FAILED", "CANCELLED"]
    assert isinstance(stored["run_state"].dtype, pd.CategoricalDtype)
    assert list(stored["duration_s"]) == [3.0, 0.0, 10.0, 2.0]


def test_read_runs_accepts_a_sqlite_file_url(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    four_harness(SqlRunStore.from_path(path))
    stored = read_runs(f"sqlite:///{path}")
    assert list(stored["release_outcome"]) == ["SUCCESS", "FALLBACK", "FAILED", "CANCELLED"]
    assert list(stored["fallback_type"].isna()) == [True, False, True, True]


def test_read_trace_gives_back_the_trace_frame() -> None:
    store, records = four_runs()
    stored, live = read_trace(store.engine), trace_frame(records)
    assert list(stored.columns) == list(live.columns)
    assert len(stored) == 39
    assert stored["type"].tolist() == live["type"].tolist()
    assert stored["detail"].tolist() == live["detail"].tolist()


def test_read_invocations_gives_back_the_invocations_frame() -> None:
    store, records = four_runs()
    stored = read_invocations(store)
    assert list(stored["invocation_id"]) == ["run-000001-inv-1", "run-000001-inv-2",
                                             "run-000003-inv-1", "run-000004-inv-1"]
    assert list(stored["evidence_status"]) == ["EVIDENCE_FOUND", "EVIDENCE_FOUND", "ERROR",
                                               "ERROR"]
    assert list(stored.columns) == list(invocations_frame(records).columns)


def test_the_crosstab_keeps_every_category_including_empty_ones() -> None:
    table = crosstab(frame())
    assert list(table.index) == ["RUNNING", "SUCCESS", "FAILED", "CANCELLED", "TIMED_OUT",
                                 "BUDGET_EXHAUSTED"]
    assert list(table.columns) == ["SUCCESS", "FALLBACK", "FAILED", "CANCELLED"]
    assert table.loc["SUCCESS"].tolist() == [1, 1, 0, 0]
    assert table.loc["TIMED_OUT"].tolist() == [0, 0, 1, 0]
    assert table.loc["BUDGET_EXHAUSTED"].tolist() == [0, 0, 0, 0]


def test_the_fallback_crosstab_counts_runs_without_a_fallback_type_as_none() -> None:
    tables = state_crosstabs(frame())
    assert list(tables) == ["run_state x release_outcome", "release_outcome x fallback_type"]
    table = tables["release_outcome x fallback_type"]
    assert list(table.columns) == ["MISSING_REQUIRED_CONTEXT", "INSUFFICIENT_EVIDENCE",
                                   "EVIDENCE_VALIDATION_FAILED", "SEMANTIC_UNSUPPORTED",
                                   "SEMANTIC_UNAVAILABLE", "(none)"]
    assert table.loc["FALLBACK"].tolist() == [1, 0, 0, 0, 0, 0]
    assert table["(none)"].tolist() == [1, 0, 1, 1]
