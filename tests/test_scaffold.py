"""The starter scenario directory: each file opens with the schema modeline, the README's
suggestion does what it says, and it is written whole or not at all, never through a link."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

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


def test_a_dangling_link_in_the_directory_is_refused_and_never_written_through(
        tmp_path: Path) -> None:
    target = tmp_path / "starter"
    target.mkdir()
    outside = tmp_path / "outside.md"
    (target / "README.md").symlink_to(outside)
    with pytest.raises(FileExistsError, match="README.md"):
        scaffold(target)
    assert not outside.exists()
    assert sorted(p.name for p in target.iterdir()) == ["README.md"]


def test_a_write_that_fails_part_way_leaves_the_directory_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "starter"
    target.mkdir()
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    real_link = os.link
    calls = []

    def link_until_the_disk_fills(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", link_until_the_disk_fills)
    with pytest.raises(OSError, match="No space left"):
        scaffold(target)
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]


def test_the_readme_commands_run_the_installed_command_from_the_quick_starts_venv(
        tmp_path: Path) -> None:
    scaffold(tmp_path / "s")
    readme = (tmp_path / "s" / "README.md").read_text(encoding="utf-8")
    commands = [line.strip() for line in readme.splitlines() if "harness-lab " in line
                and line.startswith("    ")]
    assert len(commands) == 4
    assert all(c.startswith(".venv/bin/harness-lab ") for c in commands)
