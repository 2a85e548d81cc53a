"""Progress only where a person watches."""

from __future__ import annotations

import io
import sys
import types
from typing import Any

import pytest

from harness_lab.terminal.progress import progress, progress_bar, progress_wanted


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_wanted_on_a_terminal_unless_quiet() -> None:
    assert progress_wanted(Tty())
    assert not progress_wanted(Tty(), quiet=True)
    assert not progress_wanted(io.StringIO())


def test_a_disabled_bar_draws_nothing() -> None:
    stream = io.StringIO()
    with progress(3, "steps", enabled=False, stream=stream) as advance:
        for _ in range(3):
            advance(1)
    assert stream.getvalue() == ""


def test_an_enabled_bar_draws_its_description_and_count(monkeypatch: object) -> None:
    stream = Tty()
    with progress(3, "steps", enabled=True, stream=stream) as advance:
        for _ in range(3):
            advance(1)
    drawn = stream.getvalue()
    assert "steps" in drawn and "3/3" in drawn


def test_a_bar_with_a_unit_draws_its_rate_and_one_without_does_not() -> None:
    for unit, rate in (("runs", True), (None, False)):
        stream = Tty()
        with progress(3, "steps", enabled=True, stream=stream, unit=unit) as advance:
            advance(3)
        assert ("runs/s" in stream.getvalue()) is rate


def test_without_tqdm_the_progress_bar_passes_the_iterable_through(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    items = [1, 2, 3]
    assert progress_bar(items, total=3, desc="runs") is items


def test_with_tqdm_the_progress_bar_is_tqdm_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any, Any]] = []

    def fake_tqdm(iterable: Any, total: Any = None, desc: Any = None) -> list[str]:
        calls.append((iterable, total, desc))
        return ["wrapped"]

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = fake_tqdm  # type: ignore[attr-defined]
    package = types.ModuleType("tqdm")
    package.auto = auto  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", package)
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    assert progress_bar(range(2), total=2, desc="runs") == ["wrapped"]
    assert calls == [(range(2), 2, "runs")]
