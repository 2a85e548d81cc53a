"""The scenario file format: pydantic models for scripts, configuration and expectations.

A scenario is YAML; every mapping is validated with ``extra="forbid"`` so a misspelt key is an
error that names the field path and line. ``harness-lab schema`` prints the JSON Schema of
:class:`Scenario` for editors. Invocation ids may be written ``inv-N``: the harness expands
them to the current run's N-th canonical invocation (``<run_id>-inv-N``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, ConfigDict, Field, model_validator
from pydantic.functional_validators import BeforeValidator

from harness_lab.config import DeadlineDetection, UserCancelNotice
from harness_lab.defects import Defect
from harness_lab.scenarios.faults import Fault
from harness_lab.scenarios.limits import INT_MAX
from harness_lab.scenarios.model_base import SpecModel, empty, exactly_one
from harness_lab.scenarios.patterns import (
    GainsPattern,
    MappingPattern,
    RecordsPattern,
    RejectionsPattern,
    RelationText,
    SseKindsPattern,
    SsePattern,
    SseStatesPattern,
    StatusesPattern,
    TerminationsPattern,
    TimelinePattern,
    TraceItemsPattern,
    TracePattern,
)
from harness_lab.states import (
    CancellationReason,
    CollectionState,
    DiagnosisStopReason,
    FallbackType,
    IntentType,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    SseState,
    StoredRunStatus,
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
CallLatency = Annotated[Seconds | None, Field(description=(
    "Virtual seconds this call takes (default: the `latency` default of its call kind)."))]
"""A step's ``latency_s``."""
CallError = Annotated[str | None, Field(description=(
    "Fail technically with this provider error message."))]
"""A step's ``error``."""

Matcher = Literal["method", "uri", "url", "scheme", "host", "port", "path", "query", "raw_body",
                  "body", "headers", "json_body"]
MATCHERS: tuple[str, ...] = get_args(Matcher)
"""The request matchers a cassette replay knows (vcrpy's, plus ``json_body``)."""


def lower_fault_kinds(faults: Any) -> Any:
    """A list of fault mappings with each ``kind`` lower-cased (anything else as it is): fault
    kinds in any case, like every other enum value of the file."""
    if not isinstance(faults, list):
        return faults
    return [{**f, "kind": f["kind"].lower()}
            if isinstance(f, dict) and isinstance(f.get("kind"), str) else f
            for f in faults]


Faults = Annotated[list[Fault], BeforeValidator(lower_fault_kinds)]
"""A list of faults, each ``kind`` in any case."""


class UsageSpec(SpecModel):
    """Tokens one call consumes."""

    input: Count = 0
    """Input (prompt) tokens."""
    output: Count = 0
    """Output (completion) tokens."""


CallUsage = Annotated[UsageSpec | None, Field(description=(
    "Tokens this call consumes, charged to the token budget."))]
"""A step's ``usage``."""


class FactSpec(SpecModel):
    """A fact citing invocation ids (``inv-N`` or full ids)."""

    statement: str
    """What the fact states."""
    citations: list[str] = Field(min_length=1)
    """Invocation ids the fact cites (`inv-N` or full ids); at least one."""


class EvidenceSpec(SpecModel):
    """One evidence reference of a conclusion."""

    invocation_id: str
    """The invocation the evidence comes from (`inv-N` or a full id)."""
    claim: str
    """What the evidence supports."""


class ProgressSpec(SpecModel):
    """A progress report (see ``docs/protocol.md``)."""

    assessment: Literal["GAINED", "NO_GAIN"] | None = None
    """The model's own assessment of this step: GAINED or NO_GAIN."""
    facts: list[FactSpec] = empty(list)
    """Facts verified so far, each citing invocations."""
    missing_info: list[str] = empty(list)
    """What is still missing."""
    next: str | None = None
    """What the model means to do next."""


