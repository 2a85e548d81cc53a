"""audit: clean runs pass, tampered copies are flagged by invariant, unfinished runs are
incomplete; from a log, from a JSON Lines export and from a database."""

from __future__ import annotations

import gc
import json
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

from harness_lab.audit import audit
from harness_lab.audit.sources import SourceError, export_lines, iter_sql
from harness_lab.cli import main
from harness_lab.fakes import draft
from harness_lab.logs.writer import LogWriter
from harness_lab.record import RunRecord
from harness_lab.runner.results import ResultSet
from harness_lab.runner.run import run_paths
from harness_lab.store.sql import SqlRunStore
from tests.audit.stored import fallback_runs
from tests.conftest import INV1, build
from tests.postgres import PostgresServer

OUTCOMES = Path(__file__).resolve().parents[2] / "scenarios" / "outcomes"


@pytest.fixture(scope="module")
def outcomes() -> dict[str, RunRecord]:
    """The outcome-table scenarios' records, by scenario."""
    results: ResultSet = run_paths([OUTCOMES])
    return {r.scenario: r.record for r in results if r.record is not None}


def _export(path: Path, records: list[RunRecord], *, sse: bool = True,
            change: Any = None) -> Path:
    lines = [line for r in records for line in export_lines(r)
             if sse or line["table"] != "sse_event"]
    if change is not None:
        change(lines)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_every_outcome_scenario_exported_as_rows_passes(outcomes: dict[str, RunRecord],
                                                        tmp_path: Path) -> None:
    for name, record in outcomes.items():
        report = audit(_export(tmp_path / f"{name}.jsonl", [record]))
        assert [(r.state, r.violations) for r in report.runs] == [("checked", ())], name
        assert report.ok


def test_a_log_the_toolkit_wrote_passes_and_its_crashed_runs_are_incomplete(
        tmp_path: Path) -> None:
    results = run_paths([OUTCOMES, OUTCOMES.parent / "faults" / "crash-after-tool.yaml"])
    with LogWriter.open(tmp_path, "run") as writer:
        for r in results:
            writer.add(r)
    report = audit(writer.path)
    assert report.ok
    assert [r.scenario for r in results if r.crashed] == ["fault-crash-after-tool"]
    assert report.counts()["checked"] == len(results) - 1
    assert report.counts()["incomplete"] == 1


