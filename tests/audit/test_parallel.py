"""Runs audited across worker processes come back as one process audits them, in order, a
batch whose worker was killed once included; a batch that kills its worker every time comes
back not audited, alone; a large generated database audits with its seed's counts scaled."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_audit import replicate
from harness_lab.audit import audit, open_source, parallel
from harness_lab.audit.parallel import _in_workers
from harness_lab.audit.sources import export_lines
from harness_lab.fakes import draft
from tests.audit.jobs import dies_on
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


def _export(tmp_path: Path, runs: int) -> Path:
    """A JSON Lines export of ``runs`` FALLBACK runs, the first stored FAILED (a violation)."""
    harness = build([draft(missing_info=["which service"])] * runs)
    lines = [line for _ in range(runs) for line in export_lines(harness.run("it is slow"))]
    lines[0]["status"] = "FAILED"
    export = tmp_path / "runs.jsonl"
    export.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return export


def _pairs(export: Path, size: int) -> Iterator[list[tuple[str, Any]]]:
    """The runs of an export as (run id, rows) pairs, ``size`` to a batch."""
    runs = [(run_id, rows) for run_id, _, rows in open_source(export).runs]
    return iter([runs[i:i + size] for i in range(0, len(runs), size)])


def test_a_batch_whose_worker_is_killed_once_runs_again_and_the_audit_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "IN_FLIGHT", 0)  # the third batch goes to a fresh pool
    export = _export(tmp_path, 6)
    again: list[None] = []
    task = partial(dies_on, "run-000003", ran=str(tmp_path / "ran"))
    runs = list(_in_workers(_pairs(export, 2), task, 2, None, lambda: again.append(None)))
    assert runs == list(audit(export, workers=1).runs)
    assert (tmp_path / "ran").read_text(encoding="utf-8") == "ran\n" * 2
    assert 1 <= len(again) <= 2  # the killed batch, and the first if it was still in flight


def test_an_audit_report_counts_the_batches_that_ran_again_in_its_json_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = _export(tmp_path, 6)
    alone = audit(export, workers=1)
    assert alone.ran_again == 0 and alone.to_dict()["ran_again"] == 0
    monkeypatch.setattr(parallel, "IN_FLIGHT", 0)
    monkeypatch.setattr(parallel, "_audit_rows",
                        partial(dies_on, "run-000003", ran=str(tmp_path / "ran")))
    report = audit(export, workers=2)
    assert report.runs == alone.runs
    assert 1 <= report.ran_again <= 2  # the killed batch, and the first if still in flight
    assert report.to_dict()["ran_again"] == report.ran_again


def test_a_batch_that_kills_its_worker_every_time_alone_goes_unaudited_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "IN_FLIGHT", 0)
    export = _export(tmp_path, 6)
    task = partial(dies_on, "run-000003", ran=str(tmp_path / "ran"), every_time=True)
    runs = list(_in_workers(_pairs(export, 2), task, 2, None))
    alone = audit(export, workers=1).runs
    assert [r.run_id for r in runs] == [r.run_id for r in alone]
    lost = {"run-000003", "run-000004"}
    assert [r for r in runs if r.run_id not in lost] == [r for r in alone if r.run_id not in lost]
    assert {(r.state, r.note) for r in runs if r.run_id in lost} == {
        ("unreadable", "not audited: its worker process died, again when its batch ran alone")}
    assert (tmp_path / "ran").read_text(encoding="utf-8") == "ran\n" * 2


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
