"""JSON text exactly as ``json.dumps`` writes it, from encoders set up once.

A run encodes two dozen small values (tool scopes, trace-event details); ``json.dumps``
sets up a new encoder for each, which costs more than the encoding itself. A writer from
:func:`json_writer` keeps one C encoder of :mod:`json` (its ``c_make_encoder``) for the
options given, and gives the text ``json.dumps`` would give with them, and the same
TypeError or ValueError on bad input.

The kept encoder does not track the containers it is inside (that memory is what makes a
fresh encoder necessary per call): a value that contains itself is caught by the
interpreter's recursion limit instead, and then encoded once more by ``json.dumps`` itself,
which names the circular reference.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _encoder
from typing import Any

__all__ = ["dumps", "json_writer"]

_make: Any = getattr(_encoder, "c_make_encoder", None)


def _refuse(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def json_writer(*, sort_keys: bool = False, separators: tuple[str, str] = (", ", ": "),
                default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """A function giving ``json.dumps(value, sort_keys=..., separators=..., default=...)``."""
    item_sep, key_sep = separators

    def slow(value: Any) -> str:
        return json.dumps(value, sort_keys=sort_keys, separators=separators, default=default)

    if _make is None:  # pragma: no cover - CPython always has the accelerator
        return slow
    encode = _make(None, default if default is not None else _refuse,
                   _encoder.encode_basestring_ascii, None, key_sep, item_sep, sort_keys,
                   False, True)
    escape = _encoder.encode_basestring_ascii

    def write(value: Any) -> str:
        if type(value) is str:
            return escape(value)
        try:
            return "".join(encode(value, 0))
        except RecursionError:
            return slow(value)  # a value that contains itself: json.dumps names it

    write.__doc__ = f"JSON text of a value (sort_keys={sort_keys}, separators={separators})."
    return write


dumps = json_writer()
"""``json.dumps(value)``: the same text, the same TypeError or ValueError on bad input."""
