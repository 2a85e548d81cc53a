"""Hostile run logs: every command that reads logs names the file and line, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_lab.cli import main


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _hostile(library_log: Path, tmp_path: Path, name: str, run_line: str) -> Path:
    lines = _lines(library_log)
    bad = tmp_path / f"{name}.jsonl"
    bad.write_text("\n".join([lines[0], run_line, *lines[2:]]) + "\n", encoding="utf-8")
    return bad


def _cases(library_log: Path) -> dict[str, str]:
    run = json.loads(_lines(library_log)[1])
    seq = json.dumps(run).replace(f'"seq": {run["seq"]}', '"seq": ' + "9" * 5000, 1)
    nan = dict(run, wall_s=float("nan"))
    return {
        "deep": "[" * 100_000 + "]" * 100_000,
        "digits": seq,
        "nan": json.dumps(nan),
        "infinite": json.dumps(run).replace('"wall_s": ', '"wall_s": 9e999, "x": ', 1),
    }


COMMANDS = {
    "diff": lambda log, other, tmp: ["diff", str(other), str(log)],
    "explain": lambda log, other, tmp: ["explain", str(log)],
    "report": lambda log, other, tmp: ["report", str(log), "--out", str(tmp / "r.html")],
    "audit": lambda log, other, tmp: ["audit", str(log)],
    "calibrate": lambda log, other, tmp: ["calibrate", str(log)],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", ["deep", "digits", "nan", "infinite"])
def test_a_hostile_log_line_is_refused_naming_file_and_line(
        library_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        command: str, case: str) -> None:
    bad = _hostile(library_log, tmp_path, case, _cases(library_log)[case])
    code = main(COMMANDS[command](bad, library_log, tmp_path))
    out, err = capsys.readouterr()
    assert code in (1, 2), (out, err)
    assert f"{bad}:2" in err, err
    assert "Traceback" not in out + err
    assert not (tmp_path / "r.html").exists()


WRONG_TYPES = {
    "scenario": [1],
    "file": 7,
    "description": None,
    "case": {"row": 1},
    "tags": "outcome-table",
    "error": ["boom"],
    "stored_row": "SUCCESS",
    "turns": {},
    "seq": "0",
    "wall_s": True,
    "verdict": "PASSED",
}
"""A field of a run line and a value of the wrong type (or outside its values) for it."""


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("field", WRONG_TYPES)
def test_a_run_line_field_of_the_wrong_type_is_refused_naming_file_line_and_field(
        library_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        command: str, field: str) -> None:
    run = json.loads(_lines(library_log)[1])
    run[field] = WRONG_TYPES[field]
    bad = _hostile(library_log, tmp_path, field, json.dumps(run))
    code = main(COMMANDS[command](bad, library_log, tmp_path))
    out, err = capsys.readouterr()
    assert code in (1, 2), (out, err)
    assert f"{bad}:2: " in err and f"{field}: " in err, err
    assert "Traceback" not in out + err
    assert not (tmp_path / "r.html").exists()
