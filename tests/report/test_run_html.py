"""A result's drill-down names what did not hold by ``file:line``, as the command line does."""

from __future__ import annotations

from pathlib import Path

from harness_lab.report.run_html import result_location, result_sections
from harness_lab.runner import run_paths
from harness_lab.runner.run import ScenarioResult
from tests.scenarios import missing_context

WRONG = missing_context("wrong", "expects a report where the model asks for context",
                        rest="expect:\n  run_state: SUCCESS\n  release_outcome: SUCCESS\n")


def wrong_result(tmp_path: Path) -> tuple[ScenarioResult, str]:
    path = tmp_path / "wrong.yaml"
    path.write_text(WRONG, encoding="utf-8")
    (result,) = run_paths([path])
    return result, str(path)


def test_a_failed_result_is_located_at_the_line_of_its_first_failed_expectation(
        tmp_path: Path) -> None:
    result, path = wrong_result(tmp_path)
    assert result_location(result) == f"{path}:8"


def test_the_drill_down_gives_the_file_and_line_and_each_expectations_line(
        tmp_path: Path) -> None:
    result, path = wrong_result(tmp_path)
    page = result_sections(result)
    assert page.count(f"{path}:8") == 2      # the file fact and the release_outcome row
