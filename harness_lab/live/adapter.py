"""The adapter file: how ``harness-lab conform`` talks to a harness that is not ours.

A YAML mapping of another harness's paths, SSE event names and payload fields onto the
documented contract (``docs/live.md``), and optionally where its stored runs can be read: a
database URL with the audit's column mapping (``docs/logs.md``) or trace and run endpoints.
Every key is optional (the defaults are ``harness-lab serve``'s contract); a misspelt key or a
wrong type is an error naming the file, the field and its line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from harness_lab.scenarios.safe_yaml import YamlInputError, load_yaml
from harness_lab.yaml_lines import YamlLines

__all__ = ["MAX_PATH", "Adapter", "AdapterError", "ChatSpec", "DatabaseSpec", "EventName",
           "StreamLimitsSpec", "UrlPath", "load_adapter"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


MAX_PATH = 2048
"""The longest path an adapter may give (far above any route)."""


def _text(pattern: str, rule: str) -> AfterValidator:
    """A check that a whole text matches ``pattern``; ValueError saying ``rule`` otherwise."""
    matcher = re.compile(pattern)

    def check(value: str) -> str:
        if not matcher.fullmatch(value):
            raise ValueError(f"{rule}; got {value[:40]!r}")
        return value

    return AfterValidator(check)


# a URL path an HTTP request can carry: ``/`` then visible ASCII, no spaces, MAX_PATH at most
_PATH = _text(f"/[!-~]{{0,{MAX_PATH - 1}}}",
              "a URL path starts with '/' and holds visible ASCII characters only (no spaces or "
              f"control characters, at most {MAX_PATH})")
# a name the harness sends (an SSE event name): not empty, on one line
_ONE_LINE = _text(r"[^\r\n\x00]+", "a name of one line, not empty")
# a header name (a token) and a header value an HTTP request can carry
_HEADER_NAME = _text(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+",
                     "a header name holds letters, digits and !#$%&'*+-.^_`|~ only")
_HEADER_VALUE = _text(r"[\t -~]*", "a header value holds visible ASCII characters, spaces and "
                      "tabs only (no line breaks)")


def _database_url(value: str) -> str:
    """A URL SQLAlchemy can parse."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        make_url(value)
    except ArgumentError:
        raise ValueError(f"not a SQLAlchemy database URL: {value[:60]!r}") from None
    return value


def _mapping(value: dict[str, Any]) -> dict[str, Any]:
    """The audit's column mapping, checked as the audit checks it."""
    from harness_lab.audit.sources import check_mapping

    check_mapping(value)
    return value


UrlPath = Annotated[str, _PATH]
EventName = Annotated[str, _ONE_LINE]


class ChatSpec(_Strict):
    """The endpoint a query is POSTed to, and the names of its JSON body's fields."""

    path: UrlPath = "/chat"
    """The path of the SSE chat endpoint."""
    query_field: str = "query"
    """The body field holding the user's query."""
    session_field: str = "sessionId"
    """The body field holding the session id (null for a new session)."""


class EventNames(_Strict):
    """The harness's SSE event names for the contract's five kinds."""

    metadata: EventName = "metadata"
    """The first event: the session and run ids."""
    status: EventName = "status"
    """A progress status."""
    content: EventName = "content"
    """The released answer."""
    failure: EventName = "failure"
    """The public failure notice."""
    done: EventName = "done"
    """The closing event."""


class FieldNames(_Strict):
    """The payload fields conform reads."""

    session_id: str = "sessionId"
    """The session id in the metadata event."""
    run_id: str = "runId"
    """The run id in the metadata event."""
    status: str = "status"
    """The status value in a status event."""


class DatabaseSpec(_Strict):
    """Where the harness stores its runs, with the audit's column mapping."""

    url: Annotated[str, AfterValidator(_database_url)]
    """A SQLAlchemy database URL."""
    mapping: Annotated[dict[str, Any], AfterValidator(_mapping)] = {}
    """Tables and columns by the toolkit's names (see docs/logs.md, Column mapping)."""


class StreamLimitsSpec(_Strict):
    """What conform reads of one run's SSE stream before it fails the scenario (a harness
    that streams without end costs bounded memory and time)."""

    event_bytes: int = Field(1 << 20, gt=0)
    """The longest SSE line read: 1 MiB."""
    events: int = Field(10_000, gt=0)
    """The most events read from one stream."""
    total_bytes: int = Field(16 << 20, gt=0)
    """The most bytes read from one stream: 16 MiB."""
    seconds: float = Field(120.0, gt=0)
    """The longest one stream is read, however steadily its bytes trickle in."""


class Adapter(_Strict):
    """How to drive one harness; the defaults are the documented contract."""

    chat: ChatSpec = ChatSpec()
    """The chat endpoint."""
    cancel_path: UrlPath | None = "/runs/{runId}/cancel"
    """POSTed to cancel a run (``{runId}`` is replaced); null: the harness has none."""
    run_path: UrlPath | None = "/runs/{runId}"
    """GET: the stored run row as JSON; null: none (then give ``database``)."""
    trace_path: UrlPath | None = "/runs/{runId}/trace"
    """GET: the run's trace events as a JSON list; null: none."""
    events: EventNames = EventNames()
    """SSE event names."""
    fields: FieldNames = FieldNames()
    """Payload field names."""
    database: DatabaseSpec | None = None
    """Read the row and trace from this database instead of the endpoints."""
    headers: dict[Annotated[str, _HEADER_NAME], Annotated[str, _HEADER_VALUE]] = {}
    """Headers sent with every request (e.g. an Authorization header)."""
    limits: StreamLimitsSpec = StreamLimitsSpec()
    """What one run's stream may send before conform stops reading it."""


class AdapterError(ValueError):
    """An adapter file that cannot be used; the message names file, field and line."""


def load_adapter(path: str | Path) -> Adapter:
    """The adapter of a YAML file; AdapterError naming file, field and line otherwise."""
    try:
        root, data = load_yaml(Path(path), "an adapter file")
    except YamlInputError as exc:
        raise AdapterError(str(exc)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise AdapterError(f"{path}:1: the adapter must be a mapping of settings")
    try:
        return Adapter.model_validate(data)
    except ValidationError as exc:
        problems = []
        lines = YamlLines(root)
        for err in exc.errors():
            loc = tuple(err["loc"])
            field = ".".join(str(p) for p in loc) or "(top)"
            problems.append(f"{path}:{lines.line(loc) or 1}: {field}: {err['msg']}")
        raise AdapterError("\n".join(problems)) from None
