"""The SPEC §4 outcome table as data, observed runs beside it, and the §12.2 status check."""

from __future__ import annotations

import pandas as pd
import pytest

from harness_lab.report import (
    OUTCOME_TABLE,
    STORED_STATUS_FOR_OUTCOME,
    expected_outcome,
    mapping_table,
    read_runs,
    status_mapping_check,
)
from harness_lab.runner.results import ResultSet
from harness_lab.states import FallbackType, ReleaseOutcome, RunState, StoredRunStatus
from tests.report.test_frames import LABELS, four_runs

RIGHT_CASES = ["conclusion_guards_pass", "missing_context", "timeout_no_content",
               "client_disconnect"]


def test_the_outcome_table_holds_the_thirteen_spec_rows_in_order() -> None:
    assert [row.case for row in OUTCOME_TABLE] == [
        "conclusion_guards_pass", "missing_context", "insufficient_evidence",
        "saturated_progress", "protocol_stop_progress", "evidence_guard_failed",
        "semantic_unsupported", "semantic_unavailable", "budget_progress",
        "timeout_no_content", "budget_no_progress", "internal_failure", "client_disconnect",
    ]


def test_budget_exhaustion_with_safe_progress_is_a_stored_success_fallback() -> None:
    row = expected_outcome("budget_progress")
    assert row.description == "budget exhausted, safe progress"
    assert (row.run_state, row.release_outcome, row.fallback_type, row.db_status) == (
        RunState.BUDGET_EXHAUSTED, ReleaseOutcome.FALLBACK, FallbackType.INSUFFICIENT_EVIDENCE,
        StoredRunStatus.SUCCESS)


def test_a_client_disconnect_is_cancelled_on_every_axis_without_a_fallback() -> None:
    row = expected_outcome("client_disconnect")
    assert (row.run_state, row.release_outcome, row.fallback_type, row.db_status) == (
        RunState.CANCELLED, ReleaseOutcome.CANCELLED, None, StoredRunStatus.CANCELLED)


def test_every_outcome_row_stores_the_status_doc_12_2_gives_its_release_outcome() -> None:
    for row in OUTCOME_TABLE:
        assert STORED_STATUS_FOR_OUTCOME[row.release_outcome.value] == row.db_status.value


def test_an_unknown_case_key_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="unknown outcome case 'no_such_case'"):
        expected_outcome("no_such_case")


def test_runs_with_their_right_cases_all_match() -> None:
    table = mapping_table(zip(LABELS, RIGHT_CASES, four_runs()[1], strict=True))
    assert list(table["scenario"]) == LABELS
    assert table["matched"].tolist() == [True, True, True, True]
    assert list(table["expected_run_state"]) == ["SUCCESS", "SUCCESS", "TIMED_OUT", "CANCELLED"]


def test_a_run_given_the_wrong_case_does_not_match_and_shows_what_was_expected() -> None:
    success = four_runs()[1][0]
    table = mapping_table([("report", "missing_context", success)])
    assert table["matched"].tolist() == [False]
    row = table.iloc[0]
    assert row["release_outcome"] == "SUCCESS"
    assert row["expected_release_outcome"] == "FALLBACK"
    assert row["expected_fallback_type"] == "MISSING_REQUIRED_CONTEXT"


def test_a_run_without_a_case_has_missing_expectations_and_a_missing_match() -> None:
    table = mapping_table([("free", None, four_runs()[1][2])])
    assert table["matched"].isna().tolist() == [True]
    assert table["expected_run_state"].isna().tolist() == [True]
    assert table["run_state"].tolist() == ["TIMED_OUT"]
    assert str(table["matched"].dtype) == "boolean"


def test_the_mapping_columns_put_each_observed_axis_beside_its_expectation() -> None:
    table = mapping_table([("report", "conclusion_guards_pass", four_runs()[1][0])])
    assert list(table.columns) == [
        "scenario", "case", "run_id", "run_state", "expected_run_state", "release_outcome",
        "expected_release_outcome", "fallback_type", "expected_fallback_type", "db_status",
        "expected_db_status", "matched",
    ]


def test_the_rows_the_harness_stored_all_follow_the_status_mapping() -> None:
    check = status_mapping_check(read_runs(four_runs()[0]))
    assert list(check.columns) == ["run_id", "release_outcome", "status", "expected_status",
                                   "ok"]
    assert check["expected_status"].tolist() == ["SUCCESS", "SUCCESS", "FAILED", "CANCELLED"]
    assert check["ok"].tolist() == [True, True, True, True]


def test_raw_store_rows_are_checked_through_their_status_column() -> None:
    check = status_mapping_check(four_runs()[0].runs())
    assert check["status"].tolist() == ["SUCCESS", "SUCCESS", "FAILED", "CANCELLED"]
    assert check["ok"].tolist() == [True, True, True, True]


def test_a_fallback_stored_with_a_fallback_status_is_flagged() -> None:
    check = status_mapping_check([
        {"run_id": "bad", "release_outcome": "FALLBACK", "status": "FALLBACK"},
        {"run_id": "good", "release_outcome": "FALLBACK", "status": "SUCCESS"},
    ])
    assert check["expected_status"].tolist() == ["SUCCESS", "SUCCESS"]
    assert check["ok"].tolist() == [False, True]


def test_a_running_row_must_have_no_release_outcome() -> None:
    check = status_mapping_check(pd.DataFrame([
        {"run_id": "open", "release_outcome": None, "status": "RUNNING"},
        {"run_id": "half", "release_outcome": "FAILED", "status": "RUNNING"},
        {"run_id": "lost", "release_outcome": None, "status": "SUCCESS"},
    ]))
    assert check["expected_status"].tolist() == ["RUNNING", "FAILED", "RUNNING"]
    assert check["ok"].tolist() == [True, False, False]


def test_an_unknown_release_outcome_is_never_ok() -> None:
    check = status_mapping_check([{"run_id": "x", "release_outcome": "MAYBE",
                                   "status": "SUCCESS"}])
    assert check["expected_status"].isna().tolist() == [True]
    assert check["ok"].tolist() == [False]


def test_every_library_scenario_that_names_a_case_ends_as_that_row(library: ResultSet) -> None:
    table = mapping_table(library)
    assert len(table) > 200
    assert table.loc[~table["matched"], "scenario"].tolist() == []
