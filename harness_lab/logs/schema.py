"""The run log's lines as pydantic models, the source of its JSON Schema (``log_schema()``).

A log is JSON Lines: one :class:`Header`, one :class:`RunLine` per scenario run, and one
:class:`Footer`. The models describe what :mod:`harness_lab.logs.writer` writes; the reader
rebuilds records with :mod:`harness_lab.logs.codec`, and a test validates written logs
against the schema generated here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness_lab.logs.version import FORMAT_VERSION
from harness_lab.states import (
    ChatApplicationStatus,
    CollectionState,
    DiagnosisStopReason,
    EvidenceStatus,
    FallbackType,
    InformationGain,
    IntentType,
    InvocationStatus,
    PreflightReason,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    SseEventKind,
    SseState,
    StoredRunStatus,
    ToolErrorCode,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)

__all__ = ["FORMAT_VERSION", "Footer", "Header", "InvocationModel", "MismatchModel", "RecordModel",
           "RejectionModel", "RunLine", "SseEventModel", "TraceEventModel", "UsageModel",
           "ViolationModel", "log_schema"]


_STRICT = ConfigDict(extra="forbid")


class SseEventModel(BaseModel):
    """One public SSE event, payload included."""

    model_config = _STRICT
    seq: int
    t: float
    kind: SseEventKind
    data: dict[str, Any]


class TraceEventModel(BaseModel):
    """One trace event, detail included."""

    model_config = _STRICT
    run_id: str
    seq: int
    t: float
    type: TraceEventType
    phase: TracePhase
    status: TraceEventStatus
    detail: dict[str, Any]


class InvocationModel(BaseModel):
    """One canonical tool invocation record."""

    model_config = _STRICT
    invocation_id: str
    run_id: str
    seq: int
    tool: str
    scope: dict[str, Any]
    normalized_scope: str
    status: InvocationStatus
    started_at: float
    evidence_status: EvidenceStatus | None
    error_code: ToolErrorCode | None
    error: str | None
    items: int
    size_bytes: int
    information_gain: InformationGain | None
    finished_at: float | None
    call_id: str | None


class RejectionModel(BaseModel):
    """One preflight rejection (no canonical record)."""

    model_config = _STRICT
    run_id: str
    tool: str
    scope: dict[str, Any]
    reason: PreflightReason
    message: str
    t: float
    call_id: str | None


class UsageModel(BaseModel):
    """What a run consumed."""

    model_config = _STRICT
    model_calls: int
    tool_calls: int
    tokens: int
    bytes: int
    input_tokens: int
    output_tokens: int


class RecordModel(BaseModel):
    """Every field of a RunRecord (see ``harness_lab.record``)."""

    model_config = _STRICT
    run_id: str
    session_id: str
    query: str
    intent: IntentType | None
    run_state: RunState
    termination_reason: str | None
    release_outcome: ReleaseOutcome
    fallback_type: FallbackType | None
    stored_status: StoredRunStatus | None
    sse_state: SseState
    collection_state: CollectionState | None
    stop_reason: DiagnosisStopReason | None
    semantic_verdict: SemanticVerdict | None
    statuses: list[ChatApplicationStatus]
    usage: UsageModel
    headroom: dict[str, int | None]
    started_at: float
    finished_at: float
    agent_steps: int
    content: dict[str, Any] | None
    failure: dict[str, Any] | None
    sse_events: list[SseEventModel]
    sse_refused: list[SseEventKind]
    trace: list[TraceEventModel]
    invocations: list[InvocationModel]
    rejections: list[RejectionModel]
    gains: list[InformationGain]
    stop_required_delivered: bool
    evidence_repaired: bool
    deadline_at: float
    discarded: list[tuple[str, str, float]] = Field(
        description="(call kind, name, virtual time) of each late result discarded")
    stored_row: dict[str, Any] | None
    terminations: list[tuple[str, str, float]] = Field(
        description="(state, reason, virtual time) of each termination attempt")
    error: str | None
    draft_error: str | None
    extra: dict[str, Any]


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
    record: RecordModel | None
    turns: list[RecordModel] = Field(description="the earlier turns' records, in order")
    mismatches: list[MismatchModel]
    violations: list[ViolationModel]
    unexpected: list[str]
    missing: list[str]
    error: str | None
    crashed: bool
    stored_row: dict[str, Any] | None
    extra: dict[str, Any]
    partial_sse: list[SseEventModel] = Field(description="what a crashed run sent")
    partial_trace: list[TraceEventModel] = Field(description="what a crashed run traced")


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
    schema["title"] = f"harness-lab run log line (format_version {FORMAT_VERSION})"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
