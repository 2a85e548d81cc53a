"""The explorer: one judged row per variant, flags, heatmap and reproducers."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.axes import Axes

from harness_lab.defects import Defect
from harness_lab.explore.explorer import FRAME_COLUMNS, ExplorationResult, explore
from harness_lab.report.plots import exploration_heatmap, figure_png
from harness_lab.runner import run_paths
from tests.explore.helpers import (
    DRAFT_CONTRACT,
    LIBRARY_SUCCESS,
    REPORT,
    SATURATED,
    with_defects,
)


@pytest.fixture(scope="module")
def clean() -> ExplorationResult:
    return explore(REPORT)


def test_the_frame_has_one_row_per_variant_and_the_documented_columns(
        clean: ExplorationResult) -> None:
    assert list(clean.frame.columns) == list(FRAME_COLUMNS)
    assert len(clean.frame) == clean.variant_count == 189
    assert clean.frame["variant"].is_unique


def test_the_report_scenario_explores_without_a_flag(clean: ExplorationResult) -> None:
    assert clean.failures.empty
    assert clean.summary().startswith("189 variants, 0 flagged, ")


def test_a_row_shows_the_prescription_beside_the_observed_states(
        clean: ExplorationResult) -> None:
    row = clean.frame.set_index("variant").loc["report-released@sse#3:status/client_disconnect"]
    assert row["expected"] == "client_disconnect: CANCELLED/CANCELLED/-"
    assert (row["run_state"], row["release_outcome"], row["db_status"]) == (
        "CANCELLED", "CANCELLED", "CANCELLED")
    assert not row["contradicts_spec"] and row["violations"] == ""


def test_the_saturated_fixture_explores_without_a_flag() -> None:
    result = explore(SATURATED)
    assert (result.variant_count, len(result.flagged)) == (138, 0)


def test_the_library_success_scenario_explores_clean_in_well_under_a_minute() -> None:
    result = explore(LIBRARY_SUCCESS)
    assert result.variant_count > 100
    assert result.failures.empty
    assert result.elapsed_s < 10.0


def test_the_heatmap_draws_fault_rows_by_point_columns(clean: ExplorationResult) -> None:
    ax = exploration_heatmap(clean)
    assert isinstance(ax, Axes)
    assert ax.get_xlabel() == "point" and ax.get_ylabel() == "fault"
    assert len(ax.get_yticklabels()) == clean.frame["fault"].nunique() == 27
    assert figure_png(ax)[:4] == b"\x89PNG"


def test_the_outcome_heatmap_names_the_scenario_and_its_outcomes_in_a_legend(
        clean: ExplorationResult) -> None:
    ax = exploration_heatmap(clean)
    assert ax.get_title(loc="left") == (
        f"{clean.bases[0].scenario.name}: outcome by fault x point")
    assert len(ax.figure.axes) == 1, "categories get a legend, not a colour bar"
    legend = ax.get_legend()
    assert legend is not None
    names = [t.get_text().split()[-1] for t in legend.get_texts()]
    assert "FAILED:TIMED_OUT" in names and "CANCELLED" in names
    colors = [h.get_facecolor() for h in legend.legend_handles]
    assert len({tuple(c) for c in colors}) == len(names)


def test_a_flagged_heatmap_counts_flags_per_cell(clean: ExplorationResult) -> None:
    ax = exploration_heatmap(clean, value="flagged")
    assert ax.get_title(loc="left") == (
        f"{clean.bases[0].scenario.name}: flagged by fault x point")
    assert exploration_heatmap(clean, value="release_outcome").get_title(loc="left") == (
        f"{clean.bases[0].scenario.name}: release_outcome by fault x point")


def test_workers_give_the_same_rows_as_one_process() -> None:
    one = explore(REPORT, faults={"deadline"})
    two = explore(REPORT, faults={"deadline"}, workers=2)
    assert one.frame.equals(two.frame)


DEFECT_CASES = [
    (Defect.LATE_SUCCESS_OVERRIDES_CANCEL, REPORT, "single_termination"),
    (Defect.EVIDENCE_TOOL_AFTER_SATURATION, SATURATED, "no_evidence_tool_after_saturation"),
    (Defect.SECOND_CONTENT_EVENT, REPORT, "sse_protocol"),
    (Defect.FALLBACK_AS_PREVIOUS_TURN, SATURATED, "stored_axes_distinct"),
]


@pytest.mark.parametrize(("defect", "path", "invariant"), DEFECT_CASES,
                         ids=[d.value for d, _, _ in DEFECT_CASES])
def test_each_seeded_defect_is_flagged_naming_its_invariant(
        defect: Defect, path: Path, invariant: str) -> None:
    assert explore(path).failures.empty
    result = explore(with_defects(path, [defect.value]))
    named = [f for f in result.flagged if invariant in f.observed.violations]
    assert named, f"no flagged variant names {invariant}"


@pytest.mark.parametrize(("defect", "path", "invariant"), DEFECT_CASES,
                         ids=[d.value for d, _, _ in DEFECT_CASES])
def test_each_flagged_variant_written_as_a_scenario_fails_under_run(
        defect: Defect, path: Path, invariant: str, tmp_path: Path) -> None:
    result = explore(with_defects(path, [defect.value]))
    written = result.to_scenarios(tmp_path / "flagged")
    assert len(written) == len(result.flagged) > 0
    results = run_paths(written)
    assert len(results) == len(written)
    assert not any(r.ok for r in results)
    assert any(invariant in r.unexpected for r in results)


def test_a_late_success_contradicts_the_prescribed_cancel() -> None:
    result = explore(with_defects(REPORT, [Defect.LATE_SUCCESS_OVERRIDES_CANCEL.value]))
    row = result.frame.set_index("variant").loc["report-released@t+6.45s/user_cancel"]
    assert row["expected"] == "client_disconnect: CANCELLED/CANCELLED/-"
    assert row["run_state"] == "SUCCESS"
    assert bool(row["contradicts_spec"]) is True
    assert row["violations"] == "single_termination"


def test_a_disconnect_at_the_safety_status_of_a_draft_contract_fallback_is_cancelled() -> None:
    result = explore(DRAFT_CONTRACT)
    assert result.failures.empty
