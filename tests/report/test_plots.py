"""Plots: what each Axes holds (bars, counts, legends, rows, markers, cells) and how it shows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection, PathCollection
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from harness_lab.fakes import call_tool, draft, progress
from harness_lab.harness import Harness
from harness_lab.report.figures import PlotAxes, axis_label
from harness_lab.report.frames import runs_frame
from harness_lab.report.plots import (
    figure_png,
    load_curve_plot,
    outcome_bars,
    outcome_heatmap,
    outcome_label,
    run_timeline,
)
from harness_lab.runner import run_paths
from harness_lab.sweep.load import LoadPoint
from tests.conftest import INV1, scripted_components, standard_tools
from tests.report.test_frames import LABELS, budget_run, four_runs

PNG = b"\x89PNG\r\n\x1a\n"
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def bar_widths(ax: Axes) -> list[list[float]]:
    return [[p.get_width() for p in cast(BarContainer, c).patches] for c in ax.containers]


def bar_colors(ax: Axes) -> list[str]:
    return [to_hex(cast(BarContainer, c).patches[0].get_facecolor()).upper()
            for c in ax.containers]


def markers(ax: Axes) -> dict[str, list[list[float]]]:
    """Each marker label's points (in data coordinates, whatever their drawn shift), by time
    then row."""
    found: dict[str, list[list[float]]] = {}
    for c in ax.collections:
        if isinstance(c, PathCollection):
            found.setdefault(str(c.get_label()), []).extend(np.asarray(c.get_offsets()).tolist())
    return {label: sorted(points) for label, points in found.items()}


def drawn_at(ax: Axes, label: str) -> list[tuple[float, float]]:
    """Where each marker of ``label`` is drawn on the figure, in pixels."""
    ax.figure.canvas.draw()
    return [tuple(c.get_offset_transform().transform(p)) for c in ax.collections
            if isinstance(c, PathCollection) and c.get_label() == label
            for p in np.asarray(c.get_offsets())]


def spans(ax: Axes) -> dict[str, Collection]:
    return {str(c.get_gid()): c for c in ax.collections if not isinstance(c, PathCollection)}


def by_gid(ax: Axes, prefix: str) -> dict[str, Any]:
    return {str(a.get_gid()): a for a in ax.get_children()
            if str(a.get_gid()).startswith(prefix)}


def four_frame() -> pd.DataFrame:
    return runs_frame(four_runs()[1], labels=LABELS)


# --- outcome bars -----------------------------------------------------------------------------

def test_outcome_bars_draw_a_horizontal_bar_per_group_and_a_stack_per_observed_outcome() -> None:
    ax = outcome_bars(four_frame())
    assert legend_texts(ax) == [
        "SUCCESS", "FALLBACK:MISSING_REQUIRED_CONTEXT", "FAILED:TIMED_OUT", "CANCELLED"]
    assert [len(w) for w in bar_widths(ax)] == [4, 4, 4, 4]
    assert [t.get_text() for t in ax.get_yticklabels()] == LABELS
    assert ax.get_ylim()[0] > ax.get_ylim()[1], "the first group is on top"


def test_outcome_bars_colour_each_outcome_with_the_palette() -> None:
    ax = outcome_bars(four_frame())
    assert bar_colors(ax) == ["#117733", "#DDCC77", "#CC6677", "#222222"]


def test_outcome_bars_stack_counts_per_group_and_write_them_on_the_bars() -> None:
    df = pd.DataFrame({"scenario": ["a", "a", "a", "b"],
                       "release_outcome": ["SUCCESS", "FAILED", "FAILED", "SUCCESS"],
                       "fallback_type": [None, None, None, None]})
    ax = outcome_bars(df)
    assert bar_widths(ax) == [[1.0, 1.0], [2.0, 0.0]]
    segment_texts = [t.get_text() for t in ax.texts if t.get_gid() is None]
    assert sorted(t for t in segment_texts if t) == ["1", "2"], "a one-outcome bar: its total"
    assert {k: a.get_text() for k, a in by_gid(ax, "total:").items()} == {
        "total:a": "3", "total:b": "1"}
    assert ax.get_xlabel() == "runs"
    assert ax.get_title(loc="left") == "release outcome by scenario (4 runs)"


def test_the_longest_bar_and_its_total_fit_inside_the_axes() -> None:
    df = pd.DataFrame({"scenario": ["a"] * 7 + ["b"],
                       "release_outcome": ["SUCCESS"] * 8, "fallback_type": [None] * 8})
    ax = outcome_bars(df)
    assert ax.get_xlim()[1] > 7 * 1.05


def test_normalized_outcome_bars_show_each_groups_shares_in_percent() -> None:
    df = pd.DataFrame({"scenario": ["a", "a", "a", "b"],
                       "release_outcome": ["SUCCESS", "FAILED", "FAILED", "SUCCESS"],
                       "fallback_type": [None, None, None, None]})
    ax = outcome_bars(df, normalize=True)
    widths = [w for stack in bar_widths(ax) for w in stack]
    assert widths == pytest.approx([1 / 3, 1.0, 2 / 3, 0.0])
    assert ax.get_xlabel() == "share of runs"
    assert "67%" in [t.get_text() for t in ax.texts]


def test_the_outcome_legend_sits_outside_the_bars() -> None:
    ax = outcome_bars(four_frame())
    figure_png(ax)  # lays the figure out
    legend = ax.get_legend()
    assert legend is not None
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1


def test_more_groups_than_the_limit_keep_the_largest_and_sum_the_rest() -> None:
    names = [f"s{i:02d}" for i in range(50)]
    df = pd.DataFrame({"scenario": names + ["s07"] * 4,
                       "release_outcome": ["SUCCESS"] * 54, "fallback_type": [None] * 54})
    ax = outcome_bars(df, by="scenario", max_groups=10)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert len(ticks) == 10
    assert ticks[0] == "s00" and "s07" in ticks
    assert ticks[-1] == "(41 more, 41 runs)"


def test_scenario_results_group_by_directory_tag_and_case() -> None:
    results = run_paths([SCENARIOS / "outcomes" / "client-disconnect.yaml",
                         SCENARIOS / "outcomes" / "semantic-unsupported.yaml",
                         SCENARIOS / "sse" / "cancelled-never-public-done.yaml"])
    by_dir = outcome_bars(results, by="directory")
    assert [t.get_text() for t in by_dir.get_yticklabels()] == ["outcomes", "sse"]
    assert bar_widths(by_dir) == [[1.0, 0.0], [1.0, 1.0]]
    assert legend_texts(by_dir) == ["FALLBACK:SEMANTIC_UNSUPPORTED", "CANCELLED"]
    by_case = outcome_bars(results, by="case")
    assert [t.get_text() for t in by_case.get_yticklabels()] == [
        "client_disconnect", "semantic_unsupported", "(none)"]
    assert outcome_bars(results, by="tag").get_ylabel() == "tag"
    by_tag = outcome_bars(results, by="tags")
    tags = {t for r in results for t in r.tags}
    assert {t.get_text() for t in by_tag.get_yticklabels()} == tags
    assert by_tag.get_title(loc="left").endswith("(3 runs; a run counts under each of its tags)")


def test_many_scenarios_are_grouped_by_directory_by_default() -> None:
    df = pd.DataFrame({"scenario": [f"s{i}" for i in range(60)],
                       "file": [f"lib/{'ab'[i % 2]}/s{i}.yaml" for i in range(60)],
                       "release_outcome": ["SUCCESS"] * 60, "fallback_type": [None] * 60})
    ax = outcome_bars(df)
    assert ax.get_ylabel() == "directory"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]


def test_grouping_by_a_missing_column_names_the_columns_there_are() -> None:
    with pytest.raises(KeyError, match="no column 'nope'.*release_outcome"):
        outcome_bars(four_frame(), by="nope")
    with pytest.raises(KeyError, match="no column 'tag'"):
        outcome_bars(four_frame(), by="tag")


# a resource another test left to the garbage collector is not a warning of the plots'
@pytest.mark.filterwarnings("error", "ignore::ResourceWarning")
def test_plots_of_no_runs_say_so() -> None:
    empty = pd.DataFrame({"scenario": [], "release_outcome": [], "fallback_type": []})
    for ax in (outcome_bars(empty), outcome_bars([]), run_timeline([])):
        assert figure_png(ax).startswith(PNG)
        assert [t.get_text() for t in ax.texts if t.get_gid() == "empty"] == ["no runs"]


def test_a_fallback_stack_is_labelled_with_its_fallback_type() -> None:
    assert outcome_label("FALLBACK", "SEMANTIC_UNSUPPORTED") == "FALLBACK:SEMANTIC_UNSUPPORTED"
    assert outcome_label("FAILED", None) == "FAILED"


# --- display and saving -----------------------------------------------------------------------

def test_a_plot_draws_on_the_axes_it_is_given() -> None:
    ax = Figure().add_subplot()
    assert outcome_bars(four_frame(), ax=ax) is ax
    assert run_timeline(four_runs()[1], ax=ax) is ax


def test_a_new_plot_shows_itself_in_a_notebook_as_a_sharp_png() -> None:
    ax = outcome_bars(four_frame())
    assert isinstance(ax, PlotAxes)
    data, meta = ax._repr_mimebundle_()
    png = data["image/png"]
    assert png.startswith(PNG)
    width, height = (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
    assert meta["image/png"] == {"width": width // 2, "height": height // 2}
    size = ax.figure.get_size_inches()
    assert (width, height) == (round(size[0] * 200), round(size[1] * 200))
    assert ax._repr_png_().startswith(PNG)
    figure_data, figure_meta = ax.figure._repr_mimebundle_()  # ``ax.figure`` shows it too
    assert figure_data["image/png"].startswith(PNG)
    assert figure_meta == meta


def test_a_plot_saves_its_whole_figure(tmp_path: Path) -> None:
    ax = run_timeline(four_runs()[1])
    assert isinstance(ax, PlotAxes)
    ax.savefig(tmp_path / "timeline.png")
    assert (tmp_path / "timeline.png").read_bytes().startswith(PNG)
    assert figure_png(ax).startswith(PNG)


def test_plots_leave_pyplot_state_alone() -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    outcome_bars(four_frame())
    run_timeline(four_runs()[1])
    outcome_heatmap(heat_frame())
    assert plt.get_fignums() == before


def test_a_column_name_becomes_an_axis_label_with_its_unit() -> None:
    assert axis_label("config.deadline_s") == "config.deadline_s (s)"
    assert axis_label("latency_ms") == "latency_ms (ms)"
    assert axis_label("workers") == "workers"


# --- run timeline -----------------------------------------------------------------------------

def test_the_timeline_has_one_row_per_run_labelled_with_its_outcome() -> None:
    ax = run_timeline(four_runs()[1])
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "run-000001", "run-000002", "run-000003", "run-000004"]
    assert list(ax.get_yticks()) == [0, 1, 2, 3]
    badges = by_gid(ax, "outcome:")
    assert {k: a.get_text() for k, a in badges.items()} == {
        "outcome:run-000001": "SUCCESS",
        "outcome:run-000002": "FALLBACK:MISSING_REQUIRED_CONTEXT",
        "outcome:run-000003": "FAILED:TIMED_OUT", "outcome:run-000004": "CANCELLED"}
    colors = [to_hex(a.get_bbox_patch().get_facecolor()).upper() for a in badges.values()]
    assert colors == ["#117733", "#DDCC77", "#CC6677", "#222222"]


def test_timeline_rows_are_named_after_their_scenarios() -> None:
    results = run_paths([SCENARIOS / "outcomes" / "client-disconnect.yaml",
                         SCENARIOS / "outcomes" / "semantic-unsupported.yaml"])
    ax = run_timeline(results)
    assert [t.get_text() for t in ax.get_yticklabels()] == [r.scenario for r in results]
    assert ax.get_title(loc="left") == "run timeline (2 runs)"


def test_rows_with_the_same_label_are_told_apart() -> None:
    record = four_runs()[1][0]
    ax = run_timeline([record, record])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["run-000001", "run-000001 #2"]
    ax = run_timeline({"first": record, "second": record})
    assert [t.get_text() for t in ax.get_yticklabels()] == ["first", "second"]


def test_timeline_labels_must_match_the_runs() -> None:
    with pytest.raises(ValueError, match="1 labels for 4 runs"):
        run_timeline(four_runs()[1], labels=["one"])


def test_the_timeline_draws_near_deadlines_as_lines_across_their_rows() -> None:
    ax = run_timeline(four_runs()[1])
    deadlines = {line.get_gid(): np.asarray(line.get_xdata()).tolist() for line in ax.lines
                 if str(line.get_gid()).startswith("deadline:")}
    assert deadlines == {"deadline:run-000001": [5.0, 5.0], "deadline:run-000002": [8.0, 8.0],
                         "deadline:run-000003": [8.0, 8.0], "deadline:run-000004": [18.0, 18.0]}
    assert 18.0 <= ax.get_xlim()[1] < 20.0


def test_a_far_deadline_is_an_arrow_at_the_edge_not_a_squashed_axis() -> None:
    [result] = run_paths([SCENARIOS / "outcomes" / "client-disconnect.yaml"])
    assert result.record is not None and result.record.deadline_at >= 30
    ax = run_timeline([result])
    assert ax.get_xlim()[1] < 0.5 * result.record.deadline_at
    arrow = by_gid(ax, "deadline:")[f"deadline:{result.scenario}"]
    assert arrow.get_marker() == ">"
    assert f"deadline past the axis: {result.record.deadline_at:g} s" in legend_texts(ax)
    assert "deadline" not in legend_texts(ax), "no deadline line is drawn"
    assert by_gid(ax, "deadline-text:") == {}, "the one far deadline is said in the legend"


def test_an_unusual_far_deadline_is_written_beside_its_arrow() -> None:
    [usual] = run_paths([SCENARIOS / "outcomes" / "client-disconnect.yaml"])
    assert usual.record is not None
    late = {"a": usual.record, "b": usual.record,
            "c": replace(usual.record, deadline_at=usual.record.deadline_at + 30)}
    ax = run_timeline(late)
    texts = by_gid(ax, "deadline-text:")
    assert list(texts) == ["deadline-text:c"]
    assert isinstance(texts["deadline-text:c"], Annotation)
    assert texts["deadline-text:c"].get_text() == f"{usual.record.deadline_at + 30:g} s"
    assert (f"deadline past the axis: {usual.record.deadline_at:g} s unless written"
            in legend_texts(ax))


def test_the_timeline_marks_disconnects_timeouts_and_discarded_results() -> None:
    ax = run_timeline(four_runs()[1])
    found = markers(ax)
    assert found["client disconnect"] == [[14.0, 3.0]]
    assert found["timed out"] == [[13.0, 2.0]]
    assert found["discarded late result"] == [[13.0, 2.0], [15.0, 3.0]]
    assert "user cancel" not in found


def test_markers_at_one_instant_of_a_row_are_drawn_side_by_side_not_on_each_other() -> None:
    ax = run_timeline(four_runs()[1])  # run 3 times out at 13 s as its late result is discarded
    [timed_out] = drawn_at(ax, "timed out")
    discarded = drawn_at(ax, "discarded late result")
    beside = [p for p in discarded if abs(p[1] - timed_out[1]) < 0.5]
    assert len(beside) == 1
    assert beside[0][0] - timed_out[0] >= 8, "the later mark sits right of the earlier"


def test_sse_events_sent_at_one_instant_are_drawn_side_by_side() -> None:
    ax = run_timeline(four_runs()[1])  # run 3 sends failure then done at 13 s
    failure = drawn_at(ax, "SSE failure")
    done_row_3 = [p for p in drawn_at(ax, "SSE done") if abs(p[1] - failure[0][1]) < 0.5]
    assert len(failure) == len(done_row_3) == 1
    assert done_row_3[0][0] - failure[0][0] >= 4

def test_the_timeline_marks_a_user_cancel() -> None:
    [result] = run_paths([SCENARIOS / "faults" / "user-cancel-at-s.yaml"])
    ax = run_timeline([result])
    assert result.record is not None
    [(state, _, at)] = result.record.terminations
    assert state == "CANCELLED"
    assert markers(ax)["user cancel"] == [[at, 0.0]]
    assert "client disconnect" not in markers(ax)


def test_the_timeline_marks_an_exhausted_budget() -> None:
    ax = run_timeline([budget_run()])
    assert "budget exhausted" in markers(ax)


def test_the_timeline_marks_every_sse_event_under_its_row() -> None:
    ax = run_timeline(four_runs()[1])
    found = markers(ax)
    assert np.allclose(found["SSE done"], [[3.0, 0.36], [3.0, 1.36], [13.0, 2.36]])
    assert np.allclose(found["SSE failure"], [[13.0, 2.36]])
    assert len(found["SSE metadata"]) == 4


def test_the_timeline_legend_names_call_kinds_markers_and_lines() -> None:
    ax = run_timeline(four_runs()[1])
    assert legend_texts(ax) == [
        "tool", "client disconnect", "disconnect noticed", "timed out",
        "discarded late result",
        "SSE metadata", "SSE status", "SSE content", "SSE failure", "SSE done",
        "run start to finish", "deadline"]


def test_a_tool_call_is_a_tool_span_from_its_start_to_its_result() -> None:
    ax = run_timeline(four_runs()[1])
    found = spans(ax)
    assert "run-000003:tool" in found
    extents = found["run-000003:tool"].get_paths()[0].get_extents()
    assert (extents.x0, extents.x1) == (3.0, 13.0)
    assert (extents.y0, extents.y1) == pytest.approx((1.76, 2.24))
    assert to_hex(found["run-000003:tool"].get_facecolor()[0]).upper() == "#E69F00"


def test_each_model_call_is_a_model_span() -> None:
    components = scripted_components(
        [call_tool("logs", {"service": "checkout"}, latency_s=0.5),
         draft(findings=[("timeouts", [INV1])], progress=progress("GAINED"), latency_s=0.25)],
        tools={tool.name: tool for tool in standard_tools()})
    ax = run_timeline([Harness(components).run("why is checkout slow?")])
    xs = sorted((p.get_extents().x0, p.get_extents().x1)
                for p in spans(ax)["run-000001:model"].get_paths())
    assert xs == [(0.0, 0.5), (2.5, 2.75)]


def test_a_timeline_of_many_runs_stays_bounded_in_height() -> None:
    records = list(four_runs()[1]) * 60
    ax = run_timeline(records)
    assert len(ax.get_yticklabels()) == 240
    assert ax.figure.get_size_inches()[1] <= 16.0
    assert ax.get_yticklabels()[0].get_fontsize() >= 4.0


# --- heatmap ----------------------------------------------------------------------------------

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


def test_the_heatmap_names_its_categories_in_a_legend_not_a_colour_bar() -> None:
    ax = outcome_heatmap(heat_frame())
    assert len(ax.figure.axes) == 1, "no colour bar"
    assert legend_texts(ax) == ["SUCCESS", "FALLBACK", "CANCELLED"]
    legend = ax.get_legend()
    assert legend is not None
    colors = [to_hex(h.get_facecolor()).upper() for h in legend.legend_handles]
    assert colors == ["#117733", "#DDCC77", "#222222"]


def test_a_large_heatmap_writes_codes_in_its_cells_and_explains_them_in_the_legend() -> None:
    outcomes = ["SUCCESS", "FALLBACK:INSUFFICIENT_EVIDENCE", "FAILED:TIMED_OUT", "CRASH"]
    df = pd.DataFrame([{"fault": f"f{i}", "point": f"p{j}", "outcome": outcomes[(i + j) % 4]}
                       for i in range(4) for j in range(12)])
    ax = outcome_heatmap(df, value="outcome", title="base: outcome by fault x point")
    assert {t for _, _, t in cell_texts(ax)} == {"OK", "IE", "TO", "C"}
    assert legend_texts(ax) == ["OK  SUCCESS", "IE  FALLBACK:INSUFFICIENT_EVIDENCE",
                                "TO  FAILED:TIMED_OUT", "C   CRASH"]
    assert ax.get_title(loc="left") == "base: outcome by fault x point"


def test_heatmap_cell_codes_stay_distinct_when_two_categories_share_initials() -> None:
    df = pd.DataFrame({"fault": ["a", "b"], "point": ["p"] * 2,
                       "outcome": ["CANCELLED", "CRASH"]})
    ax = outcome_heatmap(df.assign(point=[f"p{i}" for i in range(2)]).pipe(
        lambda d: pd.concat([d] + [d.assign(point=f"q{k}") for k in range(9)])),
        value="outcome")
    assert sorted({t for _, _, t in cell_texts(ax)}) == ["C", "CR"]


def test_the_heatmap_sums_a_numeric_value_per_cell() -> None:
    ax = outcome_heatmap(heat_frame(), value="violations")
    assert cell_texts(ax) == [(0, 0, "1"), (0, 1, "5"), (1, 0, "0")]
    assert ax.get_title(loc="left") == "violations by fault x point"


def test_the_heatmap_renders_to_png_bytes() -> None:
    assert figure_png(outcome_heatmap(heat_frame())).startswith(PNG)


def test_figure_png_renders_a_whole_figure_too() -> None:
    fig = Figure()
    outcome_bars(four_frame(), ax=fig.add_subplot())
    assert figure_png(fig).startswith(PNG)


# --- load curve -------------------------------------------------------------------------------

def load_point(rate: float, states: list[str], durations: list[float]) -> LoadPoint:
    frame = pd.DataFrame({"run_state": states, "duration_s": durations})
    return LoadPoint(rate, {"model": 2}, len(states), frame)


def test_the_load_curve_shows_the_share_with_its_wilson_interval_per_arrival_rate() -> None:
    points = [load_point(0.5, ["SUCCESS"] * 3 + ["TIMED_OUT"], [1.0, 2.0, 3.0, 30.0]),
              load_point(0.1, ["SUCCESS"] * 4, [1.0, 1.0, 1.0, 1.0])]
    ax = load_curve_plot(points, deadline_s=20)
    [errorbar] = ax.containers
    share_line = errorbar.lines[0]
    assert np.asarray(share_line.get_xdata()).tolist() == [0.1, 0.5]
    assert np.asarray(share_line.get_ydata()).tolist() == [0.0, 0.25]
    assert legend_texts(ax) == ["run_state=TIMED_OUT (95% Wilson interval)"]
    bars = ax.collections[0].get_segments()  # the error bars, Wilson bounds of 0/4 and 1/4
    assert [tuple(np.round(s[:, 1], 4)) for s in bars] == [(0.0, 0.4899), (0.0456, 0.6994)]
    assert ax.get_ylabel() == "share of runs TIMED_OUT"


def test_the_load_curve_draws_latency_percentiles_against_the_deadline() -> None:
    points = [load_point(0.5, ["SUCCESS"] * 4, [1.0, 2.0, 3.0, 30.0])]
    ax = load_curve_plot(points, deadline_s=20, percentiles=(50, 95))
    latency = ax.figure.axes[1]
    assert legend_texts(latency) == ["p50 run duration", "p95 run duration", "deadline 20 s"]
    p50 = latency.get_lines()[0]
    assert np.asarray(p50.get_ydata()).tolist() == [2.5]
    assert latency.get_ylabel() == "run duration (virtual s)"
    assert latency.get_xlabel() == "arrival rate (sessions per virtual s)"
    deadline = latency.get_lines()[-1]
    assert np.asarray(deadline.get_ydata()).tolist() == [20, 20]


def test_the_timeline_marks_a_termination_that_lost_where_it_was_attempted() -> None:
    # the file's user cancel at 7.0 s loses to the deadline passed at 5.0 s (instant policy)
    results = run_paths([f"{SCENARIOS / 'late' / 'first-terminal-wins.yaml'}[deadline-first]"])
    ax = run_timeline(results)
    assert markers(ax)["termination that lost"] == [[7.0, 0.0]]
    assert "termination that lost" in legend_texts(ax)
    assert "user cancel" not in markers(ax), "the cancel did not end the run"


def test_a_run_that_ended_at_its_start_gets_a_readable_axis_with_its_markers_in_view() -> None:
    from harness_lab.runner import run_paths

    results = [r for r in run_paths([Path(__file__).resolve().parents[2] / "scenarios"
                                     / "sse" / "new-disconnected-before-metadata.yaml"])]
    assert results[0].record is not None and results[0].record.duration_s == 0
    ax = run_timeline(results)
    low, high = ax.get_xlim()
    assert high - low >= 1.0
    shown = [c for c in ax.collections if c.get_label() == "client disconnect"]
    [x] = [float(p[0]) for c in shown for p in c.get_offsets()]
    assert low < x < high and x - low > 0.01 * (high - low)


def test_a_run_whose_times_contradict_is_not_drawn_and_leaves_the_axis_to_the_others() -> None:
    first = four_runs()[1][0]  # SUCCESS from 0 to 3 s, deadline 5 s
    assert first.stored_row is not None and (first.started_at, first.finished_at) == (0, 3.0)
    assert [(e.seq, e.type.value, e.t) for e in first.trace[5:7]] == [
        (5, "TOOL_PROGRESS", 2.0), (6, "AGENT_MODEL_STEP", 2.0)]
    thrown = replace(first, trace=tuple(replace(e, t=60.0) if e.seq == 5 else e
                                        for e in first.trace))
    backwards = replace(first, finished_at=-3.0,
                        stored_row={**first.stored_row, "finished_at": -3.0})
    ax = run_timeline({"clean": first, "thrown": thrown, "backwards": backwards})
    assert {gid.split(":")[0] for gid in spans(ax)} == {"clean"}
    assert set(by_gid(ax, "extent:")) == {"extent:clean"}
    assert set(by_gid(ax, "deadline:")) == {"deadline:clean"}
    said = {gid: a.get_text() for gid, a in by_gid(ax, "contradiction:").items()}
    assert said["contradiction:backwards"] == ("not drawn, times_consistent: the stored "
                                               "finished_at -3 is before its created_at 0")
    # drawn, the longer finding is cut to the axes' width, the cut marked
    canvas = FigureCanvasAgg(ax.figure)
    canvas.draw()
    said = {gid: a.get_text() for gid, a in by_gid(ax, "contradiction:").items()}
    thrown_said = said["contradiction:thrown"]
    assert thrown_said.startswith("not drawn, times_consistent (2 findings): the trace goes "
                                  "back in time 1 time, first AGENT_MODEL_STEP (seq 6)")
    assert thrown_said.endswith("…")
    renderer = canvas.get_renderer()
    right = ax.get_window_extent(renderer).x1
    assert all(a.get_window_extent(renderer).x1 <= right
               for a in by_gid(ax, "contradiction:").values())
    assert [a.get_text() for a in by_gid(ax, "outcome:").values()] == ["SUCCESS"] * 3
    low, high = ax.get_xlim()
    assert -0.1 < low < 0 and 3.0 < high < 3.5  # the clean run's 3 s alone
