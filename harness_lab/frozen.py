"""Pickling and deep-copying for the frozen value classes of the run core.

A frozen dataclass compiled by mypyc refuses pickle's default path, which sets the fields
one by one on a bare instance. :func:`value_class` registers each value class of the run
core with :mod:`copyreg` (which pickle, copy, loky and dask all consult) so that it is
rebuilt by its constructor instead, in either core: a sweep's results cross processes.
"""

from __future__ import annotations

import copyreg
import dataclasses
from typing import Any, TypeVar

__all__ = ["reduce_by_fields", "value_class"]

C = TypeVar("C", bound=type)


def reduce_by_fields(value: Any) -> tuple[type, tuple[Any, ...]]:
    """A ``__reduce__`` result rebuilding the frozen dataclass ``value`` by its constructor.

    The fields are passed in the constructor's order, which works in both cores.
    """
    return type(value), tuple(getattr(value, f.name) for f in dataclasses.fields(value))


def value_class(cls: C) -> C:
    """Have the frozen value class ``cls`` pickled and deep-copied by its constructor.

    Call it after the class (``value_class(Cls)``), not as a decorator: mypyc leaves a class
    with an unknown decorator interpreted.
    """
    copyreg.pickle(cls, reduce_by_fields)
    return cls
