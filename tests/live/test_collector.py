"""serve's garbage-collector settings: what exists at start frozen, collections further apart."""

from __future__ import annotations

import gc

from harness_lab.live.collector import THRESHOLDS, tune_collector


def test_tuning_freezes_what_exists_and_sets_the_thresholds_it_documents() -> None:
    made_at_start = [object() for _ in range(10)] + [[] for _ in range(10)]
    before = gc.get_threshold()
    try:
        replaced = tune_collector()
        assert replaced == before
        assert gc.get_threshold() == (20_000, 20, 20) == THRESHOLDS
        assert gc.get_freeze_count() >= len([x for x in made_at_start if gc.is_tracked(x)])
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
