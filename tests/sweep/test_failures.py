"""What a sweep keeps when samples, chunks or the backend fail."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness_lab.sweep.engine import ChunkResult, Sweep, run_chunk
from tests.sweep.conftest import stored_statuses

CRASH = [{"kind": "crash", "at": {"call": "tool", "n": 2}}]


def test_a_kept_sample_that_crashes_is_a_kept_error_and_the_sweep_goes_on(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=CRASH)
    plain = Sweep(data, samples=30, seed=3).run()
    keeping = Sweep(data, samples=30, seed=3, keep_every=3).run()
    pd.testing.assert_frame_equal(plain.frame, keeping.frame)
    crashed = [k for k in keeping.kept if "run_state" not in k]
    assert len(keeping.kept) == 20
    assert crashed
    assert all(k["error"].startswith("crash: injected crash") for k in crashed)


def test_a_sample_after_a_crashed_kept_sample_plays_on_a_fresh_harness(
        sweep_data: dict[str, Any]) -> None:
    from harness_lab.sweep.sample import GridPoint, apply_overrides

    data = dict(sweep_data, faults=CRASH)
    point = GridPoint(apply_overrides(data, {"config.deadline_s": 30}), 0, 3)
    fresh = GridPoint(apply_overrides(data, {"config.deadline_s": 30}), 0, 3)
    crashing = next(i for i in range(50) if point.run(i).error)
    with pytest.raises(BaseException, match="injected crash"):
        point.record(crashing)
    assert point.run(crashing + 1) == fresh.run(crashing + 1)


def test_a_backend_failure_keeps_the_completed_chunks_and_says_why(
        sweep_data: dict[str, Any]) -> None:
    def broken(sweep: Sweep, chunks: list[Any], parallelism: int, client: Any
               ) -> Iterator[ChunkResult]:
        g, point, start, stop, _ = chunks[0]
        yield run_chunk(sweep_data, g, point, 1, start, stop)
        raise RuntimeError("scheduler went away")

    result = Sweep(sweep_data, samples=10, seed=1, chunk_size=5, backend=broken).run()
    assert list(result.frame["sample"]) == [0, 1, 2, 3, 4]
    assert result.interrupted is True
    assert result.cause == "RuntimeError: scheduler went away"


@pytest.mark.slow
def test_a_chunk_that_kills_its_worker_every_time_becomes_error_rows_and_no_other_is_lost(
        sweep_data: dict[str, Any]) -> None:
    from harness_lab.sweep.engine import processes
    from tests.sweep.jobs import dies_on_the_first_chunk

    sweep = Sweep(sweep_data, samples=20, seed=2, chunk_size=5)
    chunks = sweep._chunks(2)
    results = {(c.grid, c.start): c for c in processes(
        dies_on_the_first_chunk, 2, sweep_data, 2, chunks, sweep.job_kwargs())}
    assert len(results) == 8
    first = results.pop((0, 0))
    assert first.lost is not None and "TerminatedWorkerError" in first.lost
    assert first.ran_again
    assert set(first.columns["error"]) == {f"lost: {first.lost}"}
    # it ran again alone: whichever chunk the other worker had when it first died ran again
    # too, and every other chunk is played whole
    assert all(len(chunk) == 5 and chunk.lost is None for chunk in results.values())
    assert sum(chunk.ran_again for chunk in results.values()) <= 1


@pytest.mark.slow
def test_a_persisting_chunk_whose_worker_died_midway_runs_again_storing_each_run_once(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    from harness_lab.sweep.engine import processes
    from harness_lab.sweep.sample import run_id_of
    from tests.sweep.jobs import dies_once_midway

    def killed_once(sweep: Sweep, chunks: list[Any], parallelism: int, client: Any
                    ) -> Iterator[ChunkResult]:
        kw = {**sweep.job_kwargs(), "runs": str(tmp_path / "runs")}
        return processes(dies_once_midway, 2, sweep.data, sweep.seed, chunks, kw)

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    result = Sweep(sweep_data, samples=20, seed=2, chunk_size=5, store_url=url,
                   backend=killed_once).run()
    unbroken = Sweep(sweep_data, samples=20, seed=2, chunk_size=5).run()
    assert (tmp_path / "runs").read_text(encoding="utf-8") == "run\n" * 2
    assert 1 <= result.ran_again <= 2
    assert (result.lost, result.unstored, result.unreported) == (0, 0, [])
    pd.testing.assert_frame_equal(result.frame, unbroken.frame)
    stored = stored_statuses(url)
    assert sorted(stored) == sorted(run_id_of(g, s) for g in (0, 1) for s in range(20))
    assert "RUNNING" not in stored.values()


def test_a_chunk_lost_in_its_worker_is_counted_in_the_result(
        sweep_data: dict[str, Any]) -> None:
    from harness_lab.sweep.result import SweepResult

    played = run_chunk(sweep_data, 0, {"config.deadline_s": 5}, 1, 0, 4)
    lost = ChunkResult.lost_samples(0, 4, 10, "TerminatedWorkerError: worker killed")
    result = SweepResult.from_chunks([lost, played], [{"config.deadline_s": 5}], elapsed=1.0,
                                     interrupted=False, workers=2, scenario="s")
    assert result.samples == 10
    assert result.lost == 6
    assert result.incomplete is True
    assert result.cause == "TerminatedWorkerError: worker killed"


def test_the_kept_failures_do_not_depend_on_the_chunking(sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=CRASH)
    one_chunk = Sweep(data, samples=60, seed=3, keep_failures=5, chunk_size=60).run()
    small_chunks = Sweep(data, samples=60, seed=3, keep_failures=5, chunk_size=7).run()
    assert small_chunks.failures == one_chunk.failures
    assert [(f["grid"], f["sample"]) for f in one_chunk.failures] == [
        (g, s) for g in (0, 1) for s in
        one_chunk.frame[(one_chunk.frame["grid"] == g)
                        & one_chunk.frame["error"].notna()]["sample"].head(5)]


def test_the_kept_failures_do_not_depend_on_the_number_of_workers(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=CRASH)
    one = Sweep(data, samples=40, seed=3, keep_failures=4, workers=1).run()
    two = Sweep(data, samples=40, seed=3, keep_failures=4, workers=2).run()
    assert two.failures == one.failures
    assert len(one.failures) == 8


def test_any_sample_can_be_replayed_for_its_whole_record(sweep_data: dict[str, Any]) -> None:
    sweep = Sweep(sweep_data, samples=20, seed=6)
    row = sweep.run().frame.set_index(["grid", "sample"]).loc[(1, 13)]
    record = sweep.replay(1, 13)
    assert record.run_id == "run-g1-s0000013"
    assert record.run_state.value == row["run_state"]
    assert record.duration_s == row["duration_s"]
    assert record.tool_calls == row["tool_calls"]
