"""The scenario file format: pydantic models for scripts, configuration and expectations.

A scenario is YAML; every mapping is validated with ``extra="forbid"`` so a misspelt key is an
error that names the field path and line. ``harness-lab schema`` prints the JSON Schema of
:class:`Scenario` for editors. Invocation ids may be written ``inv-N``: the harness expands
them to the current run's N-th canonical invocation (``<run_id>-inv-N``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, field_validator, model_validator

from harness_lab.config import UserCancelNotice
from harness_lab.defects import Defect
from harness_lab.scenarios.faults import Fault
from harness_lab.scenarios.limits import INT_MAX
from harness_lab.scenarios.model_base import SpecModel
from harness_lab.states import (
    CollectionState,
    DiagnosisStopReason,
    FallbackType,
    InformationGain,
    IntentType,
    PreflightReason,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    SseEventKind,
    SseState,
    StoredRunStatus,
    TraceEventType,
)
from harness_lab.sweep.spec import SweepBlock

__all__ = [
    "BudgetSpec", "ConfigSpec", "Expect", "GuardStepSpec", "LatencySpec", "ModelStepSpec",
    "PolicySpec", "ProgressSpec", "RepairStepSpec", "RouteStepSpec", "Scenario", "ToolResultSpec",
    "PYTEST_MARKERS", "Tag", "ToolSpec", "TurnSpec", "UsageSpec", "Variant", "check_tag",
]

Seconds = Annotated[float, Field(ge=0)]
"""Virtual seconds: finite (every model refuses ``.inf`` and ``.nan``) and not negative."""
Count = Annotated[int, Field(ge=0, le=INT_MAX)]
"""A count of tokens, bytes or calls: not negative, within the store's signed 64 bits."""

MATCHERS = ("method", "uri", "url", "scheme", "host", "port", "path", "query", "raw_body",
            "body", "headers", "json_body")
"""The request matchers a cassette replay knows (vcrpy's, plus ``json_body``)."""
Matcher = Literal["method", "uri", "url", "scheme", "host", "port", "path", "query", "raw_body",
                  "body", "headers", "json_body"]


class UsageSpec(SpecModel):
    """Tokens one call consumes."""

    input: Count = 0
    output: Count = 0


class FactSpec(SpecModel):
    """A fact citing invocation ids (``inv-N`` or full ids)."""

    statement: str
    citations: list[str] = Field(min_length=1)


class EvidenceSpec(SpecModel):
    """One evidence reference of a conclusion."""

    invocation_id: str
    claim: str


class ProgressSpec(SpecModel):
    """A progress report (see ``docs/protocol.md``)."""

    assessment: Literal["GAINED", "NO_GAIN"] | None = None
    facts: list[FactSpec] = []
    missing_info: list[str] = []
    next: str | None = None


class DraftSpec(SpecModel):
    """A DiagnosisDraft."""

    conclusion: str | None = None
    evidence: list[EvidenceSpec] = []
    findings: list[FactSpec] = []
    missing_info: list[str] = []
    recommendations: list[str] = []


_MODEL_ACTIONS = ("tool", "draft", "report", "invalid_json", "schema_invalid", "empty", "error")


class ModelStepSpec(SpecModel):
    """One diagnosis-model step: exactly one of the action keys.

    ``tool`` (+ ``scope``, ``call_id``, optional ``progress``), ``draft`` (+ optional
    ``progress``), ``report`` (a progress report alone), ``invalid_json`` (raw text),
    ``schema_invalid`` (a raw draft object the schema refuses), ``empty: true`` or
    ``error`` (a provider error message). ``tool`` and ``draft`` together play one reply
    carrying both, which the draft contract refuses (a reply is a draft or an action).
    """

    tool: str | None = None
    scope: dict[str, Any] = {}
    call_id: str | None = None
    progress: ProgressSpec | None = None
    draft: DraftSpec | None = None
    report: ProgressSpec | None = None
    invalid_json: str | None = None
    schema_invalid: dict[str, Any] | None = None
    empty: bool = False
    error: str | None = None
    latency_s: Seconds | None = None
    usage: UsageSpec | None = None

    @model_validator(mode="after")
    def _one_action(self) -> ModelStepSpec:
        given = [k for k in _MODEL_ACTIONS
                 if (getattr(self, k) is not None and getattr(self, k) is not False)]
        if given == ["tool", "draft"]:
            return self
        if len(given) != 1:
            raise ValueError(f"a model step needs exactly one of {', '.join(_MODEL_ACTIONS)}; "
                             f"got {given or 'none'}")
        if self.progress is not None and given[0] not in ("tool", "draft"):
            raise ValueError("progress goes beside a tool request or a draft only")
        return self