def test_the_runs_of_a_log_are_named_by_their_scenario_and_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    faults = OUTCOMES.parent / "faults"
    results = run_paths([faults / "store-refuses-history.yaml",
                         faults / "store-refuses-completion-not-carried.yaml"])
    with LogWriter.open(tmp_path, "run") as writer:
        for r in results:
            writer.add(r)
    report = audit(writer.path)
    assert [(r.run_id, r.scenario) for r in report.runs] == [
        ("run-000001", "store-refuses-history"),
        ("run-000001", "store-refuses-completion-not-carried, turn 1 of 2"),
        ("run-000002", "store-refuses-completion-not-carried, turn 2 of 2")]
    assert main(["audit", str(writer.path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("run-000001 (store-refuses-history): stored_axes_distinct: ")
    assert ("run-000001 (store-refuses-completion-not-carried, turn 1 of 2): "
            "fallback_is_not_failure: ") in out


def _rows(lines: list[dict[str, Any]], table: str) -> list[dict[str, Any]]:
    return [line for line in lines if line["table"] == table]


def _two_terminations(lines: list[dict[str, Any]]) -> None:
    finished = [t for t in _rows(lines, "trace_event") if t["type"] == "RUN_FINISHED"][0]
    lines.append({**finished, "seq": finished["seq"] + 1, "t": finished["t"] + 1.0})


def _content_after_done(lines: list[dict[str, Any]]) -> None:
    sse = _rows(lines, "sse_event")
    content = [e for e in sse if e["kind"] == "content"][0]
    lines.append({**content, "seq": sse[-1]["seq"] + 1, "t": sse[-1]["t"] + 0.5})


def _cited_error(lines: list[dict[str, Any]]) -> None:
    invocation = [i for i in _rows(lines, "tool_invocation")
                  if i["invocation_id"] == INV1][0]
    invocation.update(status="ERROR", evidence_status="ERROR", error_code="EXECUTION")


def _tool_after_saturation(lines: list[dict[str, Any]]) -> None:
    trace = _rows(lines, "trace_event")
    stop = [t for t in trace if t["type"] == "COLLECTION_STOP"][0]
    for t in trace:
        if t["seq"] > stop["seq"]:
            t["seq"] += 1
    lines.append({"table": "trace_event", "run_id": stop["run_id"], "seq": stop["seq"] + 1,
                  "t": stop["t"], "type": "TOOL_INVOCATION", "phase": "TOOL",
                  "status": "STARTED", "detail": {"tool": "logs", "evidence_tool": True}})


def _fallback_stored_failed(lines: list[dict[str, Any]]) -> None:
    _rows(lines, "diagnosis_run")[0]["status"] = "FAILED"


def _fallback_published(lines: list[dict[str, Any]]) -> None:
    _rows(lines, "diagnosis_run")[0]["published_result"] = '{"conclusion": "x"}'


def _a_refused_call_counted(lines: list[dict[str, Any]]) -> None:
    _rows(lines, "diagnosis_run")[0]["tool_calls"] += 1


def _tokens_stored_otherwise(lines: list[dict[str, Any]]) -> None:
    _rows(lines, "diagnosis_run")[0]["total_tokens"] = 640


def _finished_before_created(lines: list[dict[str, Any]]) -> None:
    _rows(lines, "diagnosis_run")[0]["finished_at"] = -1.0


def _negative_duration(lines: list[dict[str, Any]]) -> None:
    _rows(lines, "diagnosis_run")[0]["duration_ms"] = -1.0


TAMPERED = [
    ("conclusion-guards-pass", _two_terminations, "single_termination",
     "2 RUN_FINISHED events"),
    ("conclusion-guards-pass", _content_after_done, "sse_protocol",
     "2 content/failure events"),
    ("conclusion-guards-pass", _cited_error, "cited_ready_only",
     f"published content cites {INV1}, which is not a READY invocation"),
    ("saturated-progress", _tool_after_saturation, "no_evidence_tool_after_saturation",
     "evidence tool logs ran after COLLECTION_STOP"),
    ("insufficient-evidence", _fallback_stored_failed, "stored_axes_distinct",
     "stored status FAILED, §12.2 maps FALLBACK to SUCCESS"),
    ("insufficient-evidence", _fallback_published, "stored_axes_distinct",
     "published_result stored for a run that is not DIAGNOSIS + SUCCESS"),
    ("conclusion-guards-pass", _a_refused_call_counted, "tool_calls_reconciled",
     "the stored row counts 3 tool calls, 2 were started"),
    ("conclusion-guards-pass", _tokens_stored_otherwise, "tokens_reconciled",
     "the stored row counts 640 tokens, RUN_FINISHED reconciled 0"),
    ("conclusion-guards-pass", _finished_before_created, "times_consistent",
     "the stored finished_at -1 is before its created_at 0"),
    ("conclusion-guards-pass", _negative_duration, "times_consistent",
     "the stored duration_ms -1 is negative"),
]


@pytest.mark.parametrize(("scenario", "tamper", "invariant", "message"), TAMPERED,
                         ids=[t[2] + "-" + t[1].__name__ for t in TAMPERED])
def test_a_tampered_export_is_flagged_by_name(outcomes: dict[str, RunRecord], tmp_path: Path,
                                             scenario: str, tamper: Any, invariant: str,
                                             message: str) -> None:
    report = audit(_export(tmp_path / "t.jsonl", [outcomes[scenario]], change=tamper))
    (run,) = report.runs
    assert (invariant, message) in run.violations
    assert not report.ok


def test_a_trace_going_back_in_time_is_flagged_naming_both_events(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:
    def earlier(lines: list[dict[str, Any]]) -> None:
        _rows(lines, "trace_event")[-1]["t"] = 0.5

    lines = export_lines(outcomes["conclusion-guards-pass"])
    *_, before, last = _rows(lines, "trace_event")
    assert last["type"] == "RUN_FINISHED" and before["t"] > 0.5
    (run,) = audit(_export(tmp_path / "t.jsonl", [outcomes["conclusion-guards-pass"]],
                          change=earlier)).runs
    assert run.violations == (
        ("times_consistent", f"the trace goes back in time 1 time, first RUN_FINISHED "
                             f"(seq {last['seq']}) at t=0.5 after {before['type']} "
                             f"(seq {before['seq']}) at t={before['t']}"),)


def test_a_run_finished_event_after_the_stored_finish_is_said_once(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:
    # the rebuilt run's termination is that event: said of the trace, not again of the end
    record = outcomes["conclusion-guards-pass"]
    assert record.stored_row is not None and record.stored_row["finished_at"] == 6.7

    def late(lines: list[dict[str, Any]]) -> None:
        _rows(lines, "trace_event")[-1]["t"] = 12.5

    last = _rows(export_lines(record), "trace_event")[-1]
    assert last["type"] == "RUN_FINISHED"
    (run,) = audit(_export(tmp_path / "t.jsonl", [record], change=late)).runs
    assert run.violations == (
        ("times_consistent", f"1 trace event outside the stored run's time [0, 6.7], first "
                             f"RUN_FINISHED (seq {last['seq']}) at t=12.5"),)


def test_a_tool_invocation_stored_finishing_before_it_started_is_flagged(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:
    record = outcomes["conclusion-guards-pass"]
    first = _rows(export_lines(record), "tool_invocation")[0]
    assert first["started_at"] > 0

    def backwards(lines: list[dict[str, Any]]) -> None:
        _rows(lines, "tool_invocation")[0]["finished_at"] = first["started_at"] - 0.25

    (run,) = audit(_export(tmp_path / "t.jsonl", [record], change=backwards)).runs
    assert run.violations == (
        ("times_consistent", f"tool invocation {first['invocation_id']} finished at "
                             f"t={first['started_at'] - 0.25:g} before it started at "
                             f"t={first['started_at']:g}"),)


def test_a_duration_far_from_the_stored_times_is_flagged_and_times_stored_as_text_are_read(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:
    record = outcomes["conclusion-guards-pass"]
    assert record.stored_row is not None
    assert (record.stored_row["created_at"], record.stored_row["finished_at"]) == (0.0, 6.7)

    def as_text(lines: list[dict[str, Any]]) -> None:
        _rows(lines, "diagnosis_run")[0].update(created_at="0", finished_at="6.7",
                                                 duration_ms="66700")

    (run,) = audit(_export(tmp_path / "t.jsonl", [record], change=as_text)).runs
    assert run.violations == (
        ("times_consistent", "the stored duration_ms 66700 is not finished_at - created_at, "
                             "6700 ms"),)


def test_a_running_row_without_run_finished_is_incomplete_not_a_violation(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:
    def unfinished(lines: list[dict[str, Any]]) -> None:
        row = _rows(lines, "diagnosis_run")[0]
        row.update(status="RUNNING", release_outcome=None, termination_state=None)
        lines[:] = [line for line in lines if line.get("type") != "RUN_FINISHED"]

    report = audit(_export(tmp_path / "u.jsonl", [outcomes["missing-context"]],
                           change=unfinished))
    assert [(r.state, r.violations) for r in report.runs] == [("incomplete", ())]
    assert report.ok


def test_without_sse_events_the_sse_rules_are_named_as_not_checked(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:
    report = audit(_export(tmp_path / "n.jsonl", [outcomes["client-disconnect"]], sse=False))
    (run,) = report.runs
    assert run.violations == () and run.unchecked == ("sse_protocol", "late_content_refused")


def _database(tmp_path: Path) -> str:
    return fallback_runs(f"sqlite:///{tmp_path / 'runs.db'}")


def test_a_database_of_the_run_store_passes(tmp_path: Path) -> None:
    report = audit(_database(tmp_path))
    assert [r.run_id for r in report.runs] == ["run-000001", "run-000002", "run-000003"]
    assert report.ok and {r.state for r in report.runs} == {"checked"}


def test_a_reader_that_stops_at_the_first_run_of_postgresql_closes_its_cursor(
        postgres_server: PostgresServer) -> None:
    url = fallback_runs(postgres_server.fresh_database())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        first = next(iter(iter_sql(url)))
        gc.collect()
    assert first.row["run_id"] == "run-000001"
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []


def test_a_database_with_other_names_is_read_through_a_mapping(tmp_path: Path) -> None:
    url = _database(tmp_path)
    with sqlite3.connect(tmp_path / "runs.db") as db:
        db.execute("ALTER TABLE diagnosis_run RENAME TO chat_run")
        db.execute("ALTER TABLE chat_run RENAME COLUMN status TO run_status")
        db.execute("UPDATE chat_run SET run_status = 'FAILED' WHERE run_id = 'run-000002'")
    mapping = {"diagnosis_run": {"table": "chat_run", "columns": {"status": "run_status"}}}
    report = audit(url, mapping)
    flagged = {r.run_id: [name for name, _ in r.violations] for r in report.runs}
    assert flagged == {"run-000001": [], "run-000002": ["stored_axes_distinct"],
                       "run-000003": []}
    with pytest.raises(SourceError, match="cannot read the run tables"):
        audit(url)


def test_the_command_lists_violations_and_counts_and_exits_1(
        outcomes: dict[str, RunRecord], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _export(tmp_path / "t.jsonl", [outcomes["conclusion-guards-pass"]],
                   change=_two_terminations)
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "run-000001: single_termination: 2 terminal transitions (SUCCESS -> " \
                     "SUCCESS): first terminal must win"
    assert "1 run(s): 1 checked, 0 incomplete (RUNNING, no RUN_FINISHED), 1 with violations" \
        in out
    assert "  single_termination: 2" in out
    assert main(["audit", str(tmp_path / "missing.jsonl")]) == 2


def test_an_export_line_that_is_not_one_is_refused_by_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"table": "diagnosis_run", "run_id": "r"}\n{"table": "nope"}\n',
                   encoding="utf-8")
    with pytest.raises(SourceError, match=rf"^{bad}:2: not an export line"):
        audit(bad)


def test_a_database_larger_than_a_batch_is_read_whole_in_order(tmp_path: Path) -> None:
    from harness_lab.audit.sources import BATCH

    url = f"sqlite:///{tmp_path / 'many.db'}"
    store = SqlRunStore(url)
    harness = build([draft(missing_info=["which service"])] * (BATCH + 3), store=store)
    for _ in range(BATCH + 3):
        harness.run("it is slow")
    with sqlite3.connect(tmp_path / "many.db") as db:
        db.execute("DELETE FROM trace_event WHERE run_id = ? AND type = 'RUN_FINISHED'",
                   (f"run-{BATCH + 1:06d}",))
    report = audit(url)
    assert [r.run_id for r in report.runs] == [f"run-{i:06d}" for i in range(1, BATCH + 4)]
    broken = [(r.run_id, name) for r in report.runs for name, _ in r.violations]
    assert broken == [(f"run-{BATCH + 1:06d}", "single_termination")]


HAND_MADE = """\
{"table": "diagnosis_run", "run_id": "r-1", "session_id": "s-1", "intent": "SYSTEM_CHAT", \
"status": "SUCCESS", "release_outcome": "SUCCESS", "fallback_type": null, \
"answer_json": "{\\"contentType\\": \\"system_answer\\", \\"text\\": \\"hi\\"}", \
"termination_state": "SUCCESS", "created_at": 0.0, "finished_at": 0.5}
{"table": "trace_event", "run_id": "r-1", "seq": 0, "t": 0.0, "type": "RUN_STARTED", \
"phase": "RUN", "status": "OK", "detail": "{}"}
{"table": "trace_event", "run_id": "r-1", "seq": 1, "t": 0.5, "type": "RUN_FINISHED", \
"phase": "RUN", "status": "OK", "detail": {"outcome": "SUCCESS", "run_state": "SUCCESS"}}
{"table": "diagnosis_run", "run_id": "r-2", "session_id": "s-1", "status": "RUNNING"}
{"table": "trace_event", "run_id": "r-2", "seq": 0, "t": 0.0, "type": "RUN_STARTED", \
"phase": "RUN", "status": "OK", "detail": {}}
{"table": "diagnosis_run", "run_id": "r-3", "session_id": "s-2", "intent": "DIAGNOSIS", \
"status": "FAILED", "release_outcome": "FALLBACK", "fallback_type": "INSUFFICIENT_EVIDENCE", \
"answer_json": {"contentType": "fallback", "fallbackType": "INSUFFICIENT_EVIDENCE", \
"facts": []}, "termination_state": "SUCCESS"}
{"table": "trace_event", "run_id": "r-3", "seq": 0, "t": 0.0, "type": "RUN_STARTED", \
"phase": "RUN", "status": "OK", "detail": {}}
{"table": "trace_event", "run_id": "r-3", "seq": 1, "t": 2.0, "type": "RELEASE_DECISION", \
"phase": "RELEASE", "status": "OK", "detail": {"outcome": "FALLBACK"}}
{"table": "trace_event", "run_id": "r-3", "seq": 2, "t": 2.0, "type": "RUN_FINISHED", \
"phase": "RUN", "status": "OK", "detail": {"outcome": "FALLBACK", "run_state": "SUCCESS"}}
"""


def test_a_hand_made_export_in_the_documented_format_is_audited(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text(HAND_MADE, encoding="utf-8")
    report = audit(path)
    assert [(r.run_id, r.state, [name for name, _ in r.violations]) for r in report.runs] == [
        ("r-1", "checked", []), ("r-2", "incomplete", []),
        ("r-3", "checked", ["stored_axes_distinct"])]
    assert report.runs[2].violations[0][1] == \
        "stored status FAILED, §12.2 maps FALLBACK to SUCCESS"
    assert report.counts()["stored_axes_distinct"] == 1


def test_a_disconnect_that_lost_to_the_deadline_is_rebuilt_as_a_disconnected_client(
        tmp_path: Path) -> None:
    from harness_lab.audit.rebuild import rebuild
    from harness_lab.audit.sources import read_export
    from harness_lab.states import SseState

    scenario = OUTCOMES.parent / "policy" / "deadline-detection.yaml"
    results = run_paths([f"{scenario}[config.policy.deadline_detection=instant,"
                         "faults.0.at_s=7.0]"])
    record = results[0].record
    assert record is not None and record.run_state.value == "TIMED_OUT"
    rows = read_export(_export(tmp_path / "lost.jsonl", [record], sse=False))[record.run_id]
    rebuilt = rebuild(rows.row, rows.trace, rows.invocations, rows.sse)
    assert rebuilt.sse_state is SseState.DISCONNECTED
    assert audit(tmp_path / "lost.jsonl").ok
