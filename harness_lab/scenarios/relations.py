"""Relations between observed values: ``sse[content].t == trace[RUN_FINISHED].t``.

A relation is ``LEFT OP RIGHT``: each side a path (:mod:`harness_lab.scenarios.paths`) or a
literal (a number, a quoted string, ``null``, ``true``, ``false``), ``OP`` one of ``<``,
``<=``, ``==``, ``!=``, ``>=``, ``>``. ``==`` and ``!=`` compare any two values (``true``
never equals ``1``); the others compare numbers only.

Under ``expect: relations:`` the paths start at a part of the run's observation
(``trace[...]``); in a pattern's ``$where`` they start at the value the pattern matches
(``detail.lost_to_at < detail.at``). :func:`parse_relation` checks the text when the file
loads; :meth:`Relation.holds` says why one does not hold.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness_lab.scenarios.paths import PARTS, PathError, Step, parse_path, resolve

__all__ = ["OPS", "Relation", "Unheld", "parse_relation"]

OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, ">": operator.gt}
"""The comparison operators, longest first (so ``<=`` is read before ``<``)."""

_SPLIT = re.compile(r"\s*(<=|>=|==|!=|<|>)\s*")
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
_WORDS: dict[str, Any] = {"null": None, "true": True, "false": False}


@dataclass(frozen=True, slots=True)
class _Side:
    text: str
    steps: tuple[Step, ...] | None  # None: a literal
    value: Any = None

    def value_in(self, observed: Any) -> Any:
        return self.value if self.steps is None else resolve(self.steps, observed)


@dataclass(frozen=True, slots=True)
class Relation:
    """One parsed relation; ``str()`` gives its text back."""

    left: _Side
    op: str
    right: _Side

    def __str__(self) -> str:
        return f"{self.left.text} {self.op} {self.right.text}"

    def holds(self, observed: Any) -> Unheld | None:
        """None when the relation holds in ``observed``; else what was found instead."""
        try:
            a, b = self.left.value_in(observed), self.right.value_in(observed)
        except PathError as exc:
            return Unheld((), str(exc))
        if self.op in ("==", "!="):
            return None if _same(a, b) == (self.op == "==") else Unheld((a, b))
        if not (_number(a) and _number(b)):
            return Unheld((a, b), f"{self.op} compares numbers only")
        return None if OPS[self.op](a, b) else Unheld((a, b))


@dataclass(frozen=True, slots=True)
class Unheld:
    """Why a relation does not hold: the two values it compared (none when a path named
    nothing) and a note (the path's problem, or why the values do not compare)."""

    values: tuple[Any, ...]
    note: str = ""


def parse_relation(text: str, *, absolute: bool = True) -> Relation:
    """``text`` parsed; ``ValueError`` naming what is wrong. ``absolute``: paths start at a
    part of the observation (checked against its parts), else at the matched value."""
    if not isinstance(text, str):
        raise ValueError(f"a relation is text like 'sse[content].t == trace[RUN_FINISHED].t', "
                         f"got {text!r}")
    pieces = _SPLIT.split(text.strip())
    if len(pieces) != 3:
        raise ValueError(f"{text!r} is not one relation LEFT OP RIGHT (OP one of "
                         f"{', '.join(sorted(OPS, key=len))})")
    left, op, right = pieces
    sides = (_side(left, text, absolute), _side(right, text, absolute))
    if sides[0].steps is None and sides[1].steps is None:
        raise ValueError(f"{text!r} compares two literals; name an observed value")
    return Relation(sides[0], op, sides[1])


def _side(piece: str, text: str, absolute: bool) -> _Side:
    if not piece:
        raise ValueError(f"{text!r}: a side of the relation is empty")
    if piece in _WORDS:
        return _Side(piece, None, _WORDS[piece])
    if _NUMBER.fullmatch(piece):
        return _Side(piece, None, json.loads(piece))
    if piece[0] in "'\"":
        if len(piece) < 2 or piece[-1] != piece[0]:
            raise ValueError(f"{text!r}: the string {piece} is not closed")
        return _Side(piece, None, piece[1:-1])
    try:
        return _Side(piece, parse_path(piece, parts=PARTS if absolute else None))
    except ValueError as exc:
        hint = "" if "did you mean" in str(exc) else " (a string literal is written in quotes)"
        raise ValueError(f"in {text!r}: {exc}{hint}") from None


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)
