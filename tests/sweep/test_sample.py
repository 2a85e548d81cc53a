"""One sample of a sweep: the same outcome however many samples the grid point played before."""

from __future__ import annotations

from typing import Any

from harness_lab.sweep.sample import GridPoint


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
