"""Sweeps past one machine: a dask.distributed LocalCluster on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest

from tests.sweep.conftest import stored_statuses

distributed = pytest.importorskip("distributed")

if TYPE_CHECKING:
    from harness_lab.sweep.chunk import ChunkResult

pytestmark = pytest.mark.slow  # each test starts a cluster of worker processes


def test_a_sweep_on_a_dask_cluster_matches_the_local_sweep(sweep_data: dict[str, Any]) -> None:
    from harness_lab.sweep.engine import Sweep

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = Sweep(sweep_data, samples=20, seed=9, chunk_size=6, scheduler=client).run()
    local = Sweep(sweep_data, samples=20, seed=9).run()
    pd.testing.assert_frame_equal(remote.frame, local.frame)


def test_a_sweep_on_a_dask_cluster_is_sized_and_reported_by_its_worker_threads(
        sweep_data: dict[str, Any]) -> None:
    from harness_lab.sweep.engine import Sweep

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        sweep = Sweep(sweep_data, samples=40, seed=9, scheduler=client)
        result = sweep.run()
    assert result.workers == 2
    assert result.summary()["workers"] == 2
    assert len(sweep._chunks(result.workers)) == 2 * 8  # 40 samples // (2 threads * 4)


def test_a_persisting_chunk_whose_dask_worker_died_midway_runs_again_storing_each_run_once(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    from harness_lab.sweep.engine import Sweep, on_dask
    from harness_lab.sweep.sample import run_id_of
    from tests.sweep.jobs import dies_once_midway

    def killed_once(sweep: Sweep, chunks: list[Any], parallelism: int, client: Any
                    ) -> Iterator[ChunkResult]:
        kw = {**sweep.job_kwargs(), "runs": str(tmp_path / "runs")}
        return on_dask(client, dies_once_midway, sweep.data, sweep.seed, chunks, kw)

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        result = Sweep(sweep_data, samples=20, seed=2, chunk_size=5, store_url=url,
                       scheduler=client, backend=killed_once).run()
    unbroken = Sweep(sweep_data, samples=20, seed=2, chunk_size=5).run()
    assert (tmp_path / "runs").read_text(encoding="utf-8") == "run\n" * 2
    assert result.ran_again >= 1  # the scheduler said nothing: the chunk found its runs
    assert (result.lost, result.unstored, result.unreported) == (0, 0, [])
    pd.testing.assert_frame_equal(result.frame, unbroken.frame)
    stored = stored_statuses(url)
    assert sorted(stored) == sorted(run_id_of(g, s) for g in (0, 1) for s in range(20))
    assert "RUNNING" not in stored.values()
