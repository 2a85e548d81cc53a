"""The "compared with" view's data: a report set against an earlier run log.

Two logs of the small library of ``test_viewer.py`` are written; between them one
scenario's expectation is changed (``deadline-timeout-ok`` now expects three tool calls, so
it fails), one file is removed and one added. What each scenario became is known from the
files, not from the code under test.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.logs.reader import Log, LogError, read_log
from harness_lab.logs.writer import LogWriter
from harness_lab.report.compare import (
    Comparison,
    change_badge,
    change_filter,
    compare_with,
)
from harness_lab.report.viewer import viewer_html
from harness_lab.runner import run_paths
from harness_lab.runner.run import ScenarioResult
from tests.report.test_viewer import rows_of, write_library
from tests.scenarios import missing_context

CHANGED = "deadline-timeout-ok"
"""The scenario whose expectation the second run changes (it fails then)."""
EDITED = "timeouts/deadline.yaml"
ADDED = missing_context("added-later", "a scenario only the second run has")


def write_log(root: Path, where: Path) -> Path:
    """Run every scenario under ``root`` and keep a log of it in ``where``."""
    with LogWriter.open(where, "run", ["harness-lab", "run", "lib"]) as writer:
        for result in run_paths([root]):
            writer.add(result)
    return writer.path


def change_expectation(root: Path) -> None:
    """Make :data:`CHANGED` expect three tool calls (it makes one)."""
    path = root / EDITED
    path.write_text(path.read_text(encoding="utf-8") + "expect: {tool_calls: 3}\n",
                    encoding="utf-8")


@dataclass(frozen=True)
class Runs:
    """Two logs of the library, the second after one expectation was changed."""

    root: Path
    old: Path
    new: Path


def two_runs(base: Path, *, add_and_remove: bool) -> Runs:
    """The library logged, one expectation changed (and, if asked, a file removed and one
    added), logged again."""
    root = write_library(base / "lib")
    old = write_log(root, base / "logs-old")
    change_expectation(root)
    if add_and_remove:
        (root / "broken" / "unknown-key.yaml").unlink()
        (root / "fallbacks" / "added.yaml").write_text(ADDED, encoding="utf-8")
    new = write_log(root, base / "logs-new")
    return Runs(root, old, new)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return two_runs(tmp_path_factory.mktemp("compare"), add_and_remove=True)


@pytest.fixture(scope="module")
def comparison(runs: Runs) -> Comparison:
    return compare_with(runs.old, read_log(runs.new))


@pytest.fixture(scope="module")
def page(runs: Runs, comparison: Comparison) -> str:
    return viewer_html(read_log(runs.new).results, comparison=comparison)


def test_the_changed_expectation_is_the_only_regression_a_new_failure(
        comparison: Comparison) -> None:
    regressions = [c.scenario for c in comparison.diff.changes if c.regressed]
    assert regressions == [CHANGED]
    change = comparison.change_of(CHANGED)
    assert change is not None
    assert (change.change, change.old, change.new) == ("new failure", "ok", "FAILED")
    assert change_filter(change) == ["new failure", "any", "regression"]


def test_the_counts_are_the_diffs_own(comparison: Comparison) -> None:
    assert comparison.counts() == {"regressed": 0, "new failure": 1, "new pass": 0,
                                   "changed": 0, "added": 1, "removed": 1, "unchanged": 5}


def test_an_unchanged_scenario_matches_no_change_filter_but_its_own_kind(
        comparison: Comparison) -> None:
    change = comparison.change_of("missing-context-ok")
    assert change is not None and change.change == "unchanged"
    assert change_filter(change) == ["unchanged"]
    assert change_badge(change) == ""
    assert change_filter(None) == []


def test_the_drill_down_differences_are_the_diffs_parts_by_aspect(
        comparison: Comparison) -> None:
    change = comparison.change_of(CHANGED)
    assert change is not None
    assert [aspect for aspect, _ in change.differences] == ["verdict", "file"]
    verdict = change.differences[0][1]
    assert verdict.startswith("verdict ok -> FAILED (") and "tool_calls" in verdict
    assert change.differences[1][1] == "scenario file changed"


def test_the_earlier_run_is_described_from_its_log_header(runs: Runs,
                                                          comparison: Comparison) -> None:
    facts = dict(comparison.facts())
    assert facts["log"] == str(runs.old)
    assert facts["command"] == "harness-lab run lib"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z", facts["run"])
    assert facts["version"].startswith("harness_lab ")


def test_a_removed_scenario_is_listed_with_its_earlier_verdict(
        comparison: Comparison, page: str) -> None:
    assert [c.scenario for c in comparison.removed] == ["unknown-key"]
    section = page[page.index('<section id="removed">'):]
    section = section[:section.index("</section>")]
    assert 'data-scenario="unknown-key"' in section
    assert ">ERROR<" in section and "unknown-key.yaml" in section


def test_each_row_carries_its_change_for_the_filter(page: str) -> None:
    rows = {r["data-k-name"]: r for r in rows_of(page)}
    sep = "\u241f"
    assert rows[CHANGED]["data-change"] == f"{sep}new failure{sep}any{sep}regression{sep}"
    assert rows["added-later"]["data-change"] == f"{sep}added{sep}any{sep}"
    assert rows["missing-context-ok"]["data-change"] == f"{sep}unchanged{sep}"
    assert "unknown-key" not in rows


def test_the_header_names_the_earlier_log_and_a_button_per_kind(runs: Runs, page: str) -> None:
    header = page[page.index('<div class="compared"'):page.index("</header>")]
    assert f"<code>{runs.old}</code>" in header
    assert "harness-lab run lib" in header
    commit = read_log(runs.old).header["git_commit"]
    if commit:  # the suite may run outside a git work tree
        assert f"commit {commit[:10]}" in header
    buttons = re.findall(r'<button type="button" class="change-total" data-change="([^"]+)"'
                         r'[^>]*>(\d+) ([^<]+)</button>', header)
    assert buttons == [("regressed", "0", "regressed"), ("new failure", "1", "new failure"),
                       ("new pass", "0", "newly passing"), ("changed", "0", "changed"),
                       ("added", "1", "new"), ("removed", "1", "removed")]
    assert "<b class='cmp-bad'>regressed</b>" in header
    # the same words as harness-lab diff's last line
    assert re.search(r"<b class='cmp-bad'>regressed</b> · \d+ scenario\(s\) compared: "
                     r"1 new failure, 1 added, 1 removed; \d+ unchanged</div>", header)


def test_the_change_filter_offers_the_kinds_present_with_their_counts(page: str) -> None:
    select = page[page.index('<select data-filter="change"'):]
    select = select[:select.index("</select>")]
    options = re.findall(r'<option value="([^"]*)">([^<]*)</option>', select)
    assert options == [("", "all"), ("any", "changed (any) (2)"),
                       ("regression", "regressions (all) (1)"),
                       ("new failure", "new failure (1)"), ("added", "new (1)"),
                       ("unchanged", "unchanged (5)")]


def test_the_drill_down_opens_on_how_the_scenario_changed(page: str) -> None:
    rows = {r["data-k-name"]: r for r in rows_of(page)}
    rid = rows[CHANGED]["id"]
    start = page.index(f'data-for="{rid}"')
    opened = page.index("hl-compared", start)
    assert page.index('<div class="drill">', start) < opened < page.index("hl-facts", start)
    compared = page[opened:page.index("</details>", opened)]
    assert "new failure" in compared and "scenario file changed" in compared
    assert "<th>verdict</th>" in compared and "<th>scenario file</th>" in compared


def test_an_outcome_changed_under_the_same_file_reads_from_what_to_what(
        tmp_path: Path) -> None:
    """Two runs under the same file bytes whose outcome differs: the code changed it."""
    from harness_lab.logs.diff import Side, diff_results

    outcomes = Path(__file__).resolve().parents[2] / "scenarios" / "outcomes"
    (before,) = run_paths([outcomes / "semantic-unsupported.yaml"])
    (after,) = run_paths([outcomes / "semantic-unavailable.yaml"])
    after = dataclasses.replace(after, scenario=before.scenario)
    old = write_log_of([before], tmp_path)
    diff = diff_results([Side(before, "same")], [Side(after, "same")])
    comparison = Comparison(read_log(old), diff)
    change = comparison.change_of(before.scenario)
    assert change is not None and change.change == "regressed"
    assert comparison.outcome_change(change, after) == (
        "outcome changed: FALLBACK:SEMANTIC_UNSUPPORTED → FALLBACK:SEMANTIC_UNAVAILABLE")
    page = viewer_html([after], comparison=comparison)
    assert "outcome changed: FALLBACK:SEMANTIC_UNSUPPORTED → FALLBACK:SEMANTIC_UNAVAILABLE" in page


def write_log_of(results: list[ScenarioResult], where: Path) -> Path:
    """A log of ``results`` in ``where``."""
    with LogWriter.open(where, "run") as writer:
        for result in results:
            writer.add(result)
    return writer.path


def test_a_fresh_run_leaves_out_the_scenarios_it_did_not_run(runs: Runs) -> None:
    only = run_paths([runs.root / "timeouts"])
    comparison = compare_with(runs.old, only)
    assert comparison.removed == []
    assert {c.scenario for c in comparison.diff.changes} == {
        "deadline-timeout-ok", "wrong-counts-fails", "cancel-notice[failure]",
        "cancel-notice[silent]"}


def test_tags_keep_the_comparison_to_the_tagged_scenarios_on_both_sides(
        runs: Runs) -> None:
    comparison = compare_with(runs.old, read_log(runs.new), tags=["demo"])
    assert {c.scenario: c.change for c in comparison.diff.changes} == {
        "deadline-timeout-ok": "new failure", "missing-context-ok": "unchanged"}


def test_an_old_path_that_is_not_a_log_raises_naming_it(runs: Runs) -> None:
    yaml = runs.root / EDITED
    with pytest.raises(LogError, match=re.escape(str(yaml))):
        compare_with(yaml, read_log(runs.new))


@pytest.fixture
def cwd(tmp_path: Path) -> Iterator[Path]:
    import os

    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


@pytest.mark.parametrize("what", ["a scenario file", "a missing path", "a directory"])
def test_compare_with_a_path_that_is_not_a_log_is_a_one_line_error_before_anything_runs(
        runs: Runs, cwd: Path, capsys: pytest.CaptureFixture[str], what: str) -> None:
    bad = {"a scenario file": str(runs.root / EDITED), "a missing path": "nope.jsonl",
           "a directory": str(runs.root)}[what]
    out = cwd / "r.html"
    code = main(["report", str(runs.root), "--compare", bad, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness-lab report: --compare: ")
    assert bad in lines[0]
    assert not out.exists()


def test_the_command_compares_two_logs_and_says_so(runs: Runs, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    code = main(["report", str(runs.new), "--compare", str(runs.old), "--out", str(out)])
    assert code == 1  # the library fails on purpose
    said = capsys.readouterr().out
    assert f"compared with {runs.old}: 1 new failure, 1 added, 1 removed" in said
    text = out.read_text(encoding="utf-8")
    assert '<section id="removed">' in text
    assert f"--compare {runs.old}" in text


def test_the_python_api_takes_the_old_log_as_a_path(runs: Runs, tmp_path: Path) -> None:
    from harness_lab.report import write_html_report

    fresh = run_paths([runs.root])
    out = write_html_report(tmp_path / "r.html", fresh, compare=runs.old)
    rows = {r["data-k-name"]: r for r in rows_of(out.read_text(encoding="utf-8"))}
    assert "regression" in rows[CHANGED]["data-change"]
    assert rows["added-later"]["data-change"].count("added") == 1


def test_several_new_logs_are_compared_together(runs: Runs) -> None:
    log: Log = read_log(runs.new)
    comparison = compare_with(runs.old, [log])
    assert comparison.counts() == {"regressed": 0, "new failure": 1, "new pass": 0,
                                   "changed": 0, "added": 1, "removed": 1, "unchanged": 5}


def test_a_value_that_went_missing_reads_as_none_never_as_a_python_literal(
        tmp_path: Path) -> None:
    root = write_library(tmp_path / "lib")
    case = root / "fallbacks" / "wrong-case.yaml"
    old = write_log_of(run_paths([case]), tmp_path / "before")
    case.write_text(case.read_text(encoding="utf-8").replace(
        "tools: {logs: {}}", "tools: {logs: {}}\nlatency: {model: 1.0}\nconfig: {deadline_s: 0.5}"),
        encoding="utf-8")
    new = read_log(write_log_of(run_paths([case]), tmp_path / "after"))
    comparison = compare_with(old, new)
    change = comparison.change_of("wrong-case-fails")
    assert change is not None and change.change == "regressed"  # FAILED before and after
    outcome = dict(change.differences)["outcome"]
    assert "fallback_type MISSING_REQUIRED_CONTEXT -> none" in outcome
    page = viewer_html(new.results, comparison=comparison)
    visible = re.sub(r"<script>.*?</script>", "", page, flags=re.S)
    for literal in (">None<", "None ", "None;", "-&gt; None", "<NA>", ">nan<", ">null<"):
        assert literal not in visible


def test_logs_and_results_mixed_as_the_new_side_are_refused(runs: Runs) -> None:
    log = read_log(runs.new)
    with pytest.raises(TypeError, match="logs or scenario results, not both"):
        compare_with(runs.old, [log, *log.results])


def test_an_unchanged_scenarios_drill_down_says_so_closed(page: str) -> None:
    rows = {r["data-k-name"]: r for r in rows_of(page)}
    start = page.index(f'data-for="{rows["missing-context-ok"]["id"]}"')
    opened = page.index("hl-compared", start)
    compared = page[opened:page.index("</details>", opened)]
    assert compared.startswith('hl-compared"><summary>')
    assert "unchanged: the outcome, states, SSE events, trace, stored row" in compared
