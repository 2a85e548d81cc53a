"""Hostile audit sources: each is refused naming file, line or table (never a traceback),
and reading creates nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness_lab.audit import audit
from harness_lab.audit.sources import SourceError, check_mapping, export_lines
from harness_lab.record import RunRecord
from tests.audit.test_audit import outcomes  # noqa: F401 (the outcome runs, as a fixture)


def _export(path: Path, lines: list[dict[str, Any]], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize(("line", "message"), [
    ("[" * 100_000 + "]" * 100_000, "nested 100000 levels deep"),
    ('{"table": "trace_event", "run_id": "r", "seq": Infinity}', "Infinity is not a number"),
    ('{"table": "diagnosis_run", "run_id": "r", "total_tokens": 9e999}', "is too large"),
    ('{"table": "diagnosis_run", "run_id": "r", "seq": ' + "9" * 5000 + "}", "5000 digits"),
])
def test_a_hostile_export_line_is_refused_naming_file_and_line(
        outcomes: dict[str, RunRecord], tmp_path: Path, line: str,  # noqa: F811
        message: str) -> None:
    lines = export_lines(next(iter(outcomes.values())))
    path = _export(tmp_path / "export.jsonl", lines, line + "\n")
    with pytest.raises(SourceError, match=rf"^{path}:{len(lines) + 1}: .*{message}"):
        audit(path)


def test_a_deeply_nested_detail_column_makes_its_run_unreadable_not_a_crash(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:  # noqa: F811
    lines = export_lines(outcomes["conclusion-guards-pass"])
    trace = next(x for x in lines if x["table"] == "trace_event")
    trace["detail"] = "[" * 100_000 + "]" * 100_000
    report = audit(_export(tmp_path / "export.jsonl", lines))
    [run] = report.runs
    assert run.state == "unreadable"
    assert "nested 100000 levels deep" in (run.note or "")


def test_infinite_stored_times_make_a_run_unreadable(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:  # noqa: F811
    db = tmp_path / "runs.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE diagnosis_run (run_id TEXT, status TEXT, "
                     "release_outcome TEXT, termination_state TEXT, created_at REAL)")
        conn.execute("CREATE TABLE trace_event (run_id TEXT, seq INTEGER, t REAL, type TEXT,"
                     " phase TEXT, status TEXT, detail TEXT)")
        conn.execute("CREATE TABLE tool_invocation (run_id TEXT, invocation_id TEXT)")
        conn.execute("INSERT INTO diagnosis_run VALUES ('r1', 'SUCCESS', 'SUCCESS', "
                     "'SUCCESS', 0.0)")
        conn.execute("INSERT INTO trace_event VALUES ('r1', 0, ?, 'RUN_FINISHED', 'RUN', "
                     "'OK', '{}')", (float("inf"),))
        conn.execute("INSERT INTO diagnosis_run VALUES ('r2', 'SUCCESS', 'SUCCESS', "
                     "'SUCCESS', ?)", (float("-inf"),))
    report = audit(f"sqlite:///{db}")
    assert [(r.run_id, r.state) for r in report.runs] == [("r1", "unreadable"),
                                                          ("r2", "unreadable")]
    assert all("not a finite number" in (r.note or "") for r in report.runs)


def test_a_run_table_without_run_ids_is_refused_naming_the_table(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE diagnosis_run (id TEXT, status TEXT)")
        conn.execute("INSERT INTO diagnosis_run VALUES ('r1', 'SUCCESS')")
        conn.execute("CREATE TABLE trace_event (run_id TEXT)")
        conn.execute("CREATE TABLE tool_invocation (run_id TEXT)")
    with pytest.raises(SourceError, match="table diagnosis_run has no column run_id"):
        audit(f"sqlite:///{db}")


def test_a_missing_sqlite_file_is_refused_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nothere.db"
    with pytest.raises(SourceError, match=f"no such database file {missing}"):
        audit(f"sqlite:///{missing}")
    assert not missing.exists()


@pytest.mark.parametrize(("mapping", "message"), [
    ({"diagnosis_run": {"columns": [1, 2]}}, "mapping.diagnosis_run.columns: an object"),
    ({"diagnosis_run": {"columns": {"run_id": 7}}}, "mapping.diagnosis_run.columns"),
    ({"diagnosis_runs": {}}, "unknown table 'diagnosis_runs'"),
    ({"trace_event": {"table": ["t"]}}, "mapping.trace_event.table: a table name"),
    ({"trace_event": {"tabel": "t"}}, "unknown key 'tabel'"),
    ([1, 2], "the mapping must be an object"),
])
def test_a_malformed_mapping_is_refused_naming_the_place(mapping: Any, message: str) -> None:
    with pytest.raises(SourceError, match=message):
        check_mapping(mapping)
