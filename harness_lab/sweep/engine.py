"""The sweep engine: samples in chunks, on one core, all cores (joblib) or a dask cluster.

Every sample's randomness comes from its own stream, seeded by ``(seed, grid point, sample)``,
so results are identical whatever the number of workers or the order chunks finish in.
Chunks stream back as they complete: outcomes are kept as compact rows (never whole run
records, only failure summaries and an optional sample), and an interrupted sweep keeps every
completed chunk; a chunk the backend loses (one that kills its worker every time it runs,
say) becomes error rows.

A persisting sweep claims its database before any sample runs (``harness_lab.sweep.claim``)
and can be resumed into it, playing only the samples the database does not hold; local
workers end themselves when the sweep's process is gone (``harness_lab.parent_watch``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from harness_lab.errors import SweepError
from harness_lab.pool import available_cores
from harness_lab.sweep.chunk import ChunkResult, run_chunk
from harness_lab.sweep.result import SweepResult
from harness_lab.sweep.sample import describe, run_id_of

if TYPE_CHECKING:
    from harness_lab.record import RunRecord
    from harness_lab.sweep.claim import Stored

Chunk = tuple[int, dict[str, Any], int, int, bool]
"""One job of a sweep: grid point index, its overrides, first sample, end sample, and
whether it persists its runs (a resumed sweep plays the samples already stored again
without writing them, for its result)."""

Backend = Callable[["Sweep", list[Chunk], int, Any], Iterator[ChunkResult]]
"""How a sweep's chunks are played: ``backend(sweep, chunks, parallelism, client)`` yields
each chunk's result as it completes (``client``: the dask client, or None). The built-in one
is :func:`play_chunks`."""

__all__ = ["MAX_GRID_POINTS", "MAX_RUNS", "Backend", "Chunk", "ChunkResult", "Sweep",
           "available_cores", "grid_points", "on_dask", "overridden", "play_chunks", "processes",
           "run_chunk"]

MAX_GRID_POINTS = 10_000
"""The most grid points a sweep runs (each is checked whole before any sample runs)."""

MAX_RUNS = 100_000_000
"""The most runs (samples times grid points) a sweep plays: its result keeps a row each."""


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, in a stable order (one empty point if none)."""
    keys = list(grid)
    return [dict(zip(keys, values, strict=True))
            for values in itertools.product(*(grid[k] for k in keys))] or [{}]


def overridden(key: str, overrides: Mapping[str, Any]) -> bool:
    """True when an override sets grid key ``key`` or a mapping that holds it."""
    return any(key == o or key.startswith(f"{o}.") for o in overrides)


