"""Recorded scenarios: shipped cassettes replay offline, forks inject faults, no secrets."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness_lab.cli import main
from harness_lab.runner import run_paths

ROOT = Path(__file__).resolve().parents[2]
SECRET_HEADER = re.compile(r"^\s*-?\s*['\"]?(authorization|api-key|x-api-key|cookie|set-cookie|"
                           r"openai-organization)['\"]?\s*:", re.IGNORECASE | re.MULTILINE)
SECRET_VALUE = re.compile(r"sk-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._-]{8,}|org-[A-Za-z0-9]{8,}")


def test_the_shipped_recorded_scenarios_replay_with_the_network_blocked(
        no_network: list[Any]) -> None:
    results = run_paths([ROOT / "scenarios" / "recorded"])
    assert {r.scenario: r.row()["expected"] for r in results} == {
        "recorded-deadline-during-guard": "ok",
        "recorded-diagnosis-success": "ok",
        "recorded-disconnect-after-second-tool": "ok",
    }
    assert no_network == []


def test_no_cassette_in_the_repository_holds_a_secret_looking_header_or_key() -> None:
    cassettes = sorted((ROOT / "cassettes").rglob("*.yaml"))
    assert cassettes, "the repository ships cassettes"
    for path in cassettes:
        if "reference" in path.parts:
            continue  # scripted conversations, not recordings
        text = path.read_text(encoding="utf-8")
        assert not SECRET_HEADER.search(text), f"{path} stores a secret header"
        assert not SECRET_VALUE.search(text), f"{path} stores a secret-looking value"


def test_recording_against_a_reference_server_then_replaying_gives_the_same_row(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "cassettes").mkdir()
    scenario = tmp_path / "scenarios" / "diagnosis-success.yaml"
    shutil.copy(ROOT / "scenarios" / "recorded" / "diagnosis-success.yaml", scenario)
    text = scenario.read_text(encoding="utf-8").replace("../../cassettes/", "../cassettes/")
    scenario.write_text(text, encoding="utf-8")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reference = ROOT / "cassettes" / "reference" / "diagnosis-success.yaml"
    assert main(["record", str(scenario), "--reference", str(reference)]) == 0
    recorded = capsys.readouterr().out
    cassette = tmp_path / "cassettes" / "recorded-diagnosis-success.yaml"
    assert cassette.exists()
    assert "sk-reference-not-a-secret" not in cassette.read_text(encoding="utf-8")
    [replayed] = run_paths([scenario])
    assert replayed.row()["expected"] == "ok"
    assert recorded.startswith(f"recorded 7 interactions into {cassette} (7 in all, ")


def test_a_changed_query_misses_the_cassette_and_names_the_request(tmp_path: Path) -> None:
    source = (ROOT / "scenarios" / "recorded" / "diagnosis-success.yaml").read_text(
        encoding="utf-8")
    changed = source.replace("Why is checkout slow since 10:00?", "Why is payment slow?")
    changed = changed.replace("../../cassettes/", f"{ROOT}/cassettes/")
    path = tmp_path / "scenarios" / "changed.yaml"
    path.parent.mkdir()
    path.write_text(changed, encoding="utf-8")
    [result] = run_paths([path])
    assert result.error is not None
    assert result.error.startswith("CassetteMiss: cassette miss at request 1: POST ")
    assert "messages[1].content" in result.error
