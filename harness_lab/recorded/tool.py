"""HttpJsonTool: a read-only diagnosis tool backed by an HTTP JSON query API.

Each invocation POSTs the scope, as a JSON object, to ``{base_url}{path}``. POST (not GET
with query parameters) keeps nested scopes and their types intact, and the body is the same
canonical JSON every time so a recording matches it; the API must treat the call as a
read-only query. The answer must be a JSON object with a list of objects under ``items``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from harness_lab.bounded_json import JsonInputError, parse_json
from harness_lab.errors import ToolExecutionError
from harness_lab.ports import ToolInput, ToolOutput
from harness_lab.recorded.client import JsonEndpoint, encode_body, preview
from harness_lab.tools.scope import scope_problem

__all__ = ["HttpJsonTool"]


class HttpJsonTool(JsonEndpoint):
    """A Tool that POSTs its scope to an HTTP JSON API and reads ``{"items": [...]}``.

    * ``size_bytes`` is the length of the (decoded) response body.
    * An HTTP status of 400 or more, a timeout or a transport error raises
      :class:`~harness_lab.errors.ToolExecutionError`.
    * A body that is not JSON, or has no list ``items`` of objects, is
      ``ToolOutput(projectable=False)``: the backend answered, but nothing can be projected.
    * ``latency_s`` is None (recordings keep no timing; the latency model decides).

    ``headers`` are sent with every call (e.g. an ``Authorization`` header; cassettes
    scrub it). ``validate`` refuses a scope that is not an object or lacks a ``required``
    key.
    """

    __test__ = False

    def __init__(self, name: str, base_url: str, *, path: str = "/query", evidence: bool = True,
                 read_only: bool = True, required: Iterable[str] = (),
                 http_client: httpx.Client | None = None, timeout_s: float = 10.0,
                 headers: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.path = path if path.startswith("/") else f"/{path}"
        self.evidence = evidence
        self.read_only = read_only
        self.required = tuple(required)
        self.timeout_s = timeout_s
        self.headers = dict(headers or {})
        super().__init__(http_client)

    def __repr__(self) -> str:
        return f"HttpJsonTool({self.name!r}, {self.url!r})"

    @property
    def url(self) -> str:
        """The endpoint every invocation POSTs to."""
        return f"{self.base_url}{self.path}"

    def validate(self, scope: Mapping[str, Any]) -> str | None:
        """Why ``scope`` is refused: not a mapping, or missing a ``required`` key; else None."""
        return scope_problem(self.name, scope, self.required)

    def invoke(self, request: ToolInput) -> ToolOutput:
        """POST the scope and project the answer; raise ToolExecutionError on failure."""
        try:
            body = encode_body(dict(request.scope))
        except (TypeError, ValueError) as exc:
            raise ToolExecutionError(f"tool {self.name!r}: scope is not JSON data: {exc}"
                                     ) from exc
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        response = self._post(body, headers, f"tool {self.name!r}:", ToolExecutionError)
        raw = response.content
        if response.status_code >= 400:
            raise ToolExecutionError(f"tool {self.name!r}: HTTP {response.status_code} from "
                                     f"{self.url}: {preview(response.text)}")
        items = _items(raw)
        return ToolOutput(items or (), size_bytes=len(raw), projectable=items is not None,
                          meta={"http_status": response.status_code})


def _items(raw: bytes) -> tuple[Mapping[str, Any], ...] | None:
    try:
        data = parse_json(raw.decode("utf-8"), source="a tool's answer")
    except (JsonInputError, UnicodeDecodeError):  # not JSON, or past the bounded reader's limits
        return None
    items = data.get("items") if isinstance(data, Mapping) else None
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        return None
    return tuple(dict(i) for i in items)
