"""Progress bars: on standard error only when a person watches it, or as a notebook widget.

:func:`progress` is the commands' bar (rich, on a terminal only); :func:`progress_bar` wraps
an iterable for the library's ``progress=True`` options: tqdm's widget in Jupyter, rich's bar
on a terminal, tqdm's text bar elsewhere when tqdm is installed, else the iterable itself.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

from harness_lab.terminal.console import console, is_terminal

__all__ = ["progress", "progress_bar", "progress_wanted"]


def progress_wanted(stream: TextIO | None = None, *, quiet: bool = False) -> bool:
    """True when ``stream`` (standard error by default) is a terminal and not ``quiet``."""
    return not quiet and is_terminal(sys.stderr if stream is None else stream)


@contextmanager
def progress(total: int | None, description: str, *, enabled: bool,
             stream: TextIO | None = None, unit: str | None = None
             ) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``, which moves a bar of ``total`` steps labelled ``description``.

    The bar (done/total, elapsed, time left, and the rate as ``N unit/s`` when ``unit`` is
    given) is drawn on ``stream`` (standard error) and
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

    rate = [] if unit is None else [_RateColumn(unit)]
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   *rate, TimeElapsedColumn(), TimeRemainingColumn(),
                   console=console(sys.stderr if stream is None else stream), transient=True)
    with bar:
        yield functools.partial(bar.advance, bar.add_task(description, total=total))


def _RateColumn(unit: str) -> Any:  # noqa: N802 (a column class, made when rich is loaded)
    """A column showing the task's rate as ``1,234 unit/s``."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            if speed is None and task.elapsed:
                speed = task.completed / task.elapsed
            return Text(f"{'?' if speed is None else f'{speed:,.0f}'} {unit}/s",
                        style="progress.data.speed")

    return RateColumn()


def _nothing(n: int = 1) -> None:
    """The ``advance`` of a bar that is not drawn."""


T = TypeVar("T")


def progress_bar(iterable: Iterable[T], total: int | None = None,
                 desc: str | None = None) -> Iterable[T]:
    """``iterable``, drawing a bar of ``total`` steps labelled ``desc`` as it is consumed.

    Outside a notebook with standard error on a terminal the bar is rich's (no extra package
    needed); otherwise ``tqdm.auto.tqdm(iterable, total=total, desc=desc)`` if tqdm imports
    (looked up on every call, so installing it later takes effect without a reload), else
    ``iterable`` unchanged.
    """
    if not _in_notebook() and is_terminal(sys.stderr):
        return _rich_bar(iterable, total, desc or "")
    try:
        auto = importlib.import_module("tqdm.auto")
    except ImportError:
        return iterable
    bar: Iterable[T] = auto.tqdm(iterable, total=total, desc=desc)
    return bar


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where a widget shows, not a terminal bar)."""
    get = getattr(sys.modules.get("IPython"), "get_ipython", None)
    return get is not None and type(get()).__name__ == "ZMQInteractiveShell"


def _rich_bar(iterable: Iterable[T], total: int | None, desc: str) -> Iterator[T]:
    with progress(total, desc, enabled=True) as advance:
        for item in iterable:
            yield item
            advance(1)