class DraftSpec(SpecModel):
    """A DiagnosisDraft."""

    conclusion: str | None = None
    """The diagnosis conclusion; null for a draft without one."""
    evidence: list[EvidenceSpec] = empty(list)
    """Evidence references supporting the conclusion."""
    findings: list[FactSpec] = empty(list)
    """Verified findings, each citing invocations."""
    missing_info: list[str] = empty(list)
    """What the diagnosis still lacks."""
    recommendations: list[str] = empty(list)
    """Recommended next actions."""


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
    """Request a call of this tool (one of the scenario's `tools`)."""
    scope: dict[str, Any] = empty(dict)
    """The scope (arguments) of the tool request."""
    call_id: str | None = None
    """The call id of the tool request (default: generated)."""
    progress: ProgressSpec | None = None
    """A progress report sent beside a tool request or a draft."""
    draft: DraftSpec | None = None
    """Reply with this diagnosis draft."""
    report: ProgressSpec | None = None
    """Reply with a progress report alone."""
    invalid_json: str | None = None
    """Reply with this raw text, which is not valid JSON."""
    schema_invalid: dict[str, Any] | None = None
    """Reply with this raw draft object, which the draft schema refuses."""
    empty: bool = False
    """Reply with nothing (an empty reply)."""
    error: CallError = None
    latency_s: CallLatency = None
    usage: CallUsage = None

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
    """The repaired draft."""
    invalid_json: str | None = None
    """Reply with this raw text, which is not valid JSON."""
    error: CallError = None
    latency_s: CallLatency = None
    usage: CallUsage = None

    @model_validator(mode="after")
    def _one_action(self) -> RepairStepSpec:
        return exactly_one(self, ("draft", "invalid_json", "error"),
                           "a repair step needs exactly one of draft, invalid_json, error")


class RouteStepSpec(SpecModel):
    """One router reply: an intent or an error."""

    intent: IntentType | None = None
    """The intent the router decides."""
    error: CallError = None
    latency_s: CallLatency = None
    usage: CallUsage = None

    @model_validator(mode="after")
    def _one_action(self) -> RouteStepSpec:
        return exactly_one(self, ("intent", "error"),
                           "a router step needs exactly one of intent, error")


class GuardStepSpec(SpecModel):
    """One SemanticGuard verdict (UNAVAILABLE is a provider error)."""

    verdict: SemanticVerdict
    """The SemanticGuard verdict (UNAVAILABLE fails the call technically)."""
    rationale: str = ""
    """The guard's rationale text."""
    latency_s: CallLatency = None
    usage: CallUsage = None


class AnswerSpec(SpecModel):
    """The responder (SYSTEM_CHAT and KNOWLEDGE_QUERY answers)."""

    text: str = "A scripted answer."
    """The answer of SYSTEM_CHAT and KNOWLEDGE_QUERY requests."""
    error: CallError = None
    latency_s: CallLatency = None
    usage: CallUsage = None


class RetrieverSpec(SpecModel):
    """The knowledge retriever."""

    passages: list[str] = ["A scripted knowledge passage."]
    """The knowledge passages every retrieval returns."""
    error: CallError = None
    latency_s: CallLatency = None


class ToolResultSpec(SpecModel):
    """One tool result: exactly one of the kinds."""

    evidence: list[dict[str, Any]] | None = None
    """The tool finds these items (JSON objects)."""
    no_evidence: bool = False
    """The tool answers with no items (NO_EVIDENCE)."""
    error: str | None = None
    """The backend fails in execution with this message."""
    oversize: int | None = Field(None, gt=0, le=INT_MAX)
    """The tool answers one item claiming this many bytes, beyond the projection limit."""
    unprojectable: bool = False
    """The backend answers something the projection cannot read."""
    bytes: Count | None = None
    """The result size in bytes, charged to the byte budget (default: the compact JSON size of the
    items)."""
    latency_s: Seconds | None = None
    """Virtual seconds this result takes (default: the tool's `latency_s`, then `latency.tool`)."""

    @model_validator(mode="after")
    def _one_kind(self) -> ToolResultSpec:
        return exactly_one(self, ("evidence", "no_evidence", "error", "oversize",
                                  "unprojectable"),
                           "a tool result needs exactly one of evidence, no_evidence, error, "
                           "oversize, unprojectable")


class ScopedResultSpec(SpecModel):
    """Results for one exact scope."""

    scope: dict[str, Any]
    """The exact scope these results answer (key order does not matter)."""
    result: ToolResultSpec | list[ToolResultSpec]
    """One result, served for this scope forever, or a list consumed call by call."""


