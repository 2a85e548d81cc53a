"""JSON text exactly as ``json.dumps(value)`` writes it, from one encoder set up once.

A stored run encodes two dozen small trace-event details; ``json.dumps`` builds a new
encoder for each, which costs more than the encoding. :func:`dumps` drives the C encoder
of :mod:`json` (its ``c_make_encoder``) with the default options, falling back to
``json.dumps`` where the C accelerator is missing.
"""

from __future__ import annotations

import json
from json import encoder as _encoder
from typing import Any

__all__ = ["dumps"]

def _default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_make: Any = getattr(_encoder, "c_make_encoder", None)


def dumps(value: Any) -> str:
    """``json.dumps(value)``: the same text, the same TypeError or ValueError on bad input."""
    if _make is None:  # pragma: no cover - CPython always has the accelerator
        return json.dumps(value)
    if isinstance(value, str):
        return _encoder.encode_basestring_ascii(value)
    # a fresh markers dict per call: a value that contains itself is a ValueError, as there
    chunks = _make({}, _default, _encoder.encode_basestring_ascii, None, ": ", ", ",
                   False, False, True)(value, 0)
    return "".join(chunks)
