"""``harness-lab init``: a starter directory that runs, written over nothing."""

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


def test_init_overwrites_nothing_and_exits_two(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fallback.yaml").write_text("mine", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    assert "would overwrite" in capsys.readouterr().err
    assert (tmp_path / "fallback.yaml").read_text() == "mine"
    assert not (tmp_path / "knowledge.yaml").exists()


def test_init_on_a_file_is_a_usage_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").write_text("mine", encoding="utf-8")
    assert main(["init", str(tmp_path / "taken")]) == 2
    assert capsys.readouterr().err == (f"harness-lab init: {tmp_path / 'taken'} is a file; "
                                       "give a directory\n")


def test_init_outside_a_scenarios_directory_says_how_pytest_collects_the_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["init", str(tmp_path / "evals")]) == 0
    out = capsys.readouterr().out
    assert "note: pytest collects scenario files below a directory named scenarios" in out
    assert f"(pytest {tmp_path / 'evals'}/*.yaml)" in " ".join(out.split())
    assert main(["init", str(tmp_path / "scenarios" / "starter")]) == 0
    assert "note:" not in capsys.readouterr().out

