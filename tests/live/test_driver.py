"""The live driver's workers: started with the driver, never by a request (a real SQLite
file, the scenario's scripted providers on the wall clock)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from harness_lab.live.clock import WallClock
from harness_lab.live.driver import Flush, LiveDriver
from harness_lab.live.sources import ScenarioSource
from harness_lab.live.store import open_store
from harness_lab.live.wire import Frames
from harness_lab.record import RunRecord
from harness_lab.scenarios.discovery import load_scenario
from tests.live.test_server import GUARDS_PASS

pytestmark = pytest.mark.live


def test_a_request_runs_on_a_worker_started_before_it_and_starts_no_thread(
        tmp_path: Path) -> None:
    scenario, label = load_scenario(GUARDS_PASS)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    driver = LiveDriver(ScenarioSource(scenario, label), store, WallClock(0.01), workers=3)
    kinds: list[str] = []

    def sink(item: Frames | Flush | None) -> None:
        if isinstance(item, Flush):
            item.answer(True)
        elif isinstance(item, Frames):
            kinds.extend(kind.value for kind in item.kinds)

    try:
        before = {thread.ident for thread in threading.enumerate()}
        slots = [driver.start("why is checkout slow?", None, sink) for _ in range(5)]
        assert {thread.ident for thread in threading.enumerate()} == before
        deadline = time.monotonic() + 30
        while not all(slot.done for slot in slots) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [slot.record.release_outcome.value for slot in slots  # type: ignore[union-attr]
                ] == ["SUCCESS"] * 5
        assert driver.stats()["max_active"] == 5 and driver.stats()["finished"] == 5
        assert kinds.count("metadata") == 5 and kinds.count("done") == 5
    finally:
        driver.close()
        store.close()
    assert not any(thread.name.startswith("run_") for thread in threading.enumerate())


def test_each_finished_run_s_record_is_handed_on_and_a_failing_hand_costs_no_run(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    scenario, label = load_scenario(GUARDS_PASS)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    handed: list[RunRecord] = []

    def on_record(record: RunRecord) -> None:
        handed.append(record)
        raise RuntimeError("the receiver of records is broken")

    driver = LiveDriver(ScenarioSource(scenario, label), store, WallClock(0.01), workers=2,
                        on_record=on_record)

    def sink(item: Frames | Flush | None) -> None:
        if isinstance(item, Flush):
            item.answer(True)

    try:
        started = time.time()
        slots = [driver.start("why is checkout slow?", None, sink) for _ in range(3)]
        deadline = time.monotonic() + 30
        while len(handed) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        driver.close()
        store.close()
    assert sorted(r.run_id for r in handed) == sorted(slot.run_id for slot in slots)
    assert [r.release_outcome.value for r in handed] == ["SUCCESS"] * 3
    # dated by the wall clock: an export places each run where it started
    assert all(started <= (r.stored_row or {})["created_at"] <= time.time() for r in handed)
    assert driver.stats()["worker_errors"] == 0 and driver.stats()["finished"] == 3
    assert caplog.text.count("handing its record on failed") == 3