class RepairStepSpec(SpecModel):
    """One EvidenceRepair reply: a repaired draft, invalid JSON, or a provider error."""

    draft: DraftSpec | None = None
    invalid_json: str | None = None
    error: str | None = None
    latency_s: Seconds | None = None
    usage: UsageSpec | None = None

    @model_validator(mode="after")
    def _one_action(self) -> RepairStepSpec:
        given = [k for k in ("draft", "invalid_json", "error") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a repair step needs exactly one of draft, invalid_json, error")
        return self


class RouteStepSpec(SpecModel):
    """One router reply: an intent or an error."""

    intent: IntentType | None = None
    error: str | None = None
    latency_s: Seconds | None = None
    usage: UsageSpec | None = None

    @model_validator(mode="after")
    def _one_action(self) -> RouteStepSpec:
        if (self.intent is None) == (self.error is None):
            raise ValueError("a router step needs exactly one of intent, error")
        return self


class GuardStepSpec(SpecModel):
    """One SemanticGuard verdict (UNAVAILABLE is a provider error)."""

    verdict: SemanticVerdict
    rationale: str = ""
    latency_s: Seconds | None = None
    usage: UsageSpec | None = None


class AnswerSpec(SpecModel):
    """The responder (SYSTEM_CHAT and KNOWLEDGE_QUERY answers)."""

    text: str = "A scripted answer."
    error: str | None = None
    latency_s: Seconds | None = None
    usage: UsageSpec | None = None


class RetrieverSpec(SpecModel):
    """The knowledge retriever."""

    passages: list[str] = ["A scripted knowledge passage."]
    error: str | None = None
    latency_s: Seconds | None = None


class ToolResultSpec(SpecModel):
    """One tool result: exactly one of the kinds."""

    evidence: list[dict[str, Any]] | None = None
    no_evidence: bool = False
    error: str | None = None
    oversize: int | None = Field(None, gt=0, le=INT_MAX)
    unprojectable: bool = False
    bytes: Count | None = None
    latency_s: Seconds | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> ToolResultSpec:
        kinds = [self.evidence is not None, self.no_evidence, self.error is not None,
                 self.oversize is not None, self.unprojectable]
        if sum(kinds) != 1:
            raise ValueError("a tool result needs exactly one of evidence, no_evidence, "
                             "error, oversize, unprojectable")
        return self


class ScopedResultSpec(SpecModel):
    """Results for one exact scope."""

    scope: dict[str, Any]
    result: ToolResultSpec | list[ToolResultSpec]


class ToolSpec(SpecModel):
    """A scripted read-only tool."""

    evidence: bool = True
    read_only: bool = True
    required: list[str] = []
    latency_s: Seconds | None = None
    default: ToolResultSpec | None = None
    script: list[ToolResultSpec] = []
    by_scope: list[ScopedResultSpec] = []


class BudgetSpec(SpecModel):
    """Hard limits; ``null`` is unlimited."""

    model_calls: Count | None = 16
    tool_calls: Count | None = 8
    tokens: Count | None = 64_000
    bytes: Count | None = 1_000_000


class PolicySpec(SpecModel):
    """The SPEC §5 policy settings."""

    timeout_progress_fallback: bool = False
    user_cancel_notice: UserCancelNotice = UserCancelNotice.FAILURE
    require_progress_reports: bool = True


class ConfigSpec(SpecModel):
    """The harness configuration of the scenario."""

    deadline_s: float = Field(60.0, gt=0)
    budget: BudgetSpec = BudgetSpec()
    no_gain_threshold: int = Field(3, ge=1, le=INT_MAX)
    protocol_violation_threshold: int = Field(3, ge=1, le=INT_MAX)
    history_limit: Count = 6
    projection_max_items: int = Field(50, ge=1, le=INT_MAX)
    projection_max_bytes: int = Field(65_536, ge=1, le=INT_MAX)
    authorized_tools: list[str] | None = None
    policy: PolicySpec = PolicySpec()
    defects: list[Defect] = []  # test-only seeded bugs, see harness_lab.defects


class LatencySpec(SpecModel):
    """Default virtual latency (seconds) per call kind, when a step does not give one."""

    router: Seconds = 0.0
    responder: Seconds = 0.0
    retriever: Seconds = 0.0
    model: Seconds = 0.0
    tool: Seconds = 0.0
    repair: Seconds = 0.0
    guard: Seconds = 0.0


RouterField = IntentType | RouteStepSpec | list[RouteStepSpec]
GuardField = SemanticVerdict | GuardStepSpec | list[GuardStepSpec]


class RecordedToolSpec(SpecModel):
    """A tool backed by an HTTP JSON API, as the recorded model sees it."""

    description: str
    parameters: dict[str, Any] = {"type": "object"}
    url: str
    path: str = "/query"
    required: list[str] = []
    evidence: bool = True


class RecordedSpec(SpecModel):
    """Recorded (or live) OpenAI-compatible components instead of the scripted ones.

    The cassette (``cassette:``, relative to the scenario file) is replayed strictly with
    record mode ``none``; ``harness-lab record`` writes it. Recordings carry no timing, so
    every call takes the scenario's ``latency`` defaults.
    """

    base_url: str
    model: str = "gpt-4o-mini"
    api_key_env: str = "OPENAI_API_KEY"
    tools: dict[str, RecordedToolSpec] = {}
    match_on: list[Matcher] = ["method", "path", "query", "json_body"]


class TurnSpec(SpecModel):
    """An earlier turn of the same session, run through the harness before the scenario's."""

    query: str
    router: RouterField = IntentType.DIAGNOSIS
    model: list[ModelStepSpec] = []
    guard: GuardField | None = None
    repair: list[RepairStepSpec] = []
    expect: Expect | None = None  # what this earlier turn must show


class Expect(SpecModel):
    """What the run must show; every field is optional."""

    run_state: RunState | None = None
    release_outcome: ReleaseOutcome | None = None
    fallback_type: FallbackType | Literal["none"] | None = None
    db_status: StoredRunStatus | None = None  # RUNNING only for a crashed run
    intent: IntentType | None = None
    termination_reason: str | None = None
    stop_reason: DiagnosisStopReason | Literal["none"] | None = None
    collection_state: CollectionState | None = None
    semantic_verdict: SemanticVerdict | Literal["none"] | None = None
    sse_state: SseState | None = None
    sse: list[SseEventKind] | None = None
    trace: list[TraceEventType] | None = None
    trace_contains: list[TraceEventType] | None = None
    trace_excludes: list[TraceEventType] | None = None
    tool_calls: Count | None = None
    tool_calls_by_name: dict[str, int] | None = None
    model_calls: Count | None = None
    rejections: list[PreflightReason] | None = None
    discarded: Count | None = None
    previous_turn: str | Literal["none"] | None = None
    published_result: bool | None = None
    crashed: bool | None = None
    failure_code: str | None = None  # the ``code`` of the public failure event
    done_outcome: ReleaseOutcome | Literal["none"] | None = None  # the public done, or none
    stop_required_delivered: bool | None = None
    gains: list[InformationGain] | None = None  # every InformationGain decided, in order
    violations: list[str] = []


class Variant(SpecModel):
    """One named variant of a ``matrix`` list: dotted-path overrides and expectations."""

    name: str
    set: dict[str, Any] = {}
    expect: Expect | None = None


class WhenSpec(SpecModel):
    """Expectations applying to the product-matrix variants whose values match ``when``."""

    when: dict[str, Any]
    expect: Expect


PYTEST_MARKERS = frozenset({"skip", "skipif", "xfail", "parametrize", "usefixtures",
                            "filterwarnings"})
"""pytest's built-in markers: a tag becomes a marker, so these would change how a test runs."""

_TAG = re.compile(r"[A-Za-z0-9_.-]+")
_MARKER_KEYWORDS = frozenset({"and", "or", "not"})  # words of a ``pytest -m`` expression


def check_tag(tag: str) -> str:
    """``tag`` when it is a single word a ``pytest -m`` expression can select; else ValueError."""
    if not _TAG.fullmatch(tag):
        raise ValueError(f"tag {tag!r} is not a single word of letters, digits, '_', '-' "
                         f"and '.'; `pytest -m` could not select it")
    if tag.replace("-", "_") in PYTEST_MARKERS:
        raise ValueError(f"tag {tag!r} is a pytest built-in marker; as a scenario tag it "
                         f"would change how pytest runs the scenario")
    if tag in _MARKER_KEYWORDS:
        raise ValueError(f"tag {tag!r} is a word of `pytest -m` expressions; it cannot be "
                         f"selected")
    return tag


Tag = Annotated[str, AfterValidator(check_tag)]
Axis = Annotated[list[Any], Field(min_length=1)]


class Scenario(SpecModel):
    """One scenario file (or one variant of it, after matrix expansion)."""

    model_config = ConfigDict(populate_by_name=True)
    schema_url: str | None = Field(None, alias="$schema")
    """The JSON Schema of the file, for editors (``harness-lab schema``); not read by runs."""
    name: str
    description: str
    tags: list[Tag] = []
    case: str | None = None  # a row of the document's outcome table (SPEC §4)
    query: str = "Why is the checkout service slow?"
    session_id: str | None = None
    turns: list[TurnSpec] = []
    config: ConfigSpec = ConfigSpec()
    latency: LatencySpec = LatencySpec()
    router: RouterField = IntentType.DIAGNOSIS
    model: list[ModelStepSpec] = []
    tools: dict[str, ToolSpec] = {}
    guard: GuardField = SemanticVerdict.SUPPORTED
    repair: list[RepairStepSpec] = []
    responder: AnswerSpec = AnswerSpec()
    retriever: RetrieverSpec = RetrieverSpec()
    cassette: str | None = None
    recorded: RecordedSpec | None = None
    faults: list[Fault] = []
    expect: Expect = Expect()
    matrix: list[Variant] | dict[str, Axis] | None = None
    expect_when: list[WhenSpec] = []
    sweep: SweepBlock | None = None  # used by ``harness-lab sweep``; ignored by ``run``

    @field_validator("faults", mode="before")
    @classmethod
    def _fault_kinds(cls, faults: Any) -> Any:
        """Fault kinds in any case, like every other enum value of the file."""
        if not isinstance(faults, list):
            return faults
        return [{**f, "kind": f["kind"].lower()}
                if isinstance(f, dict) and isinstance(f.get("kind"), str) else f
                for f in faults]


TurnSpec.model_rebuild()
