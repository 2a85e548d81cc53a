"""The starter scenario directory: each file opens with the schema modeline, and the
README's suggestion does what it says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.scaffold import scaffold


def test_each_scaffolded_scenario_opens_with_the_schema_modeline(tmp_path: Path) -> None:
    scaffold(tmp_path / "s")
    for path in (tmp_path / "s").glob("*.yaml"):
        assert path.read_text(encoding="utf-8").startswith(
            "# yaml-language-server: $schema=./scenario.schema.json\n")
    schema = json.loads((tmp_path / "s" / "scenario.schema.json").read_text())
    assert schema["title"] == "Scenario"


def test_the_readme_suggestion_of_a_deadline_fails_the_copy_as_it_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scaffold(tmp_path / "s")
    readme = (tmp_path / "s" / "README.md").read_text(encoding="utf-8")
    fault = readme.split("`faults: ")[1].split("`")[0]
    copy = (tmp_path / "s" / "diagnosis-report.yaml").read_text(encoding="utf-8").replace(
        "name: starter-diagnosis-report", "name: try") + f"faults: {fault}\n"
    (tmp_path / "try.yaml").write_text(copy, encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(tmp_path / "try.yaml"), "--format", "json"]) == 1
    [row] = json.loads(capsys.readouterr().out)
    assert (row["run_state"], row["verdict"]) == ("TIMED_OUT", "FAILED")
