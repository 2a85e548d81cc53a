"""Where a run's virtual seconds land on the OpenTelemetry time line (nanoseconds since the
Unix epoch).

A run's times are seconds of its own clock: virtual seconds from zero in a simulation, the
scaled wall clock since the server started under ``serve``. A span needs Unix time, so each
time ``t`` becomes ``epoch + t``. Without an ``epoch`` of the caller's, a run whose stored row
dates ``created_at`` by the wall clock (a live run: the live store writes Unix time) starts
at that instant; any other run starts at :data:`DEFAULT_EPOCH`, a fixed instant, so that an
export is the same every time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from harness_lab.store.base import WALL_CLOCK_AFTER

if TYPE_CHECKING:
    from harness_lab.record import RunRecord

__all__ = ["DEFAULT_EPOCH", "WALL_CLOCK_AFTER", "epoch_of", "nanoseconds"]

DEFAULT_EPOCH: Final = 1_735_689_600.0
"""2025-01-01T00:00:00Z: where a simulated run's virtual second 0 is placed by default."""


def epoch_of(record: RunRecord, epoch: float | None = None) -> float:
    """The Unix time of ``record``'s virtual second 0: ``epoch`` when given; else its
    stored wall-clock ``created_at`` less its virtual start; else :data:`DEFAULT_EPOCH`."""
    if epoch is not None:
        return float(epoch)
    created = (record.stored_row or {}).get("created_at")
    if (isinstance(created, int | float) and not isinstance(created, bool)
            and created >= WALL_CLOCK_AFTER):
        return float(created) - record.started_at
    return DEFAULT_EPOCH


def nanoseconds(epoch: float, t: float) -> int:
    """``epoch + t`` seconds as integer nanoseconds; each part is rounded on its own, so a
    virtual time keeps its exact nanoseconds (a float near 1.7e18 would not)."""
    return round(epoch * 1_000_000_000) + round(t * 1_000_000_000)
