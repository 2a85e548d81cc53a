"""A small sweep scenario shared by the sweep tests."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.scenarios import TWO_TOOL_MODEL

SWEEP = """\
name: sweep-fixture
description: a two-tool diagnosis under sampled latencies and faults
tools: {logs: {}, metrics: {}}
""" + TWO_TOOL_MODEL + """\
sweep:
  latency:
    model: {lognormal: {median: 1.0, sigma: 0.6}}
    tool: {uniform: [0.5, 4.0]}
  faults:
    tool_error_p: 0.1
    disconnect: {p: 0.1, at_s: {uniform: [0, 8]}}
  grid:
    config.deadline_s: [5, 30]
"""


@pytest.fixture
def sweep_data() -> dict[str, Any]:
    """The fixture scenario as data."""
    data: dict[str, Any] = yaml.safe_load(SWEEP)
    return data


def stored_statuses(url: str) -> dict[str, str]:
    """Each run the database at ``url`` holds, by run id: its stored status (a run stored
    twice would fail its insert, so a run id stands once)."""
    from harness_lab.store.sql import SqlRunStore

    store = SqlRunStore(url)
    try:
        return {r["run_id"]: r["status"] for r in store.runs()}
    finally:
        store.close()
