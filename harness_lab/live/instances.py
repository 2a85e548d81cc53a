"""Which ``serve`` process runs which run: instances, heartbeats and crash orphans.

The lifecycle document has no path for a run whose process died: its row stays RUNNING for
ever. ``serve`` therefore registers itself in the database (``serve_instance``: an id, host,
pid, start and a heartbeat every :data:`HEARTBEAT_S` seconds) and notes with each RUNNING row,
in the same transaction, the instance that runs it (``serve_run``). A run is a **crash
orphan** when its row is RUNNING and its instance is gone: the instance's heartbeat is older
than :data:`STALE_S`, or it ran on this host and its process no longer exists. Each ``serve``
looks for orphans when it starts and at every heartbeat, and ends each one as the document's
unrecoverable internal failure: ``status`` FAILED, ``release_outcome`` FAILED,
``termination_state`` FAILED, ``termination_reason`` :data:`PROCESS_LOST` (a reason this
toolkit adds), the failure body naming the lost process. A run another live instance still
runs is never touched. A run of this instance whose end the store refused (the database was
down when it finished) is left RUNNING too: the instance ends it the same way once the
database answers again (at a heartbeat), or when it stops. docs/live.md, "Operating
promises".
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    case,
    insert,
    select,
    update,
)

from harness_lab.audit.checked import PROCESS_LOST
from harness_lab.bounds import HEARTBEAT_S, STALE_S
from harness_lab.states import ReleaseOutcome, RunState, StoredRunStatus
from harness_lab.store.base import RunStart
from harness_lab.store.sql import SqlRunStore, create_tables, diagnosis_run

__all__ = ["HEARTBEAT_S", "PROCESS_LOST", "STALE_S", "Instance", "Orphans", "OwnedRunStore",
           "orphaned_running", "serve_instance", "serve_metadata", "serve_run"]


# PROCESS_LOST: the termination reason stored for a crash orphan (toolkit-added; the document
# has none), defined with the audit that tells such runs apart

serve_metadata = MetaData()
"""The tables only ``serve`` writes, beside the run store's."""

