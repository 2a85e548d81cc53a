"""A progress bar for notebooks and terminals that degrades to nothing where none can show.

In Jupyter it is tqdm's widget (``tqdm.auto``); on a terminal, rich's bar on standard error;
elsewhere tqdm's text bar when tqdm is installed, else the iterable itself.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["progress_bar"]

T = TypeVar("T")


def progress_bar(iterable: Iterable[T], total: int | None = None,
                 desc: str | None = None) -> Iterable[T]:
    """``iterable``, drawing a bar of ``total`` steps labelled ``desc`` as it is consumed.

    Outside a notebook with standard error on a terminal the bar is rich's (no extra package
    needed); otherwise ``tqdm.auto.tqdm(iterable, total=total, desc=desc)`` if tqdm imports
    (looked up on every call, so installing it later takes effect without a reload), else
    ``iterable`` unchanged.
    """
    from harness_lab.terminal.console import is_terminal

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
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    ip = get() if get is not None else None
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _rich_bar(iterable: Iterable[T], total: int | None, desc: str) -> Iterator[T]:
    from harness_lab.terminal.progress import progress

    with progress(total, desc, enabled=True) as advance:
        for item in iterable:
            yield item
            advance(1)
