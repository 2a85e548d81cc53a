"""Hostile audit sources: each is refused naming file, line or table (never a traceback),
and reading creates nothing."""

from __future__ import annotations

import json
import sqlite3
import sys
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


@pytest.mark.parametrize(("table", "column", "value"), [
    ("diagnosis_run", "total_tokens", [5]),
    ("diagnosis_run", "input_tokens", True),
    ("diagnosis_run", "agent_steps", []),
    ("diagnosis_run", "intent", [1]),
    ("diagnosis_run", "termination_reason", ["DEADLINE_EXCEEDED"]),
    ("diagnosis_run", "created_at", "2026-12-05"),
    ("diagnosis_run", "duration_ms", "long"),
    ("trace_event", "t", "abc"),
    ("trace_event", "seq", None),
    ("tool_invocation", "items", {"count": 1}),
    ("tool_invocation", "tool", ["logs"]),
    ("tool_invocation", "error", {"message": "boom"}),
    ("sse_event", "data", 5),
    ("diagnosis_run", "total_tokens", -100),
    ("diagnosis_run", "tool_calls", "-3"),
    ("tool_invocation", "size_bytes", -1.0),
])
def test_a_stored_value_that_does_not_fit_its_column_names_file_line_table_and_column(
        outcomes: dict[str, RunRecord], tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str], table: str, column: str, value: Any) -> None:
    from harness_lab.cli import main

    lines = export_lines(outcomes["conclusion-guards-pass"])
    number, line = next((n, x) for n, x in enumerate(lines, 1) if x["table"] == table)
    line[column] = value
    path = _export(tmp_path / "export.jsonl", lines)
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert f": unreadable: {path}:{number}: {table}.{column}: " in out, out


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
    assert [r.note for r in report.runs] == [
        "trace_event.t: inf is not a finite number",
        "diagnosis_run.created_at: -inf is not a finite number"]


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


def test_a_directory_given_as_the_source_is_called_one(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=f"^{tmp_path}: is a directory \\(give a run log, "):
        audit(str(tmp_path))


@pytest.mark.parametrize(("mapping", "message"), [
    ({"diagnosis_run": {"columns": [1, 2]}}, "mapping.diagnosis_run.columns: an object"),
    ({"diagnosis_run": {"columns": {"run_id": 7}}}, "mapping.diagnosis_run.columns"),
    ({"diagnosis_runs": {}}, "unknown table 'diagnosis_runs'"),
    ({"trace_event": {"table": ["t"]}}, "mapping.trace_event.table: a table name"),
    ({"trace_event": {"tabel": "t"}}, "unknown key 'tabel'"),
    ([1, 2], "the mapping must be an object"),
    ({"diagnosis_run": {"columns": {"stauts": "run_status"}}},
     "mapping.diagnosis_run.columns: unknown column 'stauts'"),
])
def test_a_malformed_mapping_is_refused_naming_the_place(mapping: Any, message: str) -> None:
    with pytest.raises(SourceError, match=message):
        check_mapping(mapping)


@pytest.mark.parametrize("content", ["", "\n\n  \n"], ids=["empty", "blank lines"])
def test_a_source_with_no_runs_fails_the_audit_unless_allowed(
        tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    path = tmp_path / "export.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["audit", str(path)]) == 2
    assert f"{path}: holds no run to audit" in capsys.readouterr().err
    assert main(["audit", str(path), "--allow-empty"]) == 0


def test_a_log_with_only_its_header_fails_the_audit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    header = {"kind": "header", "format_version": 1, "toolkit_version": "0.1.0",
              "command": ["harness-lab", "run"], "cwd": ".", "git_commit": None,
              "python": "3.11", "platform": "linux", "started_at": "2026-01-01T00:00:00Z"}
    path = tmp_path / "header-only.jsonl"
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    assert main(["audit", str(path)]) == 2
    assert "holds no run to audit" in capsys.readouterr().err


def test_unreadable_runs_are_listed_up_to_a_cap_and_then_counted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    lines = [{"table": "diagnosis_run", "run_id": f"r{i}", "status": "SUCCESS",
              "termination_state": "SUCCESS",
              "release_outcome": "NOT_AN_OUTCOME"} for i in range(500)]
    path = _export(tmp_path / "export.jsonl", lines)
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert sum(": unreadable: " in line for line in out) == 20
    assert "... and 480 more (--format json lists them all)" in out


def test_a_deeply_nested_mapping_file_is_refused_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    mapping = tmp_path / "mapping.json"
    mapping.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["audit", "sqlite:///nowhere.db", "--mapping", str(mapping)]) == 2
    assert f"{mapping}: nested 100000 levels deep" in capsys.readouterr().err


