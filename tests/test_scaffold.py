"""``harness-lab init``: a starter directory that runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_lab.cli import main


def test_init_writes_one_scenario_per_path_that_all_pass(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "starter"
    assert main(["init", str(target)]) == 0
    assert sorted(p.name for p in target.iterdir()) == [
        "README.md", "diagnosis-report.yaml", "fallback.yaml", "knowledge.yaml",
        "scenario.schema.json", "system-chat.yaml"]
    capsys.readouterr()
    assert main(["run", str(target), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted((r["intent"], r["release_outcome"]) for r in rows) == [
        ("DIAGNOSIS", "FALLBACK"), ("DIAGNOSIS", "SUCCESS"), ("KNOWLEDGE_QUERY", "SUCCESS"),
        ("SYSTEM_CHAT", "SUCCESS")]


def test_each_scaffolded_scenario_opens_with_the_schema_modeline(tmp_path: Path) -> None:
    main(["init", str(tmp_path / "s")])
    for path in (tmp_path / "s").glob("*.yaml"):
        assert path.read_text(encoding="utf-8").startswith(
            "# yaml-language-server: $schema=./scenario.schema.json\n")
    schema = json.loads((tmp_path / "s" / "scenario.schema.json").read_text())
    assert schema["title"] == "Scenario"


def test_init_overwrites_nothing_and_exits_two(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fallback.yaml").write_text("mine", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    assert "would overwrite" in capsys.readouterr().err
    assert (tmp_path / "fallback.yaml").read_text() == "mine"
    assert not (tmp_path / "knowledge.yaml").exists()


def test_the_readme_suggestion_of_a_deadline_fails_the_copy_as_it_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["init", str(tmp_path / "s")])
    readme = (tmp_path / "s" / "README.md").read_text(encoding="utf-8")
    fault = readme.split("`faults: ")[1].split("`")[0]
    copy = (tmp_path / "s" / "diagnosis-report.yaml").read_text(encoding="utf-8").replace(
        "name: starter-diagnosis-report", "name: try") + f"faults: {fault}\n"
    (tmp_path / "try.yaml").write_text(copy, encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(tmp_path / "try.yaml"), "--format", "json"]) == 1
    [row] = json.loads(capsys.readouterr().out)
    assert (row["run_state"], row["verdict"]) == ("TIMED_OUT", "FAILED")
