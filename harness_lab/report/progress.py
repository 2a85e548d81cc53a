"""A notebook-friendly progress bar that degrades to nothing when tqdm is not installed."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TypeVar

__all__ = ["progress_bar"]

T = TypeVar("T")


def progress_bar(iterable: Iterable[T], total: int | None = None,
                 desc: str | None = None) -> Iterable[T]:
    """``tqdm.auto.tqdm(iterable, total=total, desc=desc)`` if tqdm imports, else ``iterable``.

    tqdm is looked up on every call, so installing it later takes effect without a reload.
    """
    try:
        auto = importlib.import_module("tqdm.auto")
    except ImportError:
        return iterable
    bar: Iterable[T] = auto.tqdm(iterable, total=total, desc=desc)
    return bar
