"""One sample of a sweep: the same outcome however many samples the grid point played before."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from harness_lab.sweep.sample import GridPoint, grid_sample_of, run_id_of


def test_samples_played_in_turn_equal_samples_each_played_on_a_fresh_grid_point(
        sweep_data: dict[str, Any]) -> None:
    shared = GridPoint(sweep_data, 0, 7)
    in_turn = [shared.run(i) for i in range(60)]
    fresh = [GridPoint(sweep_data, 0, 7).run(i) for i in range(60)]
    assert in_turn == fresh
    assert len({(o.run_state, o.release_outcome) for o in in_turn}) > 1  # varied samples


def test_a_sample_played_after_others_keeps_the_whole_record_of_a_fresh_one(
        sweep_data: dict[str, Any]) -> None:
    shared = GridPoint(sweep_data, 0, 3)
    for i in range(10):
        shared.run(i)
    assert shared.record(11).to_dict() == GridPoint(sweep_data, 0, 3).record(11).to_dict()


def test_components_built_afresh_for_a_sample_are_the_ones_its_run_calls(
        sweep_data: dict[str, Any]) -> None:
    shared = GridPoint(sweep_data, 0, 3)
    shared.run(0)
    shared._rewinds = None  # as for components that cannot be rewound: the next builds anew
    assert shared.run(1) == GridPoint(sweep_data, 0, 3).run(1)


FAULTS = {
    "sampled faults": [],
    "an injected model error": [{"kind": "provider_error", "call": "model", "n": 2}],
    "a scripted router error": None,
}


@pytest.mark.parametrize("faults", FAULTS.values(), ids=FAULTS.keys())
def test_a_played_sample_leaves_none_of_its_objects_to_the_garbage_collector(
        sweep_data: dict[str, Any], faults: list[dict[str, Any]] | None) -> None:
    data = (dict(sweep_data, faults=faults) if faults is not None
            else dict(sweep_data, router={"error": "router down"}))
    point = GridPoint(data, 0, 5)
    point.run(0)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for i in range(1, 6):
            point.run(i)
        gc.collect()
        left = sorted({type(o).__qualname__ for o in gc.garbage
                       if type(o).__module__.startswith("harness_lab")})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    assert left == []


def test_a_sweep_run_id_gives_back_its_grid_point_and_sample_and_another_id_none() -> None:
    assert run_id_of(3, 42) == "run-g3-s0000042"
    assert grid_sample_of("run-g3-s0000042") == (3, 42)
    assert grid_sample_of("run-g12-s12345678") == (12, 12345678)
    for other in ("run-000001", "run-gx-s0000001", "run-g1-s", "xrun-g1-s0000001",
                  "run-g1-s00001-inv-1"):
        assert grid_sample_of(other) is None, other
