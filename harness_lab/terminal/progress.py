"""A progress bar for long commands, on standard error, only when a person watches it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from harness_lab.terminal.console import console, is_terminal

__all__ = ["progress", "progress_wanted"]


def progress_wanted(stream: TextIO | None = None, *, quiet: bool = False) -> bool:
    """True when ``stream`` (standard error by default) is a terminal and not ``quiet``."""
    return not quiet and is_terminal(sys.stderr if stream is None else stream)


@contextmanager
def progress(total: int | None, description: str, *, enabled: bool,
             stream: TextIO | None = None) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``, which moves a bar of ``total`` steps labelled ``description``.

    The bar (done/total, elapsed, time left) is drawn on ``stream`` (standard error) and
    erased when the block ends; when not ``enabled`` nothing is drawn and ``advance`` does
    nothing, so callers need no second code path.
    """
    if not enabled:
        yield _nothing
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(),
                   console=console(sys.stderr if stream is None else stream), transient=True)
    with bar:
        task = bar.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            bar.advance(task, n)

        yield advance


def _nothing(n: int = 1) -> None:
    """The ``advance`` of a bar that is not drawn."""
