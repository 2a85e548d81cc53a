"""Plots: PNG bytes, and what each Axes holds (bars, legends, ticks, lines, markers, cells)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import Collection, PathCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from harness_lab.application.components import Components
from harness_lab.fakes import (
    ScriptedModel,
    ScriptedRepair,
    ScriptedResponder,
    ScriptedRetriever,
    ScriptedRouter,
    ScriptedSemanticGuard,
    call_tool,
    draft,
    progress,
)
from harness_lab.harness import Harness
from harness_lab.report import (
    figure_png,
    outcome_bars,
    outcome_heatmap,
    outcome_label,
    run_timeline,
    runs_frame,
)
from tests.conftest import INV1, standard_tools
from tests.report.test_frames import LABELS, budget_run, four_runs

PNG = b"\x89PNG\r\n\x1a\n"


def legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def bar_heights(ax: Axes) -> list[list[float]]:
    return [[p.get_height() for p in cast(BarContainer, c).patches] for c in ax.containers]


def markers(ax: Axes) -> dict[str, list[list[float]]]:
    return {str(c.get_label()): np.asarray(c.get_offsets()).tolist() for c in ax.collections
            if isinstance(c, PathCollection)}


def bars(ax: Axes) -> dict[str, Collection]:
    return {str(c.get_gid()): c for c in ax.collections if not isinstance(c, PathCollection)}


def four_frame() -> pd.DataFrame:
    return runs_frame(four_runs()[1], labels=LABELS)


def test_outcome_bars_render_to_png_bytes() -> None:
    assert figure_png(outcome_bars(four_frame())).startswith(PNG)


def test_outcome_bars_draw_one_container_per_observed_outcome_and_a_bar_per_group() -> None:
    ax = outcome_bars(four_frame())
    assert len(ax.containers) == 4
    assert [len(h) for h in bar_heights(ax)] == [4, 4, 4, 4]
    assert legend_texts(ax) == [
        "SUCCESS", "FALLBACK:MISSING_REQUIRED_CONTEXT", "FAILED", "CANCELLED"]
    assert [t.get_text() for t in ax.get_xticklabels()] == LABELS


def test_outcome_bars_stack_counts_per_group() -> None:
    df = pd.DataFrame({"scenario": ["a", "a", "a", "b"],
                       "release_outcome": ["SUCCESS", "FAILED", "FAILED", "SUCCESS"],
                       "fallback_type": [None, None, None, None]})
    ax = outcome_bars(df)
    assert bar_heights(ax) == [[1.0, 1.0], [2.0, 0.0]]
    assert ax.get_ylabel() == "runs"


def test_normalized_outcome_bars_show_each_groups_shares() -> None:
    df = pd.DataFrame({"scenario": ["a", "a", "a", "b"],
                       "release_outcome": ["SUCCESS", "FAILED", "FAILED", "SUCCESS"],
                       "fallback_type": [None, None, None, None]})
    ax = outcome_bars(df, normalize=True)
    heights = [h for stack in bar_heights(ax) for h in stack]
    assert heights == pytest.approx([1 / 3, 1.0, 2 / 3, 0.0])
    assert ax.get_ylabel() == "share of runs"


def test_a_fallback_stack_is_labelled_with_its_fallback_type() -> None:
    assert outcome_label("FALLBACK", "SEMANTIC_UNSUPPORTED") == "FALLBACK:SEMANTIC_UNSUPPORTED"
    assert outcome_label("FAILED", None) == "FAILED"


def test_a_plot_draws_on_the_axes_it_is_given() -> None:
    ax = Figure().add_subplot()
    assert outcome_bars(four_frame(), ax=ax) is ax


def test_plots_leave_pyplot_state_alone() -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    outcome_bars(four_frame())
    run_timeline(four_runs()[1])
    assert plt.get_fignums() == before


def test_the_timeline_renders_to_png_bytes() -> None:
    assert figure_png(run_timeline(four_runs()[1])).startswith(PNG)


def test_the_timeline_has_one_row_per_run_labelled_with_the_run_id() -> None:
    ax = run_timeline(four_runs()[1])
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "run-000001", "run-000002", "run-000003", "run-000004"]
    assert list(ax.get_yticks()) == [0, 1, 2, 3]


def test_the_timeline_draws_each_runs_deadline_as_a_vertical_line() -> None:
    ax = run_timeline(four_runs()[1])
    deadlines = {line.get_gid(): np.asarray(line.get_xdata()).tolist() for line in ax.lines
                 if str(line.get_gid()).startswith("deadline:")}
    assert deadlines == {"deadline:run-000001": [5.0, 5.0], "deadline:run-000002": [8.0, 8.0],
                         "deadline:run-000003": [8.0, 8.0], "deadline:run-000004": [18.0, 18.0]}
    assert ax.get_xlim()[1] >= 18.0


def test_the_timeline_marks_cancellations_and_discarded_results_with_labelled_markers() -> None:
    ax = run_timeline(four_runs()[1])
    assert markers(ax) == {"RUN_CANCELLED": [[15.0, 3.0]],
                       "DISCARDED": [[13.0, 2.0], [15.0, 3.0]]}


def test_the_timeline_marks_an_exhausted_budget() -> None:
    ax = run_timeline([budget_run()])
    assert list(markers(ax)) == ["BUDGET_EXHAUSTED"]


def test_the_timeline_legend_names_the_phases_markers_and_lines() -> None:
    ax = run_timeline(four_runs()[1])
    assert legend_texts(ax) == [
        "TOOL", "RUN_CANCELLED", "DISCARDED", "run start/finish", "deadline"]


def test_a_tool_call_is_a_tool_span_from_its_start_to_its_result() -> None:
    ax = run_timeline(four_runs()[1])
    spans = bars(ax)
    assert sorted(spans) == ["run-000001:TOOL", "run-000003:TOOL", "run-000004:TOOL"]
    extents = spans["run-000003:TOOL"].get_paths()[0].get_extents()
    assert (extents.x0, extents.x1) == (3.0, 13.0)
    assert (extents.y0, extents.y1) == pytest.approx((1.7, 2.3))


def test_the_wait_for_a_model_step_is_an_agent_span() -> None:
    components = Components(
        router=ScriptedRouter("DIAGNOSIS"),
        model=ScriptedModel([call_tool("logs", {"service": "checkout"}, latency_s=0.5),
                             draft(findings=[("timeouts", [INV1])],
                                   progress=progress("GAINED"), latency_s=0.25)]),
        guard=ScriptedSemanticGuard("SUPPORTED"), repair=ScriptedRepair([]),
        responder=ScriptedResponder(), retriever=ScriptedRetriever(),
        tools={tool.name: tool for tool in standard_tools()})
    ax = run_timeline([Harness(components).run("why is checkout slow?")])
    xs = sorted((p.get_extents().x0, p.get_extents().x1)
                for p in bars(ax)["run-000001:AGENT"].get_paths())
    assert xs == [(0.0, 0.5), (2.5, 2.75)]


def heat_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "fault": ["timeout", "timeout", "timeout", "crash", "crash"],
        "point": ["tool", "tool", "guard", "tool", "tool"],
        "release_outcome": ["FAILED", "SUCCESS", "FALLBACK", "CANCELLED", "CANCELLED"],
        "violations": [0, 1, 0, 2, 3],
    })


def cell_texts(ax: Axes) -> list[tuple[float, float, str]]:
    return sorted((t.get_position()[0], t.get_position()[1], t.get_text()) for t in ax.texts)


def test_the_heatmap_annotates_each_cell_with_its_most_common_outcome() -> None:
    ax = outcome_heatmap(heat_frame())
    # a tie (FAILED once, SUCCESS once) goes to the earlier ReleaseOutcome: SUCCESS
    assert cell_texts(ax) == [(0, 0, "SUCCESS"), (0, 1, "CANCELLED"), (1, 0, "FALLBACK")]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["tool", "guard"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["timeout", "crash"]


def test_the_heatmap_colours_cells_by_outcome_code_and_leaves_empty_cells_blank() -> None:
    ax = outcome_heatmap(heat_frame())
    data: np.ma.MaskedArray[Any, Any] = np.ma.asarray(ax.images[0].get_array())
    assert data.tolist() == [[0.0, 1.0], [3.0, None]]
    assert np.ma.is_masked(data[1, 1])


def test_the_heatmap_colorbar_names_every_outcome() -> None:
    ax = outcome_heatmap(heat_frame())
    colorbar_ax = ax.figure.axes[1]
    assert [t.get_text() for t in colorbar_ax.get_yticklabels()] == [
        "SUCCESS", "FALLBACK", "FAILED", "CANCELLED"]


def test_the_heatmap_sums_a_numeric_value_per_cell() -> None:
    ax = outcome_heatmap(heat_frame(), value="violations")
    assert cell_texts(ax) == [(0, 0, "1"), (0, 1, "5"), (1, 0, "0")]
    assert ax.get_title() == "violations by fault x point"


def test_the_heatmap_renders_to_png_bytes() -> None:
    assert figure_png(outcome_heatmap(heat_frame())).startswith(PNG)


def test_figure_png_renders_a_whole_figure_too() -> None:
    fig = Figure()
    outcome_bars(four_frame(), ax=fig.add_subplot())
    assert figure_png(fig).startswith(PNG)