serve_instance = Table(
    "serve_instance", serve_metadata,
    Column("instance_id", Text, primary_key=True),
    Column("host", Text, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", Float, nullable=False),  # Unix time, as every time here
    Column("heartbeat_at", Float, nullable=False),
    Column("stopped_at", Float),
    Column("stop", Text),  # "stopped" (it said so) or "lost" (found gone)
)
"""One row per ``serve`` process that has used the database."""

serve_run = Table(
    "serve_run", serve_metadata,
    Column("run_id", Text, primary_key=True),
    Column("instance_id", Text, nullable=False, index=True),
)
"""Which instance runs each run it started (written with the RUNNING row)."""

_RUNNING = StoredRunStatus.RUNNING.value
_I = serve_instance.c


@dataclass(frozen=True, slots=True)
class Orphans:
    """The runs one lost instance left RUNNING, now ended as :data:`PROCESS_LOST`; ``own``:
    this instance's runs whose end the store refused, ended once it answered again."""

    instance_id: str
    host: str
    pid: int
    heartbeat_at: float
    run_ids: tuple[str, ...]
    own: bool = False

    def describe(self) -> str:
        """One line for the log: how many runs, whose, last heard when."""
        if self.own:
            return (f"{len(self.run_ids)} run(s) of this server left RUNNING (the store "
                    f"refused their end, or they were still blocked when it stopped) ended "
                    f"FAILED ({PROCESS_LOST})")
        heard = datetime.fromtimestamp(self.heartbeat_at, UTC).strftime("%Y-%m-%d %H:%M:%S")
        return (f"{len(self.run_ids)} run(s) left RUNNING by serve instance "
                f"{self.instance_id} (host {self.host}, pid {self.pid}, last heard "
                f"{heard} UTC) ended FAILED ({PROCESS_LOST})")


class OwnedRunStore(SqlRunStore):
    """The SQL run store that notes, with each RUNNING row, the instance that runs it."""

    def __init__(self, url: str, instance_id: str) -> None:
        super().__init__(url)
        create_tables(self.engine, serve_metadata)
        self.instance_id = instance_id

    def _with_running_row(self, conn: Connection, start: RunStart) -> None:
        conn.execute(insert(serve_run), {"run_id": start.run_id,
                                         "instance_id": self.instance_id})


class Instance:
    """This ``serve`` process as the database knows it: registered, beating, stopped."""

    def __init__(self, engine: Engine, instance_id: str | None = None, *,
                 wall: Callable[[], float] = time.time,
                 alive: Callable[[int], bool] | None = None) -> None:
        self.engine = engine
        self.instance_id = instance_id or uuid.uuid4().hex[:12]
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.wall = wall
        self.alive = alive or _process_exists
        self.reaped = 0  # orphans this instance ended
        self.write_error: str | None = None
        """Why the last heartbeat's writes failed (one line), None when they were made: a store
        can answer reads and refuse writes (locked, full, read-only)."""

    def register(self) -> None:
        """Record this instance as running, heard from now."""
        create_tables(self.engine, serve_metadata)
        now = self.wall()
        with self.engine.begin() as conn:
            conn.execute(insert(serve_instance), {
                "instance_id": self.instance_id, "host": self.host, "pid": self.pid,
                "started_at": now, "heartbeat_at": now})

    def heartbeat(self) -> None:
        """Say this instance is still running."""
        with self.engine.begin() as conn:
            conn.execute(update(serve_instance).where(_I.instance_id == self.instance_id)
                         .values(heartbeat_at=self.wall()))

    def stop(self) -> Orphans | None:
        """Say this instance stopped on its own (its runs have ended); a run of it still
        RUNNING (its end the store refused) is ended as :data:`PROCESS_LOST` in the same
        transaction, and returned."""
        now = self.wall()
        with self.engine.begin() as conn:
            left = self._end_own_runs(conn, _none_in_flight, now, stopping=True)
            conn.execute(update(serve_instance).where(_I.instance_id == self.instance_id)
                         .values(stopped_at=now, stop="stopped"))
        self.reaped += len(left.run_ids)
        return left if left.run_ids else None

    def reap(self, in_flight: Callable[[], Collection[str]] | None = None, *,
             stopped: bool = False) -> list[Orphans]:
        """End the runs of every lost instance as :data:`PROCESS_LOST`, and this instance's
        own runs left RUNNING that are no longer ``in_flight`` (their end the store refused);
        the instances that left any (one lost before its first run is only marked lost).

        ``stopped`` (once, when a server starts): also the RUNNING runs of instances that said
        they stopped, which servers before stop ended their own runs could leave (a search
        of every RUNNING row, too slow for each heartbeat)."""
        now = self.wall()
        heard = (_I.instance_id, _I.host, _I.pid, _I.heartbeat_at)
        with self.engine.connect() as conn:
            others = conn.execute(select(*heard).where(
                _I.stopped_at.is_(None), _I.instance_id != self.instance_id)).all()
            left = conn.execute(
                select(*heard).distinct()
                .join(serve_run, serve_run.c.instance_id == _I.instance_id)
                .join(diagnosis_run, diagnosis_run.c.run_id == serve_run.c.run_id)
                .where(_I.stopped_at.is_not(None), diagnosis_run.c.status == _RUNNING)
            ).all() if stopped else []
        lost = [row for row in others if row.heartbeat_at < now - STALE_S
                or (row.host == self.host and not self.alive(row.pid))]
        found = [self._end_runs_of(*row, now) for row in (*lost, *left)]
        with self.engine.begin() as conn:
            found.append(self._end_own_runs(conn, in_flight or _none_in_flight, now))
        self.reaped += sum(len(f.run_ids) for f in found)
        return [f for f in found if f.run_ids]

    def owner(self, run_id: str) -> dict[str, Any] | None:
        """The instance that runs (or ran) ``run_id``: id, host, pid; None if none noted."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(_I.instance_id, _I.host, _I.pid, _I.stopped_at)
                .join(serve_run, serve_run.c.instance_id == _I.instance_id)
                .where(serve_run.c.run_id == run_id)).one_or_none()
        return None if row is None else dict(row._mapping)

    def _end_runs_of(self, instance_id: str, host: str, pid: int, heard: float, now: float
                     ) -> Orphans:
        lost = (f"the serve process that ran it (instance {instance_id}, host {host}, pid "
                f"{pid}) stopped without ending it")
        with self.engine.begin() as conn:
            orphaned = _fail_running(conn, _running_of(conn, instance_id), lost, now)
            conn.execute(update(serve_instance)
                         .where(_I.instance_id == instance_id, _I.stopped_at.is_(None))
                         .values(stopped_at=now, stop="lost"))
        return Orphans(instance_id, host, pid, heard, orphaned)

    def _end_own_runs(self, conn: Connection, in_flight: Callable[[], Collection[str]],
                      now: float, *, stopping: bool = False) -> Orphans:
        """End this instance's RUNNING runs that it no longer runs: the store refused their
        end, or (``stopping``) the server stops with them still blocked. ``in_flight`` is
        asked after the rows are read, so a run that started meanwhile is never taken for one
        that ended."""
        running = _running_of(conn, self.instance_id)
        if not running:
            return Orphans(self.instance_id, self.host, self.pid, now, (), own=True)
        still = set(in_flight())
        ended = [r for r in running if r not in still]
        server = f"serve instance {self.instance_id} (host {self.host}, pid {self.pid})"
        lost = (f"{server} stopped with it unfinished: the store had refused its end "
                f"(STORE_FAILURE), or it was still blocked on a call or on the store"
                if stopping else
                f"the store refused its end when it finished (STORE_FAILURE); {server} ended "
                f"it once the store answered again")
        return Orphans(self.instance_id, self.host, self.pid, now,
                       _fail_running(conn, ended, lost, now), own=True)


def _none_in_flight() -> Collection[str]:
    return ()


def _running_of(conn: Connection, instance_id: str) -> list[str]:
    """The run ids noted as ``instance_id``'s whose rows are RUNNING."""
    run = diagnosis_run.c
    runs = select(serve_run.c.run_id).where(serve_run.c.instance_id == instance_id)
    return [r for (r,) in conn.execute(
        select(run.run_id).where(run.status == _RUNNING, run.run_id.in_(runs)))]


def _fail_running(conn: Connection, run_ids: list[str], message: str, now: float
                  ) -> tuple[str, ...]:
    """End those of ``run_ids`` still RUNNING as the unrecoverable internal failure
    (:data:`PROCESS_LOST`), the failure body saying ``message``; the run ids this call ended.

    Two servers may reap one lost instance at once: the second one's rows are no longer
    RUNNING when its update runs, and it ends (and reports) none of them, where the database
    says which rows an update changed (PostgreSQL, SQLite from 3.35)."""
    if not run_ids:
        return ()
    run = diagnosis_run.c
    body = json.dumps({"code": PROCESS_LOST, "message": message}, ensure_ascii=False)
    ending = (update(diagnosis_run)
              .where(run.status == _RUNNING, run.run_id.in_(run_ids))
              .values(status=StoredRunStatus.FAILED.value,
                      release_outcome=ReleaseOutcome.FAILED.value,
                      termination_state=RunState.FAILED.value,
                      termination_reason=PROCESS_LOST, answer_json=body,
                      # another host's clock may be behind the one that dated the start
                      finished_at=case((run.created_at > now, run.created_at), else_=now)))
    if not conn.dialect.update_returning:
        conn.execute(ending)
        return tuple(run_ids)
    ended = set(conn.execute(ending.returning(run.run_id)).scalars())
    return tuple(r for r in run_ids if r in ended)


def orphaned_running(engine: Engine, now: float | None = None) -> set[str]:
    """The run ids whose rows are RUNNING while the ``serve`` that runs them is gone (it said
    it stopped, was found lost, has not been heard from for :data:`STALE_S`, or ran on this
    host and its process no longer exists); empty when the database has no ``serve``
    tables. A later ``serve`` ends them as :data:`PROCESS_LOST`; until then they are
    orphans, not runs in flight."""
    from sqlalchemy import inspect

    if not inspect(engine).has_table("serve_run"):
        return set()
    now = time.time() if now is None else now
    host = socket.gethostname()
    run = diagnosis_run.c
    with engine.connect() as conn:
        instances = conn.execute(select(_I.instance_id, _I.host, _I.pid, _I.heartbeat_at,
                                        _I.stopped_at)).all()
        gone = [i for i, h, pid, heard, stopped in instances
                if stopped is not None or heard < now - STALE_S
                or (h == host and not _process_exists(pid))]
        if not gone:
            return set()
        query = (select(serve_run.c.run_id)
                 .join(diagnosis_run, run.run_id == serve_run.c.run_id)
                 .where(run.status == _RUNNING, serve_run.c.instance_id.in_(gone)))
        return {run_id for (run_id,) in conn.execute(query)}


def _process_exists(pid: int) -> bool:
    """Whether a process with this id runs on this host (one we may not signal counts; one
    that has exited and waits for its parent to reap it, a zombie, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and is not yet reaped (Linux's ``/proc``; elsewhere False)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] in (["Z"], ["X"])