class ToolSpec(SpecModel):
    """A scripted read-only tool."""

    evidence: bool = True
    """Whether the tool's results are evidence (a conclusion may cite them)."""
    read_only: bool = True
    """Whether the tool is read-only; a tool that is not is refused at preflight (READ_ONLY)."""
    required: list[str] = empty(list)
    """Scope keys the tool requires; a request without one is refused (REQUEST)."""
    latency_s: Seconds | None = None
    """Virtual seconds each call takes unless its result gives its own."""
    default: ToolResultSpec | None = None
    """The result once `script` is used up, forever."""
    script: list[ToolResultSpec] = empty(list)
    """Results played call by call, in order."""
    by_scope: list[ScopedResultSpec] = empty(list)
    """Results for exact scopes, looked up before `script`."""


def _fresh(model: type[SpecModel]) -> Any:
    """A field defaulting to a new ``model()``: validation would deep-copy a default instance
    for every file, which costs several times the factory. The schema still shows it."""
    return Field(default_factory=model,
                 json_schema_extra={"default": model().model_dump(mode="json")})


class BudgetSpec(SpecModel):
    """Hard limits; ``null`` is unlimited."""

    model_calls: Count | None = 16
    """Diagnosis-model calls allowed; null is unlimited."""
    tool_calls: Count | None = 8
    """Tool calls allowed; null is unlimited."""
    tokens: Count | None = 64_000
    """Tokens allowed over every call; null is unlimited."""
    bytes: Count | None = 1_000_000
    """Tool-result bytes allowed; null is unlimited."""


class PolicySpec(SpecModel):
    """The SPEC §5 policy settings."""

    timeout_progress_fallback: bool = False
    """On timeout, release the safe progress gathered so far as a fallback."""
    user_cancel_notice: UserCancelNotice = UserCancelNotice.FAILURE
    """What the client gets when the user cancels: a failure notice or nothing."""
    require_progress_reports: bool = True
    """Whether each model step after the first must carry a progress report."""
    deadline_detection: DeadlineDetection = DeadlineDetection.BOUNDARY
    """How a passed deadline ends the run: `boundary` (the next boundary check finds it, so a
    cancel arriving before that check wins) or `instant` (it counts from its own instant)."""


class ConfigSpec(SpecModel):
    """The harness configuration of the scenario."""

    deadline_s: float = Field(60.0, gt=0)
    """The run's deadline in virtual seconds."""
    budget: BudgetSpec = _fresh(BudgetSpec)
    """Hard limits of the run."""
    no_gain_threshold: int = Field(3, ge=1, le=INT_MAX)
    """Consecutive NO_GAIN tool results that saturate collection."""
    protocol_violation_threshold: int = Field(3, ge=1, le=INT_MAX)
    """Consecutive progress-protocol violations that stop collection."""
    history_limit: Count = 6
    """Earlier turns the router sees."""
    projection_max_items: int = Field(50, ge=1, le=INT_MAX)
    """Items of a tool result the projection keeps."""
    projection_max_bytes: int = Field(65_536, ge=1, le=INT_MAX)
    """Bytes beyond which a tool result is refused (SIZE)."""
    authorized_tools: list[str] | None = None
    """Tools the run may call; null authorises every tool of the scenario."""
    policy: PolicySpec = _fresh(PolicySpec)
    """The policy settings (SPEC section 5)."""
    defects: list[Defect] = empty(list)
    """Seeded bugs, for testing the invariants (see harness_lab.defects)."""


def _default_latency(kind: str) -> Any:
    return Field(0.0, description=f"Default virtual seconds of a {kind} call that gives no "
                                  "latency of its own.")


class LatencySpec(SpecModel):
    """Default virtual latency (seconds) per call kind, when a step does not give one."""

    router: Seconds = _default_latency("router")
    responder: Seconds = _default_latency("responder")
    retriever: Seconds = _default_latency("retriever")
    model: Seconds = _default_latency("model")
    tool: Seconds = _default_latency("tool")
    repair: Seconds = _default_latency("repair")
    guard: Seconds = _default_latency("guard")


