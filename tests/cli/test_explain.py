"""``harness-lab explain``: a log entry, a scenario file, typos and wrong paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_lab.cli import main
from tests.conftest import (
    LIBRARY,
    OUTCOMES,
    finished_before_created,
    outcomes_log,
    tampered_log,
)


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run log of the outcome-table scenarios, written by ``harness-lab run``."""
    return outcomes_log(tmp_path_factory.mktemp("logs"))


def test_a_log_entry_is_explained_by_scenario_name(log: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", f"{log}#client-disconnect", "--question", "sse_done"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== client-disconnect / run run-000001\nWhy is there no SSE done?\n")
    assert "DISCONNECTED" in out and "Why did the user get" not in out


def test_a_run_id_only_one_scenario_of_a_log_ran_finds_that_scenario(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(OUTCOMES / "missing-context.yaml"),
                 str(LIBRARY / "sessions" / "success-carried.yaml"), "-q", "--log-dir",
                 str(tmp_path)]) == 0
    (log,) = tmp_path.glob("*.jsonl")
    capsys.readouterr()
    assert main(["explain", f"{log}#run-000002", "--question", "outcome"]) == 0
    assert capsys.readouterr().out.startswith("== session-success-carried / run run-000002")


def test_a_run_id_several_scenarios_of_a_log_ran_is_a_usage_error_naming_them(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["explain", f"{log}#run-000001"]) == 2
    said = capsys.readouterr()
    assert said.err == (f"harness-lab explain: {log}: 13 scenarios ran a run 'run-000001' "
                        "(each numbers its runs from run-000001); name the scenario instead: "
                        "budget-no-progress, budget-progress, client-disconnect and 10 more\n")
    assert said.out == ""


def test_a_misspelt_scenario_is_a_usage_error_with_a_suggestion(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", f"{log}#client-disconect"]) == 2
    assert "did you mean client-disconnect?" in capsys.readouterr().err


def test_a_scenario_file_is_run_and_explained_as_json(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    assert main(["explain", str(OUTCOMES / "semantic-unsupported.yaml"), "--format", "json",
                 "--question", "outcome"]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert item["scenario"] == "semantic-unsupported"
    assert [a["key"] for a in item["answers"]] == ["outcome"]
    assert "SEMANTIC_UNSUPPORTED" in item["answers"][0]["answer"]


def test_a_missing_path_is_a_usage_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert main(["explain", f"{tmp_path / 'nope.jsonl'}#x"]) == 2
    assert "no such log file" in capsys.readouterr().err


def test_a_scenario_named_after_a_log_is_refused_before_anything_is_explained_with_the_form(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["explain", str(log), "client-disconnect"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"harness-lab explain: client-disconnect: no such file or directory (to "
                   f"explain one scenario or run of the log before it: "
                   f"{log}#client-disconnect)\n")


def test_a_directory_of_logs_names_a_log_to_give(log: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(log.parent)]) == 2
    assert capsys.readouterr().err == (f"harness-lab explain: no scenario under {log.parent}; "
                                       f"it holds run logs: name one, e.g. {log}#SCENARIO\n")


def test_a_matrix_variant_is_explained_alone(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the answer's lines whole, whatever the caller's width
    policy = OUTCOMES.parent / "policy" / "user-cancel-notice.yaml"
    assert main(["explain", f"{policy}[silent]", "--question", "sse_done"]) == 0
    out = capsys.readouterr().out
    assert out.count("== ") == 1
    assert out.startswith("== policy-user-cancel-notice[silent] / run run-000001\n")
    assert "cancelled by USER_REQUESTED" in out and "after metadata -> status -> status" in out
    assert main(["explain", f"{policy}[loud]"]) == 2
    assert "has no variant 'loud'" in capsys.readouterr().err


def test_a_log_entry_whose_run_finished_before_it_started_is_explained_with_a_note_saying_so(
        log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tampered = tampered_log(log, "conclusion-guards-pass", finished_before_created,
                            tmp_path / "tampered.jsonl")
    capsys.readouterr()
    assert main(["explain", f"{tampered}#conclusion-guards-pass", "--question", "limits",
                 "--format", "json"]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert item["note"] == ("The run's times contradict each other (times_consistent): the "
                            "stored finished_at -1 is before its created_at 0. The times below "
                            "are quoted as stored.")
    assert "at t=-1 s" in item["answers"][0]["answer"]
