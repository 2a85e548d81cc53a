"""The sweep engine: samples in chunks, on one core, all cores (joblib) or a dask cluster.

Every sample's randomness comes from its own stream, seeded by ``(seed, grid point, sample)``,
so results are identical whatever the number of workers or the order chunks finish in.
Chunks stream back as they complete: outcomes are kept as compact rows (never whole run
records, except the failures and an optional sample), and an interrupted sweep keeps every
completed chunk.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness_lab.errors import SweepError
from harness_lab.sweep.chunk import ChunkResult, run_chunk
from harness_lab.sweep.result import SweepResult
from harness_lab.sweep.sample import run_id_of

__all__ = ["ChunkResult", "Sweep", "grid_points", "run_chunk"]


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, in a stable order (one empty point if none)."""
    keys = list(grid)
    return [dict(zip(keys, values, strict=True))
            for values in itertools.product(*(grid[k] for k in keys))] or [{}]


@dataclass
class Sweep:
    """A sweep of one scenario (its ``sweep:`` block, or a plain scenario replayed).

    ``workers`` is the number of local processes (joblib); ``scheduler`` the address of a
    dask.distributed scheduler (or a ``distributed.Client``), which takes precedence.
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
    commit_every: int = 256  # persisted runs per transaction (1: run-by-run transactions)
    scheduler: Any = None
    progress: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: str | Path, **kw: Any) -> Sweep:
        """A sweep of the scenario file at ``path`` (validated first)."""
        from harness_lab.scenarios import load_file

        load_file(path)  # raises ScenarioError naming file, line and field
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return cls(data, **kw)

    def points(self) -> list[dict[str, Any]]:
        """The grid points, with ``overrides`` taking precedence over the grid's values."""
        grid = (self.data.get("sweep") or {}).get("grid") or {}
        return [{**p, **self.overrides} for p in grid_points(grid)]

    def _chunks(self) -> list[tuple[int, dict[str, Any], int, int]]:
        size = self.chunk_size or max(min(self.samples // max(self.workers * 4, 1), 5000), 1)
        out = []
        for g, point in enumerate(self.points()):
            for start in range(0, self.samples, size):
                out.append((g, point, start, min(start + size, self.samples)))
        return out

    def run(self) -> SweepResult:
        """Run every sample; Ctrl-C keeps the chunks completed so far.

        A sweep persisting into a database that already holds its runs (the same run ids:
        the same sweep run before) raises SweepError before any sample runs.
        """
        if self.store_url is not None:
            self._refuse_stored_runs(self.store_url)
        chunks = self._chunks()
        started = time.perf_counter()
        results: list[ChunkResult] = []
        interrupted = False
        stream = self._execute(chunks)
        if self.progress:
            from harness_lab.report.progress import progress_bar

            stream = iter(progress_bar(stream, total=len(chunks), desc="sweep chunks"))
        try:
            for chunk in stream:
                results.append(chunk)
        except KeyboardInterrupt:
            interrupted = True
        elapsed = time.perf_counter() - started
        return SweepResult.from_chunks(results, self.points(), elapsed=elapsed,
                                       interrupted=interrupted, workers=self.workers,
                                       scenario=str(self.data.get("name")))

    def _refuse_stored_runs(self, url: str) -> None:
        from harness_lab.store.sql import SqlRunStore

        store = SqlRunStore(url)
        try:
            for g in range(len(self.points())):
                for sample in sorted({0, max(self.samples - 1, 0)}):
                    run_id = run_id_of(g, sample)
                    if store.get_run(run_id) is not None:
                        raise SweepError(
                            f"{url} already holds run {run_id} of this sweep: persist each "
                            "sweep into a fresh database (or remove this one first)")
        finally:
            store.close()

    def _kwargs(self) -> dict[str, Any]:
        return {"check_invariants": self.check_invariants, "keep_failures": self.keep_failures,
                "keep_every": self.keep_every, "store_url": self.store_url,
                "commit_every": self.commit_every}

    def _execute(self, chunks: list[tuple[int, dict[str, Any], int, int]]
                 ) -> Iterator[ChunkResult]:
        kw = self._kwargs()
        if self.scheduler is not None:
            yield from _dask(self.scheduler, self.data, self.seed, chunks, kw)
        elif self.workers <= 1:
            for g, point, start, stop in chunks:
                yield run_chunk(self.data, g, point, self.seed, start, stop, **kw)
        else:
            from joblib import Parallel, delayed

            parallel = Parallel(n_jobs=self.workers, backend="loky",
                                return_as="generator_unordered")
            yield from parallel(delayed(run_chunk)(self.data, g, point, self.seed, start,
                                                   stop, **kw)
                                for g, point, start, stop in chunks)


def _dask(scheduler: Any, data: dict[str, Any], seed: int,
          chunks: list[tuple[int, dict[str, Any], int, int]], kw: dict[str, Any]
          ) -> Iterator[ChunkResult]:
    from distributed import Client, as_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = [client.submit(run_chunk, data, g, point, seed, start, stop, pure=False,
                                 **kw) for g, point, start, stop in chunks]
        for future in as_completed(futures):
            yield future.result()
    finally:
        if client is not scheduler:
            client.close()
