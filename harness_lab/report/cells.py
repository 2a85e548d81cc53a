"""How a value reads in an HTML view of runs: never ``None``, ``nan`` or ``<NA>``.

Every table cell of the report viewer and of the notebook views goes through :func:`text`
(or :func:`cell`, its escaped form), so a missing value is the same quiet dash everywhere.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping
from enum import Enum
from typing import Any, Final

__all__ = ["MISSING", "cell", "detail_text", "duration", "is_missing", "json_text", "seconds",
           "text", "variant_parts"]

MISSING: Final = "–"
"""What a missing value (None, NaN, pandas NA) reads as."""

_VARIANT = re.compile(r"^(?P<base>[^\[]+)\[(?P<params>.*)\]$")
_NEXT_PARAM = re.compile(r",(?=\s*[\w.-]+=)")  # a comma that starts the next key=value


def is_missing(value: Any) -> bool:
    """True for None, a float NaN and pandas' NA or NaT (anything unequal to itself)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):  # pandas NA refuses bool(); arrays are never missing
        return type(value).__name__ in ("NAType", "NaTType")


def text(value: Any) -> str:
    """``value`` as display text: an enum's value, ``yes``/``no`` for booleans, a float
    without float noise, a mapping or list as compact JSON, :data:`MISSING` when missing."""
    if is_missing(value):
        return MISSING
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else str(value)
    if isinstance(value, (Mapping, list, tuple)):
        return json_text(value)
    return str(value)


def cell(value: Any) -> str:
    """:func:`text` escaped for HTML."""
    return html.escape(text(value))


def json_text(value: Any) -> str:
    """Compact JSON of ``value`` as sent on the wire (non-ASCII kept, unknown types as text)."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def detail_text(detail: Mapping[str, Any]) -> str:
    """A trace event's detail as ``key=value`` pairs, a missing value as :data:`MISSING`."""
    return "  ".join(f"{key}={value if isinstance(value, str) else text(value)}"
                     for key, value in detail.items())


def seconds(value: float | None) -> str:
    """A virtual time in seconds, three decimals (``1.250``); :data:`MISSING` when missing."""
    return MISSING if is_missing(value) else f"{float(value):.3f}"  # type: ignore[arg-type]


def duration(value: float | None) -> str:
    """A duration for people: ``0 s``, ``850 ms``, ``6.2 s``, ``2 min 5 s``."""
    if value is None or is_missing(value):
        return MISSING
    if value == 0:
        return "0 s"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 60:
        return f"{value:.3g} s"
    minutes, rest = divmod(value, 60)
    return f"{minutes:.0f} min {rest:.0f} s"


def variant_parts(name: str) -> tuple[str, tuple[str, ...]]:
    """A matrix variant's name split into its base name and readable parameters.

    ``policy-x[config.deadline_s=6.5,config.no_gain_threshold=2]`` gives
    ``("policy-x", ("deadline_s=6.5", "no_gain_threshold=2"))``; a named variant
    (``first-terminal-wins[cancel-first]``) gives its name as the one parameter; a name
    without brackets has no parameters.
    """
    match = _VARIANT.match(name)
    if match is None:
        return name, ()
    params = [p.strip() for p in _NEXT_PARAM.split(match["params"]) if p.strip()]
    readable = []
    for param in params:
        key, sep, value = param.partition("=")
        readable.append(f"{key.rsplit('.', 1)[-1]}={value}" if sep else param)
    return match["base"], tuple(readable)