def test_auditing_a_log_cut_short_says_it_was_interrupted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main
    from tests.conftest import outcomes_log

    lines = outcomes_log(tmp_path).read_text(encoding="utf-8").splitlines(keepends=True)
    capsys.readouterr()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:3]) + lines[3][:200], encoding="utf-8")
    assert main(["audit", str(cut)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("2 run(s): 2 checked"), out
    assert err == (f"{cut}: line 4 was cut short (the writer stopped mid-line: killed, or "
                   "its disk full); dropped\n"
                   f"{cut}: no footer: the run was interrupted after 2 run(s); what it logged "
                   "is read\n")


@pytest.mark.parametrize(("content", "message"), [
    (b'{"diagnosis_run": {"table": ["chat_run"]}}',
     "mapping.diagnosis_run.table: a table name (a string)"),
    (b'{"diagnosis_run": {"table": "chat_r\xe9n"}}', "not UTF-8 text"),
], ids=["a list for a table name", "latin-1"])
def test_a_mapping_file_that_cannot_be_used_is_named_with_the_place_in_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes,
        message: str) -> None:
    from harness_lab.cli import main

    db = tmp_path / "runs.db"
    sqlite3.connect(db).close()
    mapping = tmp_path / "mapping.json"
    mapping.write_bytes(content)
    for command in ("audit", "calibrate"):
        assert main([command, f"sqlite:///{db}", "--mapping", str(mapping)]) == 2
        assert f"harness-lab {command}: {mapping}: {message}" in capsys.readouterr().err


def test_a_mapping_given_with_an_export_is_refused_rather_than_left_unused(
        outcomes: dict[str, RunRecord], tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    path = _export(tmp_path / "export.jsonl", export_lines(outcomes["conclusion-guards-pass"]))
    mapping = tmp_path / "mapping.json"
    mapping.write_text('{"diagnosis_run": {"table": "chat_run"}}', encoding="utf-8")
    assert main(["audit", str(path), "--mapping", str(mapping)]) == 2
    assert (f"{mapping}: {path} is a JSON Lines export, whose tables and columns are the "
            "toolkit's own; a mapping applies to a database or to OTLP traces"
            ) in capsys.readouterr().err


@pytest.mark.parametrize("url", ["nosuch://x", "postgresql://lab@localhost:notaport/runs"],
                         ids=["an unknown dialect", "a port that is not a number"])
def test_a_database_url_sqlalchemy_cannot_open_is_a_usage_error_naming_it(
        capsys: pytest.CaptureFixture[str], url: str) -> None:
    from harness_lab.cli import main

    for command in ("audit", "calibrate"):
        assert main([command, url]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"harness-lab {command}: {url}: not a database URL SQLAlchemy "
                              "can open ("), err


@pytest.mark.parametrize(("url", "says"), [
    ("postgresql://lab:s3cr3t@127.0.0.1:1/runs",
     "postgresql://lab:***@127.0.0.1:1/runs: cannot read the run tables: OperationalError: "),
    ("mysql://lab:s3cr3t@127.0.0.1/runs",
     "mysql://lab:***@127.0.0.1/runs: the mysql driver is not installed (No module named "
     "'MySQLdb'); install mysqlclient (or PyMySQL)"),
    ("postgresql+nosuch://lab:s3cr3t@127.0.0.1/runs",
     "postgresql+nosuch://lab:***@127.0.0.1/runs: not a database URL SQLAlchemy can open ("),
    ("postgresql+psycopg://lab:s3cr3t@127.0.0.1:1/runs",
     "postgresql+psycopg://lab:***@127.0.0.1:1/runs: the postgresql driver is not installed "
     "(import of psycopg halted; None in sys.modules); install psycopg with: "
     "pip install 'harness_lab[live]' (psycopg2 for a postgresql+psycopg2:// URL)"),
], ids=["a server that refuses", "a driver not installed", "an unknown driver",
        "the live extra's driver not installed"])
def test_a_database_that_cannot_be_read_is_named_without_its_password(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str,
        says: str) -> None:
    from harness_lab.cli import main

    if "+psycopg:" in url:
        monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed

    for command in ("audit", "calibrate"):
        assert main([command, url]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"harness-lab {command}: {says}"), err
        assert "s3cr3t" not in err and len(err.splitlines()) == 1
