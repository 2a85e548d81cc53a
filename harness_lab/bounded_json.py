"""Read JSON that a user hands the toolkit within bounds: one reader for every command.

Run logs, audit exports, ``--mapping`` files, adapter files and the other JSON a command reads
come from people and from other programs, so each document is held to limits no genuine one
comes near before it can cost much time or memory, and anything else JSON allows but a
record cannot hold is refused as it is parsed:

- a document of more than :data:`MAX_JSON_BYTES`;
- nesting deeper than :data:`MAX_JSON_DEPTH` (checked by a scan of the text before parsing,
  so a 100,000-deep line never reaches the recursive parser);
- an integer outside the store's signed 64-bit range (a 5,000-digit one included), or, where
  the caller says so, outside 128 bits (a run log: a run's usage sums 64-bit counts, and a
  run whose total passes what a store holds is logged as it happened);
- ``NaN``, ``Infinity`` and a number that overflows to infinity (``9e999``).

A refusal is one :class:`JsonInputError` naming the source and line, never a traceback.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "InputError", "JsonInputError", "NotJsonError",
           "parse_json"]

MAX_JSON_BYTES = 64 << 20
"""A JSON document (a log line, an export line, a mapping file) holds at most 64 MiB."""

MAX_JSON_DEPTH = 64
"""Objects and arrays nest at most 64 levels deep (a run line of a log nests 7)."""

_TOKENS = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]|"', re.S)
"""What the depth scan reads: a whole JSON string (matched possessively, so it keeps no
backtracking state per character), a bracket, or a quote that opens a string never closed."""


class InputError(ValueError):
    """A file or text from a user that this toolkit refuses: ``source``, ``line`` (None when
    the whole input is at fault) and why; its text is ``source:line: message``."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.message = message


class JsonInputError(InputError):
    """JSON from a user that this toolkit refuses."""


class NotJsonError(JsonInputError):
    """Text that is not JSON at all (rather than JSON beyond a limit): a reader that also
    takes plain text catches this one alone."""


class _Refused(ValueError):
    pass


def _integers(bits: int) -> Callable[[str], int]:
    """A ``parse_int`` that refuses integers outside the signed ``bits``-bit range (by their
    digits first, so a 5,000-digit one is never converted)."""
    top = (1 << (bits - 1)) - 1
    digits_at_most = len(str(top))

    def integer(text: str) -> int:
        digits = text.lstrip("-")
        if len(digits) > digits_at_most:
            raise _Refused(f"an integer of {len(digits)} digits (outside the {bits}-bit range)")
        value = int(text)
        if not -top - 1 <= value <= top:
            raise _Refused(f"the integer {text} is outside the {bits}-bit range")
        return value

    return integer


_integer = _integers(64)
_wide_integer = _integers(128)


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is too large (it overflows to infinity)")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON allows")


def depth_of(text: str) -> int:
    """How deep the objects and arrays of ``text`` nest (strings ignored), in one pass of
    time and memory linear in the text: the scan stops at a string that is never closed,
    past which nothing is JSON."""
    if "[" not in text and "{" not in text:
        return 0
    depth = deepest = 0
    for token in _TOKENS.finditer(text):
        first = text[token.start()]
        if first == '"':
            if token.end() - token.start() == 1:  # an opening quote with no closing one
                break
        elif first in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    return deepest


def parse_json(text: str, *, source: str, line: int | None = None,
               max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH,
               wide_ints: bool = False) -> Any:
    """The JSON value of ``text`` (a document, or one line of a JSON Lines file); integers
    within 64 bits, or 128 with ``wide_ints``.

    Raise :class:`JsonInputError` naming ``source`` and ``line`` for text that is not JSON
    or that is beyond the limits above.
    """
    if len(text) > max_bytes:
        raise JsonInputError(source, line, f"{len(text):,} characters of JSON, more than "
                                           f"the {max_bytes:,} this toolkit reads")
    deepest = depth_of(text)
    if deepest > max_depth:
        raise JsonInputError(source, line, f"nested {deepest} levels deep, more than the "
                                           f"{max_depth} this toolkit reads")
    try:
        return json.loads(text, parse_int=_wide_integer if wide_ints else _integer,
                          parse_float=_number,
                          parse_constant=_constant)
    except _Refused as exc:
        raise JsonInputError(source, line, str(exc)) from None
    except json.JSONDecodeError as exc:
        at = f" (line {exc.lineno} of it)" if line is not None and exc.lineno > 1 else ""
        raise NotJsonError(source, line if line is not None else exc.lineno,
                           f"not JSON: {exc.msg} at column {exc.colno}{at}") from None
    except RecursionError:  # unreachable past the depth scan; kept as the last guard
        raise JsonInputError(source, line, "nested too deep") from None
