"""Progress only where a person watches."""

from __future__ import annotations

import io

from harness_lab.terminal.progress import progress, progress_wanted


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
