"""Runs audited across worker processes come back as one process audits them, in order; a
large generated database audits with its seed's counts scaled."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from benchmarks.bench_audit import replicate
from harness_lab.audit import audit
from harness_lab.audit.parallel import _in_workers
from harness_lab.audit.sources import SourceError, export_lines
from harness_lab.fakes import draft
from tests.audit.stored import fallback_runs
from tests.conftest import build
from tests.postgres import PostgresServer

pytestmark = pytest.mark.slow  # worker processes start in a second or two

STATES = ("runs", "checked", "incomplete", "orphaned", "unreadable", "runs with violations")


def _seed(path: Path) -> Path:
    """Four stored runs: clean, two RUN_FINISHED rows missing (a violation), still RUNNING
    with no RUN_FINISHED (incomplete), clean."""
    fallback_runs(f"sqlite:///{path}", 4)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM trace_event WHERE run_id = 'run-000002' "
                   "AND type = 'RUN_FINISHED'")
        db.execute("UPDATE diagnosis_run SET status = 'RUNNING' WHERE run_id = 'run-000003'")
        db.execute("DELETE FROM trace_event WHERE run_id = 'run-000003' "
                   "AND type = 'RUN_FINISHED'")
    return path


def test_workers_audit_a_database_as_one_process_does(tmp_path: Path) -> None:
    url = f"sqlite:///{_seed(tmp_path / 'seed.db')}"
    alone = audit(url, workers=1)
    assert [(r.run_id, r.state, [n for n, _ in r.violations]) for r in alone.runs] == [
        ("run-000001", "checked", []), ("run-000002", "checked", ["single_termination"]),
        ("run-000003", "incomplete", []), ("run-000004", "checked", [])]
    assert audit(url, workers=2).runs == alone.runs


def test_workers_audit_a_postgresql_database_as_one_process_does(
        postgres_server: PostgresServer) -> None:
    from sqlalchemy import create_engine, text

    url = fallback_runs(postgres_server.fresh_database())
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM trace_event WHERE run_id = 'run-000002' "
                          "AND type = 'RUN_FINISHED'"))
    engine.dispose()
    alone = audit(url, workers=1)
    assert [(r.run_id, r.state, [n for n, _ in r.violations]) for r in alone.runs] == [
        ("run-000001", "checked", []), ("run-000002", "checked", ["single_termination"]),
        ("run-000003", "checked", [])]
    assert audit(url, workers=2).runs == alone.runs


def _die(batch: list[object]) -> list[object]:
    """A worker's task that ends its process at once, as the kernel's OOM killer would."""
    import os

    os._exit(9)


def test_a_worker_that_dies_is_a_source_error_saying_how_many_runs_were_audited() -> None:
    batches = iter([[("run-1", None)], [("run-2", None)]])
    with pytest.raises(SourceError, match=r"a worker process ended abruptly after 0 run\(s\) "
                                          r"were audited .*--workers 1"):
        list(_in_workers(batches, _die, 2, None))  # type: ignore[arg-type]


def test_workers_audit_an_export_as_one_process_does(tmp_path: Path) -> None:
    harness = build([draft(missing_info=["which service"])] * 3)
    records = [harness.run("it is slow") for _ in range(3)]
    lines = [line for record in records for line in export_lines(record)]
    lines[0]["status"] = "FAILED"  # a FALLBACK stored as FAILED: stored_axes_distinct
    export = tmp_path / "runs.jsonl"
    export.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    alone = audit(export, workers=1)
    assert [[n for n, _ in r.violations] for r in alone.runs] == [
        ["stored_axes_distinct"], [], []]
    assert audit(export, workers=2).runs == alone.runs


def test_a_generated_database_of_20000_runs_audits_with_its_seeds_counts_times_5000(
        tmp_path: Path) -> None:
    seed = _seed(tmp_path / "seed.db")
    replicate(seed, tmp_path / "big.db", 5000)
    report = audit(f"sqlite:///{tmp_path / 'big.db'}", workers=None)
    counts = report.counts()
    assert {k: counts[k] for k in STATES} == {
        "runs": 20_000, "checked": 15_000, "incomplete": 5_000, "orphaned": 0, "unreadable": 0,
        "runs with violations": 5_000}
    assert counts == {k: n * 5000 for k, n in audit(f"sqlite:///{seed}").counts().items()}
    flagged = [r.run_id for r in report.runs if r.violations]
    assert flagged[:3] == ["run-000002", "run-000002-c1", "run-000002-c2"]
    assert flagged[-1] == "run-000002-c4999"
