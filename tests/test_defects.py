"""Seeded defects: each one is caught, and docs/defects.md says by which detector."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.config import HarnessConfig
from harness_lab.defects import FAMILIES, Defect
from harness_lab.explore.seeded import (
    DETECTORS,
    LIBRARY,
    load_library,
    measure,
    seed,
)
from harness_lab.fakes import call_tool, draft, progress, report
from harness_lab.invariants import check
from harness_lab.ports import GuardReply
from harness_lab.runner.run import ScenarioResult, run_scenario
from harness_lab.scenarios.loader import LoadedScenario, load_file
from harness_lab.states import CollectionState, DiagnosisStopReason, ReleaseOutcome, RunState
from tests.conftest import INV1, build
from tests.test_harness import SUCCESS_STEPS


def broken(record: object) -> set[str]:
    return {v.invariant for v in check(record)}  # type: ignore[arg-type]


def test_a_late_success_overriding_a_cancel_breaks_the_single_termination_invariant() -> None:
    config = HarnessConfig(defects=frozenset({Defect.LATE_SUCCESS_OVERRIDES_CANCEL}))
    slow_guard = GuardReply(supported=True, latency_s=2.0)
    r = build(SUCCESS_STEPS, guard=slow_guard, config=config).run("slow?", cancel_at=4.0)
    assert r.terminations[0][0] == "CANCELLED" and r.terminations[1][0] == "SUCCESS"
    assert "single_termination" in broken(r)


def test_without_the_defect_the_same_cancel_keeps_one_termination() -> None:
    slow_guard = GuardReply(supported=True, latency_s=2.0)
    r = build(SUCCESS_STEPS, guard=slow_guard).run("slow?", cancel_at=4.0)
    assert [t[0] for t in r.terminations] == ["CANCELLED"]
    assert broken(r) == set()


def test_an_evidence_tool_after_saturation_breaks_invariant_six() -> None:
    config = HarnessConfig(no_gain_threshold=1,
                           defects=frozenset({Defect.EVIDENCE_TOOL_AFTER_SATURATION}))
    r = build([
        call_tool("logs", {"s": 1}),
        call_tool("metrics", {"s": 1}, progress=progress("NO_GAIN", facts=[("t", [INV1])])),
        report(progress()),
    ], config=config).run("slow?")
    assert "no_evidence_tool_after_saturation" in broken(r)


def test_a_second_content_event_breaks_the_sse_protocol_invariant() -> None:
    config = HarnessConfig(defects=frozenset({Defect.SECOND_CONTENT_EVENT}))
    r = build(SUCCESS_STEPS, config=config).run("slow?")
    assert r.sse_kinds().count("content") == 2
    assert "sse_protocol" in broken(r)


def test_a_fallback_persisted_as_a_published_result_breaks_the_store_invariant() -> None:
    config = HarnessConfig(defects=frozenset({Defect.FALLBACK_AS_PREVIOUS_TURN}))
    r = build([draft(missing_info=["which service"])], config=config).run("slow?")
    assert r.stored_row is not None and r.stored_row["published_result"] is not None
    assert "stored_axes_distinct" in broken(r)


# -- one witness per defect: the library scenario stating the rule, played with it seeded --

def seeded_run(path: str, defect: Defect, variant: int = 0) -> ScenarioResult:
    return run_scenario(seed(load_file(LIBRARY / path), [defect])[variant])


def test_an_ignored_user_cancel_lets_the_run_finish_as_if_no_one_had_cancelled() -> None:
    assert run_scenario(load_file(LIBRARY / "faults/user-cancel-at.yaml")[0]).ok
    r = seeded_run("faults/user-cancel-at.yaml", Defect.USER_CANCEL_NOT_TERMINAL)
    assert r.record is not None and r.record.run_state is RunState.SUCCESS
    assert not r.ok


def test_a_deadline_compared_with_greater_than_lets_a_boundary_at_its_instant_pass() -> None:
    r = seeded_run("faults/deadline-at-after.yaml", Defect.DEADLINE_EXCLUSIVE)
    assert r.record is not None and r.record.run_state is not RunState.TIMED_OUT
    assert not r.ok


def test_a_refused_tool_call_counted_as_made_breaks_the_tool_call_reconciliation() -> None:
    r = seeded_run("faults/budget-tool-calls.yaml", Defect.REFUSED_TOOL_CALL_COUNTED)
    assert r.record is not None and r.record.run_state is RunState.BUDGET_EXHAUSTED
    assert {v.invariant for v in r.violations} == {"tool_calls_reconciled"}


def test_a_failure_that_resets_the_no_gain_streak_keeps_collection_open() -> None:
    r = seeded_run("tools/error-keeps-no-gain-streak.yaml", Defect.ERROR_RESETS_NO_GAIN)
    assert r.record is not None and r.record.collection_state is CollectionState.COLLECTING
    assert not r.ok


def test_a_missing_progress_report_not_counted_never_stops_on_the_protocol() -> None:
    r = seeded_run("faults/protocol-violation-missing.yaml",
                   Defect.MISSING_REPORT_NOT_VIOLATION)
    assert r.record is not None
    assert r.record.stop_reason is not DiagnosisStopReason.PROGRESS_PROTOCOL_VIOLATED
    assert not r.ok


def test_a_repair_released_without_the_recheck_publishes_an_uncitable_conclusion() -> None:
    r = seeded_run("faults/repair-failed-still-invalid.yaml", Defect.REPAIR_RELEASED_UNCHECKED)
    assert r.record is not None and r.record.release_outcome is ReleaseOutcome.SUCCESS
    assert "cited_ready_only" in {v.invariant for v in r.violations}


def test_an_unavailable_semantic_guard_counted_as_a_pass_publishes_a_report() -> None:
    r = seeded_run("outcomes/semantic-unavailable.yaml",
                   Defect.SEMANTIC_UNAVAILABLE_AS_SUPPORTED)
    assert r.record is not None and r.record.release_outcome is ReleaseOutcome.SUCCESS
    assert {v.invariant for v in r.violations} == {"guard_chain_needs_conclusion"}


def test_a_budget_fallback_stored_with_its_run_states_status_breaks_the_store_mapping() -> None:
    r = seeded_run("outcomes/budget-progress.yaml", Defect.STORED_STATUS_FROM_RUN_STATE)
    assert r.stored_row is not None and r.stored_row["status"] == "FAILED"
    assert {v.invariant for v in r.violations} == {"stored_axes_distinct"}


# -- the table of docs/defects.md, recomputed ----------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "defects.md"

FAMILIES_OF_THE_DOCUMENT = {
    "lifecycle CAS", "cancellation", "deadline", "budget", "tool boundary",
    "collection / no-gain", "progress protocol", "release and repair", "SemanticGuard", "SSE",
    "persistence", "previous turn"}


def documented() -> dict[str, dict[str, str]]:
    """The doc's table: each defect's cells by detector."""
    rows: dict[str, dict[str, str]] = {}
    header: list[str] = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:2] == ["defect", "rule family"]:
            header = cells
        elif header and line.startswith("| `"):
            rows[cells[0].strip("`")] = dict(zip(header[1:], cells[1:], strict=True))
    return rows


@pytest.fixture(scope="module")
def library() -> list[LoadedScenario]:
    return load_library()


def test_every_rule_family_of_the_document_has_a_seeded_defect() -> None:
    assert set(FAMILIES.values()) == FAMILIES_OF_THE_DOCUMENT
    assert set(FAMILIES) == set(Defect)


def test_the_doc_has_a_row_per_defect_with_its_family_and_a_cell_per_detector() -> None:
    rows = documented()
    assert list(rows) == [d.value for d in Defect]
    for defect, cells in rows.items():
        assert cells["rule family"] == FAMILIES[Defect(defect)]
        assert [k for k in cells if k != "rule family"] == list(DETECTORS)


@pytest.mark.slow
@pytest.mark.parametrize("defect", list(Defect), ids=str)
def test_the_library_and_invariant_cells_are_what_is_measured(
        defect: Defect, library: list[LoadedScenario]) -> None:
    row = measure(defect, library, detectors=("library", "invariants"))
    cells = documented()[defect.value]
    assert row.cells == {"library": cells["library"], "invariants": cells["invariants"]}


@pytest.mark.live
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("defect", list(Defect), ids=str)
def test_the_conform_cell_is_what_is_measured(defect: Defect,
                                              library: list[LoadedScenario]) -> None:
    row = measure(defect, library, detectors=("conform",))
    assert row.cells["conform"] == documented()[defect.value]["conform"].split(" ")[0]
