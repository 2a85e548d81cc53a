"""A hundred concurrent SSE runs against serve, with random disconnects and user cancels."""

from __future__ import annotations

import pytest

from benchmarks.bench_live_load import load, serving
from tests.live.test_server import GUARDS_PASS

pytestmark = [pytest.mark.live, pytest.mark.slow]


def test_a_hundred_concurrent_runs_with_disconnects_and_cancels_break_nothing() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3") as served:
        result = load(served, runs=100, concurrency=100, seed=7, disconnect=0.25,
                      cancel=0.25, run_s=2.0)
    assert result.problems == []
    assert len(result.runs) == 100
    assert result.server["max_active"] >= 90
    assert result.server["finished"] == 100
    reasons = {key.split(": ", 1)[1] for key in result.outcomes}
    assert {"CANCELLED/CLIENT_DISCONNECTED", "CANCELLED/USER_REQUESTED",
            "SUCCESS/completed"} <= reasons