RouterField = IntentType | RouteStepSpec | list[RouteStepSpec]
GuardField = SemanticVerdict | GuardStepSpec | list[GuardStepSpec]


class RecordedToolSpec(SpecModel):
    """A tool backed by an HTTP JSON API, as the recorded model sees it."""

    description: str
    """The tool's description, as the recorded model sees it."""
    parameters: dict[str, Any] = {"type": "object"}
    """The JSON Schema of the tool's parameters."""
    url: str
    """The base URL of the tool's HTTP JSON API."""
    path: str = "/query"
    """The path the tool's requests are posted to."""
    required: list[str] = empty(list)
    """Scope keys the tool requires."""
    evidence: bool = True
    """Whether the tool's results are evidence."""


class RecordedSpec(SpecModel):
    """Recorded (or live) OpenAI-compatible components instead of the scripted ones.

    The cassette (``cassette:``, relative to the scenario file) is replayed strictly with
    record mode ``none``; ``harness-lab record`` writes it. Recordings carry no timing, so
    every call takes the scenario's ``latency`` defaults.
    """

    base_url: str
    """The OpenAI-compatible endpoint (used when recording; a replay never calls it)."""
    model: str = "gpt-4o-mini"
    """The model name sent with each request."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key (used when recording)."""
    tools: dict[str, RecordedToolSpec] = empty(dict)
    """Tools backed by HTTP JSON APIs, by name."""
    match_on: list[Matcher] = ["method", "path", "query", "json_body"]
    """How a replayed request is matched to a recorded one (vcrpy matchers, plus json_body)."""


class TurnSpec(SpecModel):
    """An earlier turn of the same session, run through the harness before the scenario's."""

    query: str
    """The user's query of this earlier turn."""
    router: RouterField = IntentType.DIAGNOSIS
    """The router's intent (or steps) for this turn."""
    model: list[ModelStepSpec] = empty(list)
    """The diagnosis model's steps for this turn."""
    guard: GuardField | None = None
    """The SemanticGuard verdict(s) for this turn (default: the file's `guard`)."""
    repair: list[RepairStepSpec] = empty(list)
    """The EvidenceRepair steps for this turn."""
    faults: Faults = empty(list)
    """Faults injected into this turn's run (located in it, timed from its start); each must
    fire. After a crash the session goes on in a restarted process on the same store."""
    expect: Expect | None = None
    """What this earlier turn must show."""


