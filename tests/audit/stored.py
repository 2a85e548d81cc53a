"""Runs stored for an audit to read."""

from __future__ import annotations

from harness_lab.fakes import draft
from harness_lab.store.sql import SqlRunStore
from tests.conftest import build


def fallback_runs(url: str, count: int = 3) -> str:
    """Store ``count`` runs at ``url`` (``run-000001`` on), each ending FALLBACK for missing
    information; return ``url``."""
    store = SqlRunStore(url)
    try:
        harness = build([draft(missing_info=["which service"])] * count, store=store)
        for _ in range(count):
            assert harness.run("it is slow").release_outcome.value == "FALLBACK"
    finally:
        store.close()
    return url
