"""Where virtual seconds land on the time line: the default epoch, a live run's wall
clock, a caller's epoch."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from harness_lab.otel import DEFAULT_EPOCH, epoch_of
from harness_lab.otel.clock import nanoseconds
from tests.otel.conftest import played


def test_the_default_epoch_is_the_first_instant_of_2025() -> None:
    assert DEFAULT_EPOCH == datetime(2025, 1, 1, tzinfo=UTC).timestamp()


def test_a_simulated_run_starts_at_the_default_epoch() -> None:
    ((_, record),) = played("outcomes/conclusion-guards-pass.yaml")
    assert record.stored_row is not None and record.stored_row["created_at"] == 0.0
    assert epoch_of(record) == DEFAULT_EPOCH


def test_a_run_stored_by_the_wall_clock_starts_at_its_row_s_created_at() -> None:
    ((_, record),) = played("outcomes/conclusion-guards-pass.yaml")
    live = replace(record, started_at=12.5, finished_at=19.2,
                   stored_row={**(record.stored_row or {}), "created_at": 1_760_000_000.0})
    assert epoch_of(live) == 1_760_000_000.0 - 12.5


def test_an_epoch_of_the_callers_wins_over_the_stored_one() -> None:
    ((_, record),) = played("outcomes/conclusion-guards-pass.yaml")
    live = replace(record, stored_row={**(record.stored_row or {}), "created_at": 1.76e9})
    assert epoch_of(live, 1_800_000_000) == 1_800_000_000.0


def test_a_timestamp_keeps_the_exact_nanoseconds_of_a_virtual_time() -> None:
    # 1735689600 + 6.7 as one float is 1735689606.7000000477 s: off by 48 ns
    assert nanoseconds(1_735_689_600.0, 6.7) == 1_735_689_606_700_000_000
