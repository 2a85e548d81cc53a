"""The run log's lines as pydantic models, the source of its JSON Schema (``log_schema()``).

A log is JSON Lines: one :class:`Header`, one :class:`RunLine` per scenario run, and one
:class:`Footer`. The models describe what :mod:`harness_lab.logs.writer` writes; the records,
SSE and trace events inside a run line are described by :mod:`harness_lab.codec` from their
classes' own declarations (the one description of a record's shape). The reader rebuilds
results with :mod:`harness_lab.logs.codec`, and a test validates written logs against the
schema generated here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from harness_lab.codec import json_schema
from harness_lab.logs.version import FORMAT_VERSION
from harness_lab.record import RunRecord

__all__ = ["FORMAT_VERSION", "Footer", "Header", "MismatchModel", "RunLine", "ViolationModel",
           "log_schema"]


_STRICT = ConfigDict(extra="forbid")
_DECLARED = "x-declared-by"


def _declared(name: str, *, many: bool = False, nullable: bool = False) -> Any:
    """A field holding the codec's encoding of value class ``name`` (its schema is the
    codec's, from the class's own declaration: see :func:`log_schema`)."""
    ref: dict[str, Any] = {_DECLARED: name}  # made a $ref by log_schema
    if many:
        ref = {"type": "array", "items": ref}
    if nullable:
        ref = {"anyOf": [ref, {"type": "null"}]}
    kind = list[dict[str, Any]] if many else dict[str, Any]
    return Annotated[kind | None if nullable else kind, WithJsonSchema(ref)]


class MismatchModel(BaseModel):
    """One expectation that did not hold."""

    model_config = _STRICT
    field: str
    expected: Any
    observed: Any


class ViolationModel(BaseModel):
    """One broken invariant."""

    model_config = _STRICT
    invariant: str
    run_id: str
    message: str


class Header(BaseModel):
    """The first line: what wrote the log, where and when."""

    model_config = _STRICT
    kind: Literal["header"]
    format_version: int = Field(description="the log format's version (this schema's)")
    toolkit_version: str
    command: list[str] = Field(description="the command line, as argv")
    cwd: str
    git_commit: str | None = Field(description="the commit checked out in cwd, if any")
    python: str
    platform: str
    started_at: str = Field(description="wall-clock start, ISO 8601 in UTC")


class RunLine(BaseModel):
    """One scenario (variant) run: its whole observation and how it was judged."""

    model_config = _STRICT
    kind: Literal["run"]
    seq: int = Field(description="0-based position in the log")
    scenario: str
    variant: str | None = Field(description="the matrix variant label, if any")
    file: str | None
    sha256: str | None = Field(description="SHA-256 of the scenario file's bytes")
    description: str
    tags: list[str]
    case: str | None = Field(description="the doc §10 outcome-table row it reproduces")
    verdict: Literal["ok", "FAILED", "ERROR"]
    wall_s: float = Field(description="wall-clock seconds the run took")
    virtual_s: float | None = Field(description="virtual seconds from start to finish")
    record: _declared("RunRecord", nullable=True)  # type: ignore[valid-type]
    turns: _declared("RunRecord", many=True) = Field(  # type: ignore[valid-type]
        description="the earlier turns' records, in order")
    mismatches: list[MismatchModel]
    violations: list[ViolationModel]
    unexpected: list[str]
    missing: list[str]
    error: str | None
    crashed: bool
    stored_row: dict[str, Any] | None
    extra: dict[str, Any]
    partial_sse: _declared("SseEvent", many=True) = Field(  # type: ignore[valid-type]
        description="what a crashed run sent")
    partial_trace: _declared("TraceEvent", many=True) = Field(  # type: ignore[valid-type]
        description="what a crashed run traced")


class Footer(BaseModel):
    """The last line: totals. A log without one was interrupted."""

    model_config = _STRICT
    kind: Literal["footer"]
    finished_at: str
    runs: int
    verdicts: dict[str, int]
    ok: bool
    wall_s: float
    virtual_s: float


def log_schema() -> dict[str, Any]:
    """The JSON Schema of one line of a log (any of header, run or footer)."""
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Header | RunLine | Footer] = TypeAdapter(
        Header | RunLine | Footer)  # type: ignore[arg-type]
    schema = adapter.json_schema()
    declared = json_schema(RunRecord)["$defs"]
    schema = _refs(schema)
    schema["$defs"] = dict(sorted({**schema.get("$defs", {}), **declared}.items()))
    schema["title"] = f"harness-lab run log line (format_version {FORMAT_VERSION})"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def _refs(node: Any) -> Any:
    """``node`` with each placeholder of :func:`_declared` made a ``$ref`` to the codec's
    definition of its class."""
    if isinstance(node, dict):
        if set(node) == {_DECLARED}:
            return {"$ref": f"#/$defs/{node[_DECLARED]}"}
        return {k: _refs(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_refs(v) for v in node]
    return node