class Expect(SpecModel):
    """What the run must show; every field is optional."""

    run_state: RunState | None = None
    """The run's final state."""
    release_outcome: ReleaseOutcome | None = None
    """What was released to the client."""
    fallback_type: FallbackType | Literal["none"] | None = None
    """The fallback released, or none."""
    db_status: StoredRunStatus | Literal["none"] | None = None
    """The stored run status (RUNNING only for a crashed run), or none when the store holds
    no row of the run."""
    intent: IntentType | None = None
    """The intent the router decided."""
    termination_reason: CancellationReason | Literal["completed"] | None = None
    """The run's termination reason: the CancellationReason that ended it, or completed."""
    stop_reason: DiagnosisStopReason | Literal["none"] | None = None
    """Why diagnosis collection stopped, or none."""
    collection_state: CollectionState | None = None
    """The evidence-collection state at the end."""
    semantic_verdict: SemanticVerdict | Literal["none"] | None = None
    """The SemanticGuard verdict, or none."""
    sse_state: SseState | None = None
    """The SSE session's final state."""
    statuses: StatusesPattern | None = None
    """The ChatApplicationStatus values of the `status` events, in order (a pattern)."""
    sse: SsePattern | None = None
    """The SSE events with their payloads, each {kind, t, data} (a pattern; a string item is
    a kind, so a list of kinds is the exact sequence of kinds)."""
    trace: TracePattern | None = None
    """The trace events, each {type, t, phase, status, detail} (a pattern; a string item is
    a type, so a list of types is the exact sequence of types)."""
    timeline: TimelinePattern | None = None
    """The trace and SSE events in the one order they happened, each {event, source, t}
    (a pattern; a string item is a trace type or an SSE kind)."""
    sse_states: SseStatesPattern | None = None
    """Every state the SSE session entered, each {state, t}, NEW first (a pattern; a string
    item is a state)."""
    sse_refused: SseKindsPattern | None = None
    """The kinds of the SSE sends the session refused (a closed stream, a failed send, a
    second result), in order (a pattern)."""
    trace_contains: TraceItemsPattern | None = None
    """Trace events that must occur in this order, others between (`trace: {$in_order: ...}`)."""
    trace_excludes: TraceItemsPattern | None = None
    """Trace events that must not occur (`trace: {$absent: ...}`)."""
    tool_calls: Count | None = None
    """Tool calls made."""
    tool_calls_by_name: dict[str, int] | None = None
    """Tool calls made, per tool."""
    model_calls: Count | None = None
    """Diagnosis-model calls made."""
    rejections: RejectionsPattern | None = None
    """The preflight rejections, each {tool, scope, reason, message, t, call_id} (a pattern;
    a string item is a reason)."""
    invocations: RecordsPattern | None = None
    """The canonical invocations, each {invocation_id, tool, scope, status, evidence_status,
    error_code, error, items, size_bytes, information_gain, started_at, finished_at,
    call_id} (a pattern; a string item is a tool)."""
    progress: MappingPattern | None = None
    """The ProgressSnapshot at the end: {facts: [{statement, citations}], missing_info,
    steps} (a pattern)."""
    row: MappingPattern | None = None
    """The stored run row, its JSON columns (answer_json, published_result) parsed (a
    pattern)."""
    usage: MappingPattern | None = None
    """What the run used: {model_calls, tool_calls, tokens, input_tokens, output_tokens,
    bytes} (a pattern)."""
    headroom: MappingPattern | None = None
    """What the budget had left at the end: {model_calls, tool_calls, tokens, bytes}, each
    never below 0, null where the kind has no limit (a pattern)."""
    routing: RecordsPattern | None = None
    """What each router call received: {query, history: [{run_id, query, intent, answer}],
    previous_turn: {run_id, query, conclusion} or null} (a pattern)."""
    agent_requests: RecordsPattern | None = None
    """What each diagnosis-model call received: {step, stop_required, previous_turn,
    observations, notice} (a pattern)."""
    guard_requests: RecordsPattern | None = None
    """What each SemanticGuard call received: {query, draft: {conclusion, evidence,
    findings, missing_info, recommendations}, evidence: [the cited invocation records]} (a
    pattern)."""
    repair_requests: RecordsPattern | None = None
    """What each EvidenceRepair call received: {query, draft, problems, citable} (a
    pattern)."""
    stop_required_deliveries: Count | None = None
    """How many diagnosis-model calls were told STOP_REQUIRED."""
    terminations: TerminationsPattern | None = None
    """Every terminal transition recorded, each {state, reason, detail, t}: reason is the
    CancellationReason that ended the run, or completed (a pattern)."""
    relations: list[RelationText] | None = None
    """Relations between observed values that must hold, each LEFT OP RIGHT over paths
    like trace[RUN_FINISHED].t (OP one of <, <=, ==, !=, >=, >)."""
    discarded: Count | None = None
    """Late results discarded."""
    previous_turn: str | Literal["none"] | None = None
    """The run id of the previous turn the model saw, or none."""
    published_result: bool | None = None
    """Whether the run published a result for later turns."""
    crashed: bool | None = None
    """Whether the host process crashed."""
    failure_code: str | None = None
    """The `code` of the public failure event."""
    error: str | None = None
    """The error the run's record carries (never public: what went wrong inside, such as
    the store's refusal), or none."""
    done_outcome: ReleaseOutcome | Literal["none"] | None = None
    """The outcome of the public done event, or none."""
    stop_required_delivered: bool | None = None
    """Whether a stop-required notice reached the model."""
    evidence_repaired: bool | None = None
    """Whether the release that decided the run went through EvidenceRepair (doc §9)."""
    gains: GainsPattern | None = None
    """Every InformationGain decided, in order (a pattern)."""
    violations: list[str] = empty(list)
    """Invariants the run is expected to break (seeded defects; what a store that refused
    the run left)."""


