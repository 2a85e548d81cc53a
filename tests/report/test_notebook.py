"""Notebook views: records, results and sweeps show with the report's colours and no None."""

from __future__ import annotations

import re

import pytest

from harness_lab.report.notebook import record_html, result_html, results_html, sweep_html
from harness_lab.report.palette import VERDICT_BACKGROUNDS, VERDICT_COLORS, outcome_color
from harness_lab.runner import run_paths
from harness_lab.runner.results import ResultSet
from tests.report.test_frames import four_runs
from tests.report.test_viewer import write_library

NO_MISSING_LITERALS = (">None<", "None ", "<NA>", "&lt;NA&gt;", ">nan<", "nan%", " nan")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> ResultSet:
    return run_paths([write_library(tmp_path_factory.mktemp("library"))])


def sections(text: str) -> dict[str, bool]:
    """Each collapsible section's title -> whether it starts open."""
    found = re.findall(r'<details class="hl-section"( open)?><summary>([^<]+)', text)
    return {title.strip(): bool(opened) for opened, title in found}


def test_a_record_shows_its_outcome_in_the_palette_colour_with_events_collapsed() -> None:
    record = four_runs()[1][2]  # TIMED_OUT / FAILED
    text = record_html(record)
    assert f"background:{outcome_color('FAILED', None, 'TIMED_OUT')}" in text
    assert "FAILED:<wbr>TIMED_OUT" in text
    shown = sections(text)
    assert shown["SSE events"] is False and shown["trace"] is False
    assert shown["state axes"] is True and shown["timeline"] is True
    assert '<svg class="timeline"' in text
    assert "RUN_FINISHED" in text and "DEADLINE_EXCEEDED" in text
    for literal in NO_MISSING_LITERALS:
        assert literal not in text


def test_a_failed_result_says_what_did_not_hold_in_the_verdict_colour(
        results: ResultSet) -> None:
    failed = next(r for r in results if r.scenario == "wrong-counts-fails")
    text = result_html(failed)
    assert f"background:{VERDICT_COLORS['FAILED']}" in text
    assert "tool_calls" in text and "<td>5</td><td>1</td>" in text
    assert '<span class="hl-name">wrong-counts-fails</span>' in text
    assert sections(text)["trace"] is False


def test_a_crashed_or_unloaded_result_shows_without_a_record(results: ResultSet) -> None:
    broken = next(r for r in results if r.verdict == "ERROR")
    text = result_html(broken)
    assert "foo: unknown key" in text
    for literal in NO_MISSING_LITERALS:
        assert literal not in text


def test_a_result_set_lists_failures_first_with_the_totals(results: ResultSet) -> None:
    text = results_html(results)
    assert ">3 ok<" in text and ">3 FAILED<" in text and ">1 ERROR<" in text
    names = re.findall(r'<span class="hl-name">([^<]+)</span>', text)
    assert sorted(names[:3]) == ["cancel-notice", "wrong-case-fails", "wrong-counts-fails"]
    assert names[3] == "unknown-key"
    assert sorted(names[4:]) == ["cancel-notice", "deadline-timeout-ok", "missing-context-ok"]
    assert f"background:{VERDICT_BACKGROUNDS['FAILED']}" in text
    for literal in NO_MISSING_LITERALS:
        assert literal not in text


def test_the_views_style_only_their_own_classes(results: ResultSet) -> None:
    text = results_html(results)
    style = re.search(r"<style>(.*?)</style>", text, re.S)
    assert style is not None
    rules = re.sub(r"/\*.*?\*/", "", style.group(1), flags=re.S)
    selectors = re.findall(r"(?:^|})\s*([^{}]+)\{", rules)
    assert selectors
    for selector in selectors:
        for part in selector.split(","):
            assert part.strip().startswith(".hl-"), part


def test_a_sweep_shows_its_shares_with_wilson_intervals() -> None:
    import yaml

    from harness_lab.sweep.engine import Sweep
    from tests.sweep.conftest import SWEEP

    result = Sweep(yaml.safe_load(SWEEP), samples=30, seed=3).run()
    text = sweep_html(result)
    assert "95% Wilson interval" in text
    shares = result.shares(by=list(result.axes) or None)
    seen = shares[shares["count"] > 0]
    first = seen.iloc[0]
    assert f"{int(first['count'])} of {int(first['n'])}" in text
    assert f"{first['ci_low']:.1%} – {first['ci_high']:.1%}" in text
    for literal in NO_MISSING_LITERALS:
        assert literal not in text


def test_a_scenario_built_in_memory_names_no_file_to_show() -> None:
    from harness_lab.runner import run_scenario
    from harness_lab.scenarios import Scenario

    scenario = Scenario.model_validate({
        "name": "in-memory", "description": "built in a notebook", "tools": {"logs": {}},
        "model": [{"draft": {"missing_info": ["which service"]}}]})
    text = result_html(run_scenario(scenario))
    assert "in-memory" in text
    assert "harness-lab show" not in text


def test_a_sweeps_timeouts_are_named_and_coloured_as_the_plots_name_them() -> None:
    import yaml

    from harness_lab.sweep.engine import Sweep
    from tests.sweep.conftest import SWEEP

    result = Sweep(yaml.safe_load(SWEEP), samples=30, seed=3).run()
    timed_out = int((result.frame["run_state"] == "TIMED_OUT").sum())
    assert timed_out > 0, "the fixture's 5 s deadline times some samples out"
    text = sweep_html(result)
    assert "background:#CC6677" in text.replace(" ", "")     # the plots' FAILED:TIMED_OUT rose
    assert ">FAILED:<wbr>TIMED_OUT<" in text                   # a break allowed after the colon
