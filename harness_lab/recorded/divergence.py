"""Where a request diverged from its recording: the first differing JSON field path.

Paths read like Python access: ``messages[2].content``, ``tools[0].function.parameters``.
When both sides hold a string that is itself a JSON object or array (a chat message whose
content is JSON, tool-call arguments), the walk descends into it and marks the step with
``(json)``: ``messages[1].content(json).query``. Bodies that are not JSON are compared as
text, and the divergence names the first differing character offset.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BODY", "Divergence", "DivergenceReport", "body_digest", "count_differences",
           "first_divergence", "parse_body", "preview"]

BODY = "(body)"
"""The path of the whole body (the root of the walk)."""

_MISSING: Any = object()
_PREVIEW = 60


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first place two request bodies differ.

    ``kind`` is ``"value"`` (both present, different), ``"type"`` (different JSON types),
    ``"missing"`` (recorded has the field, actual lacks it), ``"extra"`` (actual has a field
    the recording lacks) or ``"text"`` (non-JSON bodies; ``path`` names the character offset).
    """

    path: str
    kind: str
    recorded: Any
    actual: Any

    def describe(self) -> str:
        """One readable line: where, and what each side holds."""
        if self.kind == "missing":
            return f"{self.path}: recorded {_short(self.recorded)}, missing in this request"
        if self.kind == "extra":
            return f"{self.path}: not recorded, this request has {_short(self.actual)}"
        return (f"{self.path}: recorded {_short(self.recorded)} != "
                f"this request {_short(self.actual)}")


@dataclass(frozen=True, slots=True)
class DivergenceReport:
    """At which request of a replay the run left its recording, and how.

    ``step`` is the 1-based number of the request within the cassette's context (the n-th
    HTTP request of the run), ``closest`` the 0-based index of the recorded interaction most
    like it (``None`` for an empty cassette) and ``divergence`` the first differing field
    against that one (``None`` when only the method or URL differs).
    """

    step: int
    method: str
    url: str
    body_digest: str
    closest: int | None
    closest_method: str | None
    closest_url: str | None
    divergence: Divergence | None

    def describe(self) -> str:
        """A readable paragraph for error messages."""
        head = (f"replay diverged at request {self.step}: {self.method} {self.url} "
                f"(body {self.body_digest})")
        if self.closest is None:
            return f"{head}; the cassette holds no interaction to compare with"
        near = (f"closest recorded: interaction {self.closest}, "
                f"{self.closest_method} {self.closest_url}")
        if self.divergence is None:
            return f"{head}; {near}, same body (the method or URL differs, or it was played)"
        return f"{head}; {near}; first difference at {self.divergence.describe()}"


def body_digest(body: bytes | str | None) -> str:
    """A short, stable fingerprint of a body: ``sha256:`` and 12 hex digits."""
    if not body:
        return "empty"
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:12]


def parse_body(body: Any) -> tuple[bool, Any]:
    """``(True, data)`` when ``body`` is JSON (bytes, text, or already-decoded data).

    ``None`` and the empty body are JSON-less: ``(False, "")``. Undecodable bytes and text
    that is not JSON come back as ``(False, text)``.
    """
    if body is None:
        return False, ""
    if isinstance(body, bytes | bytearray):
        try:
            body = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            return False, bytes(body).decode("utf-8", "replace")
    if isinstance(body, str):
        if not body.strip():
            return False, body
        try:
            return True, json.loads(body)
        except json.JSONDecodeError:
            return False, body
    return True, body


def first_divergence(recorded_request_body: Any, actual_body: Any) -> Divergence | None:
    """The first field path where ``actual_body`` differs from the recorded body, or None.

    Either side may be bytes, text or decoded JSON. Object keys are visited in sorted order,
    so the answer does not depend on key order (which the JSON matcher ignores as well).
    """
    return next(_walk(recorded_request_body, actual_body), None)


def count_differences(recorded_request_body: Any, actual_body: Any, *, limit: int = 1000) -> int:
    """How many leaf differences the two bodies have (at most ``limit``): a closeness score."""
    return sum(1 for _ in itertools.islice(_walk(recorded_request_body, actual_body), limit))


def _walk(recorded: Any, actual: Any) -> Iterator[Divergence]:
    rec_json, rec = parse_body(recorded)
    act_json, act = parse_body(actual)
    if rec_json and act_json:
        yield from _diff(rec, act, BODY)
        return
    rec_text, act_text = _text(rec), _text(act)
    if rec_text != act_text:
        offset = len(os.path.commonprefix([rec_text, act_text]))
        yield Divergence(f"{BODY}@{offset}", "text", rec_text[offset:offset + _PREVIEW],
                         act_text[offset:offset + _PREVIEW])


def _diff(rec: Any, act: Any, path: str) -> Iterator[Divergence]:
    top = "" if path == BODY else path
    children = None  # (key, its path) of two objects' keys or two arrays' indexes
    if isinstance(rec, Mapping) and isinstance(act, Mapping):
        children = [(k, f"{top}.{k}" if top else str(k))
                    for k in sorted(set(rec) | set(act), key=str)]
    elif isinstance(rec, list) and isinstance(act, list):
        children = [(i, f"{top}[{i}]") for i in range(max(len(rec), len(act)))]
        rec, act = dict(enumerate(rec)), dict(enumerate(act))
    if children is not None:
        for key, sub in children:
            if key not in act:
                yield Divergence(sub, "missing", rec[key], _MISSING)
            elif key not in rec:
                yield Divergence(sub, "extra", _MISSING, act[key])
            else:
                yield from _diff(rec[key], act[key], sub)
        return
    if isinstance(rec, str) and isinstance(act, str) and rec != act:
        nested = _nested_json(rec, act)
        if nested is not None:
            yield from _diff(nested[0], nested[1], f"{path}(json)")
            return
    if _json_type(rec) != _json_type(act):
        yield Divergence(path, "type", rec, act)
    elif rec != act or type(rec) is not type(act):  # 1 and 1.0 are different JSON texts
        yield Divergence(path, "value", rec, act)


def _nested_json(rec: str, act: str) -> tuple[Any, Any] | None:
    """Both strings decoded, when both are JSON objects or arrays."""
    if not all(text.lstrip().startswith(("{", "[")) for text in (rec, act)):
        return None
    try:
        return json.loads(rec), json.loads(act)
    except json.JSONDecodeError:
        return None


_JSON_TYPES: tuple[tuple[Any, str], ...] = (
    (type(None), "null"), (bool, "boolean"), (int | float, "number"), (str, "string"),
    (list, "array"), (Mapping, "object"))


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)),
                type(value).__name__)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _short(value: Any) -> str:
    if value is _MISSING:
        return "nothing"
    return preview(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str), _PREVIEW)


def preview(value: Any, limit: int = 200) -> str:
    """``value`` as text for an error message, cut to ``limit`` characters and ``...``."""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."