class Variant(SpecModel):
    """One named variant of a ``matrix`` list: dotted-path overrides and expectations."""

    name: Name
    """The variant's name; the scenario becomes `name[variant]`."""
    set: dict[str, Any] = empty(dict)
    """Values to set, by dotted path (`config.deadline_s`, `faults.0.at_s`)."""
    expect: Expect | None = None
    """Expectations of this variant, over the file's."""


class WhenSpec(SpecModel):
    """Expectations applying to the product-matrix variants whose values match ``when``."""

    when: dict[str, Any]
    """Matrix axis values (by axis name) the variants must have."""
    expect: Expect
    """Expectations of the matching variants, over the file's."""


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


def check_name(name: str) -> str:
    """``name`` when it holds no control character (an escape sequence, a carriage return, a
    bidi override): a name is printed on terminals and in pytest's test ids; else ValueError."""
    if name.isprintable():  # the usual name, at C speed (a sweep validates it per point)
        return name
    for position, char in enumerate(name):
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            raise ValueError(f"the name holds the control character {char!r} (character "
                             f"{position + 1}); it is printed on terminals and in test ids: "
                             "write it in plain text")
    return name


Name = Annotated[str, AfterValidator(check_name)]
Tag = Annotated[str, AfterValidator(check_tag)]
Axis = Annotated[list[Any], Field(min_length=1)]


class Scenario(SpecModel):
    """One scenario file (or one variant of it, after matrix expansion)."""

    model_config = ConfigDict(populate_by_name=True)
    schema_url: str | None = Field(None, alias="$schema")
    """The JSON Schema of the file, for editors (``harness-lab schema``); not read by runs."""
    name: Name
    """A unique name (kebab-case); matrix variants become `name[variant]`."""
    description: str
    """One line: what the file demonstrates."""
    tags: list[Tag] = empty(list)
    """Tags; each becomes a pytest marker (`pytest -m tag`, `run --tag tag`)."""
    case: str | None = None
    """A row of the document's outcome table (SPEC section 4) whose states are expected."""
    query: str = "Why is the checkout service slow?"
    """The user's query."""
    session_id: str | None = None
    """The session id (default: a fresh one)."""
    turns: list[TurnSpec] = empty(list)
    """Earlier turns of the same session, run before this one."""
    config: ConfigSpec = _fresh(ConfigSpec)
    """The harness configuration."""
    latency: LatencySpec = _fresh(LatencySpec)
    """Default virtual latency per call kind."""
    router: RouterField = IntentType.DIAGNOSIS
    """The router's intent, one step, or steps call by call."""
    model: list[ModelStepSpec] = empty(list)
    """The diagnosis model's steps, call by call."""
    tools: dict[str, ToolSpec] = empty(dict)
    """Scripted read-only tools, by name."""
    guard: GuardField = SemanticVerdict.SUPPORTED
    """The SemanticGuard verdict, one step, or steps call by call."""
    repair: list[RepairStepSpec] = empty(list)
    """The EvidenceRepair steps, call by call."""
    responder: AnswerSpec = _fresh(AnswerSpec)
    """The responder of SYSTEM_CHAT and KNOWLEDGE_QUERY requests."""
    retriever: RetrieverSpec = _fresh(RetrieverSpec)
    """The retriever of KNOWLEDGE_QUERY requests: its passages, or its error."""
    cassette: str | None = None
    """The cassette recorded components replay from (relative to this file)."""
    recorded: RecordedSpec | None = None
    """Recorded (OpenAI-compatible) components instead of the scripted ones."""
    faults: Faults = empty(list)
    """Faults injected into the run; each must fire."""
    expect: Expect = _fresh(Expect)
    """What the run must show."""
    snapshot: bool = False
    """Compare the run's whole observation with its snapshot in `__snapshots__/` beside the
    file (written by `harness-lab run --update-snapshots`)."""
    matrix: list[Variant] | dict[str, Axis] | None = None
    """Variants: a list of named overrides, or a mapping of axes whose product is run."""
    expect_when: list[WhenSpec] = empty(list)
    """Expectations of the product-matrix variants whose values match."""
    sweep: SweepBlock | None = None
    """The sweep of `harness-lab sweep` (ignored by `run`)."""


TurnSpec.model_rebuild()
