"""GitHub Actions ``::error`` annotations of a run's failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.runner import ScenarioResult, run_paths
from harness_lab.runner.annotations import escape_data, escape_property, github_annotations
from harness_lab.scenarios.match import Mismatch
from tests.runner.test_junit import BROKEN, GOOD, WRONG


def test_data_escapes_percent_and_line_breaks_only() -> None:
    assert escape_data("100% a:b,c\r\nnext") == "100%25 a:b,c%0D%0Anext"


def test_a_property_escapes_colons_and_commas_too() -> None:
    assert escape_property("C:\\x,y%\n") == "C%3A\\x%2Cy%25%0A"


def test_one_error_line_per_failing_scenario_at_its_first_problem(tmp_path: Path) -> None:
    for name, text in {"good": GOOD, "wrong": WRONG, "broken": BROKEN}.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    lines = github_annotations(run_paths([tmp_path]), workspace=str(tmp_path))
    assert lines == [
        "::error file=broken.yaml,line=3,title=ERROR broken::"
        "modle: unknown key; did you mean 'model'?",
        "::error file=wrong.yaml,line=7,title=FAILED wrong::"
        "release_outcome: expected SUCCESS, got FALLBACK%0Atool_calls: expected 2, got 0",
    ]


def test_a_path_outside_the_workspace_stays_as_it_was_given_without_a_line_it_lacks() -> None:
    result = ScenarioResult("w, x: y", "/elsewhere/a:b.yaml",
                            mismatches=(Mismatch("run_state", "SUCCESS", "FAILED"),))
    assert github_annotations([result], workspace="/home/runner/repo") == [
        "::error file=/elsewhere/a%3Ab.yaml,title=FAILED w%2C x%3A y::"
        "run_state: expected SUCCESS, got FAILED"]


def test_a_run_without_failures_has_no_annotation() -> None:
    assert github_annotations([ScenarioResult("fine", "a.yaml")]) == []


def test_a_path_relative_to_a_subdirectory_is_given_from_the_workspace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    result = ScenarioResult("w", "a.yaml", error="ValueError: no")
    assert github_annotations([result], workspace=str(tmp_path)) == [
        "::error file=sub/a.yaml,title=ERROR w::ValueError: no"]
