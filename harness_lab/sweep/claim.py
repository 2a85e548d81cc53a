"""The claim a persisting sweep stakes on its database before any sample runs.

Every sweep names its runs ``run-g<grid point>-s<sample>``, so two sweeps cannot share a
database. A sweep therefore inserts the one row of ``sweep_claim`` in a transaction before it
plays anything: of two sweeps started at once on one fresh database, the second's insert
fails on the primary key and it is refused, naming the first. The row records what the sweep
is (a fingerprint of the scenario, seed and grid points) and who runs it (host and process),
so ``--resume`` can take the sweep over once that process is gone, and run only the samples
the database does not hold yet. A running sweep beats in ``sweep_beat`` every
:data:`~harness_lab.bounds.HEARTBEAT_S` seconds: a sweep on another host is gone once it has
not been heard from for :data:`~harness_lab.bounds.STALE_S` seconds (a process of this host,
once it no longer exists).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from harness_lab.bounds import HEARTBEAT_S, STALE_S
from harness_lab.errors import SweepError
from harness_lab.states import StoredRunStatus
from harness_lab.store.errors import StoreError
from harness_lab.store.sql import (
    DRIVER_REFUSALS,
    SqlRunStore,
    create_tables,
    diagnosis_run,
    one_line,
    tool_invocation,
    trace_event,
)
from harness_lab.sweep.sample import (
    PLAYED_COLUMNS,
    RUN_ID_PREFIX,
    grid_sample_of,
    run_id_of,
    sample_of,
)

__all__ = ["Claim", "Stored", "beat", "chunk_stored", "fingerprint", "resume_claim",
           "stake_claim", "stored_runs", "sweep_beat", "sweep_claim"]

claim_metadata = MetaData()
"""The MetaData of the claim table (kept apart from the run store's three tables)."""

_CLAIM_ID = "sweep"

sweep_claim = Table(
    "sweep_claim", claim_metadata,
    Column("id", Text, primary_key=True),  # one row: every sweep's run ids are the same
    Column("fingerprint", Text, nullable=False),
    Column("scenario", Text, nullable=False),
    Column("seed", Text, nullable=False),
    Column("samples", Integer, nullable=False),
    Column("grid_points", Integer, nullable=False),
    Column("owner", Text, nullable=False),  # host:pid of the process running the sweep
    Column("attempt", Integer, nullable=False),  # 1, then one more per resume
    Column("started_at", Float, nullable=False),
)
"""The claim of the sweep a database holds."""

sweep_beat = Table(
    "sweep_beat", claim_metadata,
    Column("id", Text, primary_key=True),
    Column("owner", Text, nullable=False),  # host:pid of the process that beat
    Column("beat_at", Float, nullable=False),  # wall-clock time (Unix) of its last beat
)
"""The last heartbeat of the process running the sweep (a table of its own: a database
claimed by an older release gains it without a change to ``sweep_claim``)."""


def fingerprint(data: Mapping[str, Any], seed: int, points: Sequence[Mapping[str, Any]]
                ) -> str:
    """What makes two sweeps the same sweep: the scenario, the seed and the grid points.

    The number of samples is left out, so a resumed sweep may ask for more samples per
    grid point than the first run did (the samples it adds are new run ids).
    """
    text = json.dumps({"scenario": data, "seed": seed, "points": list(points)},
                      sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Claim:
    """The claim a sweep asks for."""

    fingerprint: str
    scenario: str
    seed: int
    samples: int
    grid_points: int

    def row(self, attempt: int) -> dict[str, Any]:
        """The claim row of this process's ``attempt``."""
        return {"id": _CLAIM_ID, "fingerprint": self.fingerprint, "scenario": self.scenario,
                "seed": str(self.seed), "samples": self.samples,
                "grid_points": self.grid_points, "owner": _owner(), "attempt": attempt,
                "started_at": time.time()}


@dataclass(frozen=True)
class Stored:
    """What a database holds of a sweep: the samples completed, per grid point."""

    completed: dict[int, set[int]]
    removed_running: int = 0  # runs left RUNNING by an interrupted process, removed

    @property
    def count(self) -> int:
        """Completed runs held."""
        return sum(len(s) for s in self.completed.values())


def beat(store: SqlRunStore) -> None:
    """Say, in the database, that this process still runs its sweep."""
    with store.engine.begin() as conn:
        _beat(conn)


@contextmanager
def beating(url: str, every_s: float = HEARTBEAT_S) -> Iterator[None]:
    """:func:`beat` every ``every_s`` seconds, on a thread and a connection of its own, while
    the block runs. A beat the database refuses is dropped: the runs say it is down."""
    stop = threading.Event()

    def beats() -> None:
        store = None
        try:
            store = SqlRunStore(url)
            while not stop.wait(every_s):
                try:
                    beat(store)
                except DRIVER_REFUSALS:
                    continue
        except DRIVER_REFUSALS:
            return
        finally:
            if store is not None:
                store.close()

    thread = threading.Thread(target=beats, name="sweep heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _beat(conn: Connection) -> None:
    values = {"owner": _owner(), "beat_at": time.time()}
    if conn.execute(update(sweep_beat).where(sweep_beat.c.id == _CLAIM_ID)
                    .values(values)).rowcount == 0:
        conn.execute(insert(sweep_beat).values(id=_CLAIM_ID, **values))


def _heard(conn: Connection, owner: str) -> float | None:
    """Seconds since ``owner`` last beat, or None when it never did."""
    at = conn.execute(select(sweep_beat.c.beat_at).where(
        sweep_beat.c.id == _CLAIM_ID, sweep_beat.c.owner == owner)).scalar()
    return None if at is None else max(0.0, time.time() - at)


def _describe(row: Mapping[str, Any]) -> str:
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["started_at"]))
    return (f"scenario {row['scenario']!r}, seed {row['seed']}, {row['samples']} samples x "
            f"{row['grid_points']} grid points, started {started} by {row['owner']}")


def stake_claim(store: SqlRunStore, claim: Claim, url: str) -> None:
    """Claim the database for a new sweep, or raise SweepError naming what holds it.

    The claim row is inserted in a transaction: of two sweeps that start together, one
    inserts it and the other is refused. A database written by a sweep of an older release
    (runs, no claim) is refused too.
    """
    try:
        create_tables(store.engine, claim_metadata)
        with store.engine.begin() as conn:
            held = _claim_row(conn)
            if held is None:
                run = conn.execute(select(diagnosis_run.c.run_id).where(
                    diagnosis_run.c.run_id.in_([run_id_of(0, 0), run_id_of(0, claim.samples - 1)])
                ).limit(1)).scalar()
                if run is not None:
                    raise SweepError(f"{url} already holds run {run} of a sweep: persist each "
                                     "sweep into a fresh database (or remove this one first)")
                conn.execute(insert(sweep_claim).values(claim.row(1)))
                _beat(conn)
    except IntegrityError:  # another sweep inserted the claim first
        held = _held(store)
    except DRIVER_REFUSALS as exc:
        raise StoreError(f"cannot claim {url} for the sweep: {one_line(exc)}") from exc
    if held is not None:
        raise SweepError(f"{url} already holds a sweep ({_describe(held)}): persist each sweep "
                         "into a fresh database, or add --resume to complete that one")


def _held(store: SqlRunStore) -> dict[str, Any] | None:
    with store.engine.connect() as conn:
        return _claim_row(conn)


def _claim_row(conn: Connection) -> dict[str, Any] | None:
    row = conn.execute(select(sweep_claim)).mappings().first()
    return None if row is None else dict(row)


def _elsewhere(owner: str) -> bool:
    """Whether ``owner`` (host:pid) runs on another host, where its process cannot be seen."""
    return owner.rpartition(":")[0] != socket.gethostname()


def _alive(owner: str) -> bool:
    """Whether ``owner`` (host:pid) is a live process of this host other than this one."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _not_zombie(int(pid))


def _not_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True


def resume_claim(store: SqlRunStore, claim: Claim, url: str) -> Stored:
    """Take over the claim of the same sweep; return the samples the database holds.

    Refused (SweepError) when the database holds no sweep, a different one, or one whose
    process still runs on this host, or runs on another host and beat within
    :data:`~harness_lab.bounds.STALE_S` seconds, or when another process took it over
    first. Runs a killed process left RUNNING are removed (their trace and invocations with
    them), so they are played again.
    """
    try:
        create_tables(store.engine, claim_metadata)
        held = _held(store)
        with store.engine.connect() as conn:
            heard = None if held is None else _heard(conn, held["owner"])
    except DRIVER_REFUSALS as exc:
        raise StoreError(f"cannot read the sweep of {url}: {one_line(exc)}") from exc
    if held is None:
        raise SweepError(f"{url} holds no sweep to resume: start it without --resume")
    if held["fingerprint"] != claim.fingerprint:
        raise SweepError(f"{url} holds a different sweep ({_describe(held)}): --resume needs "
                         "the same scenario file, --seed, grid and --set overrides")
    if _alive(held["owner"]):
        raise SweepError(f"{url}: the sweep is still running ({held['owner']}); stop it "
                         "before resuming")
    if _elsewhere(held["owner"]) and heard is not None and heard < STALE_S:
        raise SweepError(f"{url}: the sweep is still running on another host "
                         f"({held['owner']}, heard from {heard:.0f} s ago); stop it before "
                         f"resuming (a sweep not heard from for {STALE_S:g} s has stopped)")
    try:
        with store.engine.begin() as conn:
            took = conn.execute(update(sweep_claim)
                                .where(sweep_claim.c.id == _CLAIM_ID,
                                       sweep_claim.c.attempt == held["attempt"])
                                .values(owner=_owner(), attempt=held["attempt"] + 1,
                                        samples=max(held["samples"], claim.samples)))
            if took.rowcount != 1:
                raise SweepError(f"{url}: another process resumed the sweep first")
            stored = _remove_running(conn)
            _beat(conn)
    except DRIVER_REFUSALS as exc:
        raise StoreError(f"cannot resume the sweep in {url}: {one_line(exc)}") from exc
    return stored


def _remove_running(conn: Connection, run_ids: Sequence[str] | None = None) -> Stored:
    """What the database holds of the sweep (of ``run_ids`` alone, if given), the runs left
    RUNNING removed with their trace and invocations."""
    running = StoredRunStatus.RUNNING.value
    query = select(diagnosis_run.c.run_id, diagnosis_run.c.status)
    if run_ids is None:
        rows = conn.execute(query.where(diagnosis_run.c.run_id.like(RUN_ID_PREFIX + "%"))).all()
    else:
        rows = [row for first in range(0, len(run_ids), 500) for row in conn.execute(
            query.where(diagnosis_run.c.run_id.in_(run_ids[first:first + 500])))]
    left = [run_id for run_id, status in rows if status == running]
    for start in range(0, len(left), 500):
        part = left[start:start + 500]
        for table in (trace_event, tool_invocation, diagnosis_run):  # the run's rows last
            conn.execute(delete(table).where(table.c.run_id.in_(part)))
    return Stored(_completed(run_id for run_id, status in rows if status != running), len(left))


def chunk_stored(store: SqlRunStore, grid: int, start: int, stop: int
                 ) -> tuple[dict[int, dict[str, Any]], int]:
    """What the database holds of samples ``start..stop-1`` of grid point ``grid``, as an
    earlier play of the chunk left it before its worker died: the completed runs'
    :data:`PLAYED_COLUMNS` by sample, and how many runs left RUNNING were removed, to be
    played again."""
    ids = [run_id_of(grid, i) for i in range(start, stop)]
    with store.engine.begin() as conn:
        held = _remove_running(conn, ids)
        done = sorted(held.completed.get(grid, ()))
        columns = [diagnosis_run.c.run_id, *(diagnosis_run.c[name] for name in PLAYED_COLUMNS)]
        rows = [row for first in range(0, len(done), 500) for row in conn.execute(
            select(*columns).where(diagnosis_run.c.run_id.in_(
                [run_id_of(grid, i) for i in done[first:first + 500]]))).mappings()]
    return {sample_of(row["run_id"]): dict(row) for row in rows}, held.removed_running


def stored_runs(store: SqlRunStore) -> Stored:
    """The sweep samples the database holds completed."""
    running = StoredRunStatus.RUNNING.value
    with store.engine.connect() as conn:
        rows = conn.execute(select(diagnosis_run.c.run_id)
                            .where(diagnosis_run.c.run_id.like(RUN_ID_PREFIX + "%"),
                                   diagnosis_run.c.status != running)).scalars().all()
    return Stored(_completed(rows))


def _completed(run_ids: Any) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for found in map(grid_sample_of, run_ids):
        if found is not None:
            out.setdefault(found[0], set()).add(found[1])
    return out
