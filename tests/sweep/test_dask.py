"""Sweeps past one machine: a dask.distributed LocalCluster on loopback."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

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