@dataclass
class Sweep:
    """A sweep of one scenario (its ``sweep:`` block, or a plain scenario replayed).

    ``workers`` is the number of local processes (joblib's loky; negative counts back from
    all cores as joblib does: -1 is every core); ``scheduler`` the address of a
    dask.distributed scheduler (or a ``distributed.Client``), which takes precedence and
    whose worker threads then size the chunks. ``source`` is the scenario file, for messages
    that name it and the line. ``backend`` plays the chunks (see :data:`Backend`; None: the
    built-in :func:`play_chunks`).
    """

    data: dict[str, Any]
    samples: int = 1000
    seed: int = 0
    workers: int = 1
    chunk_size: int = 0  # 0: chosen from samples and workers
    check_invariants: bool = True
    keep_failures: int = 20
    keep_every: int = 0
    store_url: str | None = None  # persist every run to this SQLAlchemy URL (file SQLite)
    resume: bool = False  # continue the sweep the store_url database holds
    commit_every: int = 256  # persisted runs per transaction (1: run-by-run transactions)
    scheduler: Any = None
    progress: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    connect_timeout_s: float = 10.0
    backend: Backend | None = None

    @classmethod
    def from_file(cls, path: str | Path, **kw: Any) -> Sweep:
        """A sweep of the scenario file at ``path`` (validated first)."""
        from harness_lab.scenarios import load_file

        load_file(path)  # raises ScenarioError naming file, line and field
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return cls(data, source=str(path), **kw)

    def grid(self) -> dict[str, list[Any]]:
        """The scenario's grid as written."""
        return dict((self.data.get("sweep") or {}).get("grid") or {})

    def axes(self) -> list[str]:
        """The grid keys this sweep varies: those no override replaces."""
        return [k for k in self.grid() if not overridden(k, self.overrides)]

    def points(self) -> list[dict[str, Any]]:
        """The grid points: the product of the axes, each with the overrides set.

        An override of a grid key replaces that axis (one value), so overriding it runs
        ``samples`` samples, not one set per value the grid lists.
        """
        grid = self.grid()
        return [{**p, **self.overrides} for p in grid_points({k: grid[k] for k in self.axes()})]

    def validate(self) -> None:
        """Raise before any sample runs when the sweep cannot run as asked.

        SweepError for bad sizes; ScenarioError naming the file, the field (grid key or
        override) and the line for every grid value and override the scenario rejects.
        """
        from harness_lab.sweep.check import check_sweep

        for name in ("samples", "chunk_size", "keep_failures", "keep_every", "commit_every"):
            low = 1 if name in ("samples", "commit_every") else 0
            if getattr(self, name) < low:
                raise SweepError(f"{name} must be at least {low}, got {getattr(self, name)}")
        if self.workers == 0:
            raise SweepError("workers must be at least 1, or negative to count back from "
                             "every core (-1: all of them)")
        if self.resume and self.store_url is None:
            raise SweepError("resume needs the database the sweep persisted into (--persist)")
        sizes = [len(self.grid()[key]) for key in self.axes()]
        count = math.prod(sizes)
        if count > MAX_GRID_POINTS:
            raise SweepError(f"the grid has more than {MAX_GRID_POINTS:,} points "
                             f"({' x '.join(map(str, sizes))}); sweep fewer values or split it "
                             "into several sweeps")
        if self.samples * count > MAX_RUNS:
            raise SweepError(f"{self.samples:,} samples x {count:,} grid points is more than "
                             f"{MAX_RUNS:,} runs; a sweep keeps a row per run")
        check_sweep(self.data, grid=self.grid(), axes=self.axes(), overrides=self.overrides,
                    points=self.points(), path=self.source or str(self.data.get("name")))

    def local_workers(self) -> int:
        """The local processes to use: ``workers``, or all cores but ``-workers - 1``;
        never more than the cores this process may use (see :meth:`worker_note`)."""
        cores = available_cores()
        wanted = cores + 1 + self.workers if self.workers < 0 else self.workers
        return min(max(wanted, 1), cores)

    def worker_note(self) -> str | None:
        """Why the sweep uses fewer local processes than ``workers`` asks, or None."""
        if self.scheduler is not None or self.workers <= available_cores():
            return None
        return (f"{self.workers} workers asked, {self.local_workers()} used: this machine lets "
                f"the sweep use {available_cores()} cores, and more processes than cores only "
                "cost memory")

    def replay(self, grid: int, sample: int) -> RunRecord:
        """Sample ``sample`` of grid point ``grid`` played again, for its whole run record."""
        from harness_lab.sweep.sample import GridPoint, apply_overrides

        point = self.points()[grid]
        return GridPoint(apply_overrides(self.data, point), grid, self.seed).record(sample)

    def _chunks(self, parallelism: int, stored: Stored | None = None) -> list[Chunk]:
        """The chunks to play; with ``stored``, the samples it holds are played again
        without persisting (for the result) and the others persisted."""
        size = self.chunk_size or max(min(self.samples // max(parallelism * 4, 1), 5000), 1)
        persist = self.store_url is not None
        out: list[Chunk] = []
        for g, point in enumerate(self.points()):
            for first, stop, done in _segments(self.samples, stored, g):
                for start in range(first, stop, size):
                    out.append((g, point, start, min(start + size, stop), persist and not done))
        return out

    def run(self) -> SweepResult:
        """Run every sample; Ctrl-C keeps the chunks completed so far.

        Every grid value and override is checked first, and a sweep persisting into a
        database that already holds its runs (the same run ids: the same sweep run before)
        raises SweepError, before any sample runs. A backend that fails part-way (a chunk that
        kills its worker, the scheduler gone) costs the chunks it held, as error rows, never
        the others.
        """
        self.validate()
        stored = self._claim(self.store_url) if self.store_url is not None else None
        client = self._client() if self.scheduler is not None else None
        try:
            if self.store_url is None:
                result = self._run(client, stored)
            else:
                from harness_lab.sweep.claim import beating

                with beating(self.store_url):
                    result = self._run(client, stored)
        finally:
            if client is not None and client is not self.scheduler:
                client.close()
        if self.store_url is not None and result.incomplete:
            self._unreported(self.store_url, result)
        return result

    def _run(self, client: Any, stored: Stored | None = None) -> SweepResult:
        parallelism = ((sum(client.nthreads().values()) or 1) if client is not None
                       else self.local_workers())
        chunks = self._chunks(parallelism, stored)
        started = time.perf_counter()
        results: list[ChunkResult] = []
        interrupted, cause = False, None
        backend = self.backend if self.backend is not None else play_chunks
        stream = backend(self, chunks, parallelism, client)
        if self.progress:
            from harness_lab.terminal.progress import progress_bar

            stream = iter(progress_bar(stream, total=len(chunks), desc="sweep chunks"))
        try:
            for chunk in stream:
                results.append(chunk)
        except KeyboardInterrupt:
            interrupted = True
        except Exception as exc:  # the backend itself failed: keep what completed
            interrupted, cause = True, describe(exc)
        elapsed = time.perf_counter() - started
        result = SweepResult.from_chunks(results, self.points(), elapsed=elapsed,
                                         interrupted=interrupted, workers=parallelism,
                                         scenario=str(self.data.get("name")), axes=self.axes(),
                                         keep_failures=self.keep_failures, cause=cause)
        result.replayed = stored.count if stored is not None else 0
        return result

    def _client(self) -> Any:
        from distributed import Client

        if isinstance(self.scheduler, Client):
            return self.scheduler
        try:
            return Client(self.scheduler, timeout=self.connect_timeout_s)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise SweepError(f"cannot reach the dask scheduler at {self.scheduler!r}: "
                             f"{type(exc).__name__}: {exc}") from exc

    def _claim(self, url: str) -> Stored:
        """Try the database and claim it (or take over its sweep, resuming): before any
        sample runs, as SweepError naming the database and the reason."""
        from harness_lab.redact import shown_url
        from harness_lab.store.errors import StoreError
        from harness_lab.store.target import open_writable
        from harness_lab.sweep.claim import (
            Claim,
            Stored,
            fingerprint,
            resume_claim,
            stake_claim,
        )

        points = self.points()
        claim = Claim(fingerprint(self.data, self.seed, points), str(self.data.get("name")),
                      self.seed, self.samples, len(points))
        try:
            with closing(open_writable(url, in_memory=False)) as store:
                if self.resume:
                    return resume_claim(store, claim, shown_url(url))
                stake_claim(store, claim, shown_url(url))
                return Stored({})
        except StoreError as exc:
            raise SweepError(str(exc)) from exc

    def _unreported(self, url: str, result: SweepResult) -> None:
        """Set the result's ``unreported``: the runs the database holds completed that the
        result does not count as played (their chunk was lost or interrupted after some of
        its groups were committed); or its ``unreadable``, why the database could not say."""
        from harness_lab.store.sql import SqlRunStore, one_line
        from harness_lab.sweep.claim import stored_runs

        try:
            with closing(SqlRunStore(url)) as store:
                held = stored_runs(store)
        except Exception as exc:  # the result stands; say why it could not be compared
            result.unreadable = one_line(exc)
            return
        frame = result.frame
        played = frame["error"].isna() | ~frame["error"].astype(str).str.startswith("lost: ")
        reported = set(zip(frame["grid"][played].tolist(), frame["sample"][played].tolist(),
                           strict=True))
        result.unreported = [run_id_of(g, s) for g in sorted(held.completed)
                             for s in sorted(held.completed[g]) if (g, s) not in reported]

    def job_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`run_chunk` this sweep's settings give."""
        return {"check_invariants": self.check_invariants, "keep_failures": self.keep_failures,
                "keep_every": self.keep_every, "store_url": self.store_url,
                "commit_every": self.commit_every}


def play_chunks(sweep: Sweep, chunks: list[Chunk], parallelism: int, client: Any
                ) -> Iterator[ChunkResult]:
    """The built-in :data:`Backend`: on the dask ``client`` when there is one, else in this
    process (``parallelism`` 1) or on ``parallelism`` loky processes."""
    kw = sweep.job_kwargs()
    if client is not None:
        yield from on_dask(client, run_chunk, sweep.data, sweep.seed, chunks, kw)
    elif parallelism <= 1:
        for chunk in chunks:
            g, point, start, stop, _ = chunk
            yield run_chunk(sweep.data, g, point, sweep.seed, start, stop,
                            **chunk_kwargs(kw, chunk))
    else:
        yield from processes(run_chunk, parallelism, sweep.data, sweep.seed, chunks, kw)


def chunk_kwargs(kw: dict[str, Any], chunk: Chunk) -> dict[str, Any]:
    """The job's keyword arguments for ``chunk``: without the store when it does not persist."""
    return kw if chunk[4] else {**kw, "store_url": None}


def _segments(samples: int, stored: Stored | None, grid: int) -> Iterator[tuple[int, int, bool]]:
    """``(start, stop, stored)`` runs of consecutive samples that are all stored or all not."""
    done = stored.completed.get(grid) if stored is not None else None
    if not done:
        yield 0, samples, False
        return
    start = 0
    state = 0 in done
    for i in range(1, samples):
        now = i in done
        if now != state:
            yield start, i, state
            start, state = i, now
    yield start, samples, state


def processes(job: Callable[..., ChunkResult], workers: int, data: dict[str, Any], seed: int,
              chunks: list[Chunk], kw: dict[str, Any]) -> Iterator[ChunkResult]:
    """``job`` over ``chunks`` on ``workers`` loky processes, each result as it completes
    (:func:`~harness_lab.pool.in_workers`): the chunks a worker that died (killed, out of
    memory) was running run again, each alone, and one that kills its worker again comes
    back as error rows naming the cause."""
    from harness_lab.pool import Call, in_workers

    calls = [((data, g, point, seed, start, stop), chunk_kwargs(kw, chunk))
             for chunk in chunks for g, point, start, stop, _ in [chunk]]
    again: set[int] = set()

    def rerun(index: int, call: Call) -> Call:  # a chunk whose worker died, run as it was
        again.add(index)
        return call

    for i, result in in_workers(job, calls, workers, lambda i, exc: _lost(chunks[i], exc),
                                rerun):
        yield dataclasses.replace(result, ran_again=True) if i in again else result


def _lost(chunk: Chunk, exc: BaseException) -> ChunkResult:
    """The chunk's samples as error rows naming its failure."""
    g, _, start, stop, _ = chunk
    return ChunkResult.lost_samples(g, start, stop, describe(exc))


def _result(future: Any, chunk: Chunk) -> ChunkResult:
    """The future's chunk result, or the chunk's samples as error rows naming its failure."""
    try:
        result: ChunkResult = future.result()
    except Exception as exc:
        return _lost(chunk, exc)
    return result


def on_dask(client: Any, job: Callable[..., ChunkResult], data: dict[str, Any], seed: int,
            chunks: list[Chunk], kw: dict[str, Any]) -> Iterator[ChunkResult]:
    """``job`` over ``chunks`` on the dask ``client``'s cluster, each result as it completes.
    The scheduler runs again a chunk whose worker died (its ``allowed-failures`` rule); a
    chunk that fails for good comes back as error rows naming the cause."""
    from distributed import as_completed

    futures = {client.submit(job, data, chunk[0], chunk[1], seed, chunk[2], chunk[3],
                             pure=False, **chunk_kwargs(kw, chunk)): chunk for chunk in chunks}
    try:
        for future in as_completed(futures):
            yield _result(future, futures[future])
    finally:
        client.cancel([f for f in futures if not f.done()])
