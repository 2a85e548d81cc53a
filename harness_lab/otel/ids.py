"""Trace and span ids that a run's record determines, so exporting it again gives the same
ids: a backend then holds one trace per run, however often the run is sent.

A run's seed is the SHA-256 of its whole record (the one JSON encoding of
:mod:`harness_lab.codec`, whole numbers written alike whether int or float), the scenario
it played and the epoch it is placed at: the same record, exported from memory or reopened
from its log, keeps its ids; two runs that differ in anything, or one run placed at two
epochs, do not share them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness_lab.record import RunRecord

__all__ = ["run_seed", "span_ids", "trace_id"]

_VERSION = b"harness_lab.otel/1"  # a new derivation of ids gets a new tag


def run_seed(record: RunRecord, epoch_ns: int, scenario: str | None = None) -> bytes:
    """The 32-byte seed of one run's ids."""
    data = _canonical([scenario, epoch_ns, record.to_dict()])
    text = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(_VERSION + b"\0" + text.encode()).digest()


def _canonical(value: Any) -> Any:
    """``value`` with every whole float as an int: a run's clock starts at the int 0, a
    record read back from JSON at 0.0, and both are one time."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def trace_id(seed: bytes) -> int:
    """The run's 128-bit trace id (never 0, which OpenTelemetry reads as invalid)."""
    return int.from_bytes(hashlib.sha256(seed + b"trace").digest()[:16], "big") or 1


def span_ids(seed: bytes) -> Iterator[int]:
    """The run's 64-bit span ids, in the order its spans are created (never 0)."""
    n = 0
    while True:
        digest = hashlib.sha256(seed + b"span" + n.to_bytes(8, "big")).digest()
        yield int.from_bytes(digest[:8], "big") or 1
        n += 1
