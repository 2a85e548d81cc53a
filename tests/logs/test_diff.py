"""diff_logs and ``harness-lab diff``: what changed between two runs, and what regressed."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.logs import read_log
from harness_lab.logs.diff import KINDS, Side, diff_logs, diff_results
from harness_lab.logs.writer import LogWriter
from harness_lab.runner.run import ScenarioResult, run_paths

OUTCOMES = Path(__file__).resolve().parents[2] / "scenarios" / "outcomes"


def _run(name: str, path: Path) -> ScenarioResult:
    (result,) = run_paths([path])
    return dataclasses.replace(result, scenario=name)


@pytest.fixture(scope="module")
def unsupported() -> ScenarioResult:
    """semantic-unsupported, ok: FALLBACK / SEMANTIC_UNSUPPORTED."""
    return _run("s", OUTCOMES / "semantic-unsupported.yaml")


@pytest.fixture(scope="module")
def unavailable() -> ScenarioResult:
    """semantic-unavailable, ok: FALLBACK / SEMANTIC_UNAVAILABLE."""
    return _run("s", OUTCOMES / "semantic-unavailable.yaml")


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> ScenarioResult:
    """semantic-unsupported with the guard saying SUPPORTED: its expectations fail."""
    path = tmp_path_factory.mktemp("edited") / "semantic-unsupported.yaml"
    text = (OUTCOMES / "semantic-unsupported.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace(
        'guard: {verdict: UNSUPPORTED, rationale: "slow requests do not show a memory leak"}',
        "guard: {verdict: SUPPORTED}"), encoding="utf-8")
    result = _run("s", path)
    assert result.verdict == "FAILED"
    return result


def test_an_outcome_changed_by_the_code_under_an_unchanged_file_regressed(
        unsupported: ScenarioResult, unavailable: ScenarioResult) -> None:
    diff = diff_results([Side(unsupported, "same")], [Side(unavailable, "same")])
    (change,) = diff.changes
    assert (change.change, change.regressed, diff.regressed) == ("regressed", True, True)
    assert change.aspects[0] == "outcome"
    assert "fallback_type SEMANTIC_UNSUPPORTED -> SEMANTIC_UNAVAILABLE" in change.detail
    assert "the scenario file did not change" in change.detail


def test_an_outcome_changed_with_its_file_and_expectations_is_a_change_not_a_regression(
        unsupported: ScenarioResult, unavailable: ScenarioResult) -> None:
    diff = diff_results([Side(unsupported, "before")], [Side(unavailable, "after")])
    (change,) = diff.changes
    assert (change.change, change.regressed, diff.regressed) == ("changed", False, False)
    assert change.aspects == ("outcome", "states", "sse", "trace", "stored_row", "file")
    assert "trace event 5 TOOL_PROGRESS: bytes 46 -> 49" in change.detail


def test_a_pass_turned_failure_is_a_new_failure_and_the_reverse_a_new_pass(
        unsupported: ScenarioResult, failing: ScenarioResult) -> None:
    worse = diff_results([Side(unsupported, "a")], [Side(failing, "b")])
    assert [(c.change, c.regressed) for c in worse.changes] == [("new failure", True)]
    assert worse.changes[0].detail.startswith("verdict ok -> FAILED (")
    better = diff_results([Side(failing, "b")], [Side(unsupported, "a")])
    assert [(c.change, c.regressed) for c in better.changes] == [("new pass", False)]
    assert not better.regressed


def test_added_removed_and_new_failing_scenarios_are_listed(
        unsupported: ScenarioResult, failing: ScenarioResult) -> None:
    gone = dataclasses.replace(unsupported, scenario="gone")
    new = dataclasses.replace(unsupported, scenario="new")
    broken = dataclasses.replace(failing, scenario="broken")
    diff = diff_results([Side(gone, "x")], [Side(new, "y"), Side(broken, "z")])
    assert [(c.scenario, c.change, c.regressed) for c in diff.changes] == [
        ("broken", "new failure", True), ("new", "added", False), ("gone", "removed", False)]
    assert diff.counts() == {"regressed": 0, "new failure": 1, "new pass": 0, "changed": 0,
                             "added": 1, "removed": 1, "unchanged": 0}


def test_a_second_scenario_of_the_same_name_is_compared_under_its_file_not_dropped(
        unsupported: ScenarioResult) -> None:
    clash = dataclasses.replace(unsupported, path="other/semantic-unsupported.yaml",
                                error="scenario name 's' is already used")
    diff = diff_results([Side(unsupported, "a")], [Side(unsupported, "a"), Side(clash, "b")])
    assert [(c.scenario, c.change, c.regressed) for c in diff.changes] == [
        ("s (other/semantic-unsupported.yaml)", "new failure", True), ("s", "unchanged", False)]
    assert diff.regressed


def test_the_frame_lists_changed_scenarios_with_an_ordered_change_column(
        unsupported: ScenarioResult, unavailable: ScenarioResult) -> None:
    same = dataclasses.replace(unsupported, scenario="same")
    diff = diff_results([Side(unsupported, "a"), Side(same, "c")],
                        [Side(unavailable, "a"), Side(same, "c")])
    df = diff.frame
    assert list(df.columns) == ["scenario", "change", "old", "new", "regressed", "aspects",
                                "detail"]
    assert df["scenario"].tolist() == ["s"]
    assert list(df["change"].cat.categories) == list(KINDS)
    assert df["change"].cat.ordered


def _copy(directory: Path, *names: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(OUTCOMES / name, directory / name)
    return directory


def _log(paths: list[Path], where: Path) -> Path:
    with LogWriter.open(where, "run") as writer:
        for result in run_paths(paths):
            writer.add(result)
    return writer.path


def _logs_before_and_after_a_wrong_expectation(tmp_path: Path, *names: str
                                               ) -> tuple[Path, Path]:
    """Logs of the outcome scenarios ``names`` (``semantic-unsupported.yaml`` among them),
    then of the same after that file's guard was made to answer SUPPORTED, which its
    expectations do not allow: a new failure."""
    library = _copy(tmp_path / "lib", *names)
    old = _log([library], tmp_path / "logs")
    edited = library / "semantic-unsupported.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("UNSUPPORTED, rationale",
                                                                 "SUPPORTED, rationale"),
                      encoding="utf-8")
    return old, _log([library], tmp_path / "logs2")


def test_two_logs_of_the_same_files_differ_in_nothing(tmp_path: Path) -> None:
    library = _copy(tmp_path / "lib", "missing-context.yaml", "timeout-no-content.yaml")
    diff = diff_logs(_log([library], tmp_path / "a"), _log([library], tmp_path / "b"))
    assert not diff.regressed
    assert [c.change for c in diff.changes] == ["unchanged", "unchanged"]


def test_diff_names_the_one_scenario_changed_between_two_runs_and_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = _logs_before_and_after_a_wrong_expectation(
        tmp_path, "missing-context.yaml", "semantic-unsupported.yaml")
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["scenario", "change", "was", "now", "what", "changed"]
    assert lines[1].split()[:4] == ["semantic-unsupported", "new", "failure", "ok"]
    assert lines[-1] == "2 scenario(s) compared: 1 new failure; 1 unchanged"
    assert all(len(line) <= 100 for line in lines)
    assert main(["diff", str(old), str(new), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["regressed"] is True
    assert [s["scenario"] for s in data["scenarios"]] == ["semantic-unsupported"]
    [changed] = data["scenarios"]
    assert changed["differences"][0]["aspect"] == "verdict"
    assert {d["aspect"] for d in changed["differences"]} >= {"verdict", "outcome"}
    assert main(["diff", str(old), str(new), "--format", "json", "--all"]) == 1
    every = json.loads(capsys.readouterr().out)["scenarios"]
    assert {s["scenario"]: (s["change"], s["differences"]) for s in every
            }["missing-context"] == ("unchanged", [])
    assert len(every) == 2


def test_at_80_columns_the_table_gives_the_names_room_and_the_lines_below_say_what_changed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = _logs_before_and_after_a_wrong_expectation(tmp_path, "semantic-unsupported.yaml")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["diff", str(old), str(new)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["scenario", "change", "was", "now"]
    assert lines[1].split() == ["semantic-unsupported", "new", "failure", "ok", "FAILED"]
    assert lines[2] == ("(what changed left out at this width: widen the terminal or use "
                        "--format json)")
    assert any(line.startswith("semantic-unsupported: verdict ok -> FAILED") for line in lines)
    assert all(len(line) <= 80 for line in lines)


def test_diff_against_a_fresh_run_compares_only_what_it_ran(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    library = _copy(tmp_path / "lib", "missing-context.yaml", "timeout-no-content.yaml")
    old = _log([library], tmp_path / "logs")
    assert main(["diff", str(old), "--run", str(library / "missing-context.yaml"),
                 "--no-log"]) == 0
    assert capsys.readouterr().out.strip() == "1 scenario(s) compared: no change"


@pytest.mark.parametrize("words", [["OLD"], ["OLD", "OLD", "--run", "x"], ["NOTALOG", "OLD"]])
def test_diff_usage_errors_exit_2_with_a_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], words: list[str]) -> None:
    old = _log([OUTCOMES / "missing-context.yaml"], tmp_path / "logs")
    other = tmp_path / "x.yaml"
    other.write_text("name: x\n", encoding="utf-8")
    given = [str(old) if w == "OLD" else str(other) if w == "NOTALOG" else w for w in words]
    assert main(["diff", *given]) == 2
    assert capsys.readouterr().err.startswith("harness-lab diff: ")


def test_a_log_read_back_diffs_like_its_path(tmp_path: Path) -> None:
    path = _log([OUTCOMES / "missing-context.yaml"], tmp_path / "logs")
    assert diff_logs(read_log(path), path).changes == diff_logs(path, path).changes
