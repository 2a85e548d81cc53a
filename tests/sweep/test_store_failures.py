"""A persisting sweep whose database goes away: it ends at once, says why in one line each,
and ``--resume`` completes it once the database is back (a real PostgreSQL server stopped
and started again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, text

from tests.postgres import PostgresServer
from tests.sweep.processes import start_sweep, wait_for

pytestmark = pytest.mark.slow


def completed(url: str) -> int:
    """Completed runs in the database at ``url`` (0 before its tables exist)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM diagnosis_run "
                                         "WHERE status != 'RUNNING'")).scalar_one())
    except Exception:  # the tables are not there yet
        return 0
    finally:
        engine.dispose()


def test_a_database_stopped_mid_sweep_ends_it_in_plain_lines_and_resume_completes_it(
        sweep_data: dict[str, Any], tmp_path: Path, postgres_server: PostgresServer) -> None:
    url = postgres_server.fresh_database()
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep_data), encoding="utf-8")
    args = [str(path), "--samples", "2000", "--seed", "4", "--persist", url,
            "--commit-every", "16", "--no-log", "-q"]
    proc = start_sweep(args)
    wait_for(lambda: completed(url) > 0, "the first stored runs")
    postgres_server.stop()
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        postgres_server.start()
    resumed = start_sweep([*args, "--resume"])
    _, resumed_err = resumed.communicate(timeout=300)
    assert proc.returncode == 1, err
    said = [line for line in err.splitlines() if line.startswith(("incomplete:", "note:"))]
    assert said[-1].startswith("note: the database could not be read back to find the runs "
                               "it holds that this result does not count (OperationalError: ")
    assert said[-1].endswith("; --resume completes the sweep")
    for line in said:
        assert "(psycopg." not in line and "sqlalche.me" not in line, line
    assert "Traceback" not in err and "\tIs the server running" not in err
    assert resumed.returncode == 0, resumed_err
    assert completed(url) == 2 * 2000
