"""The diagnosis runtime: the ReAct loop over the tool boundary (doc §6-§8).

:class:`DiagnosisAgent` ends in exactly one of the two legal shapes of
:class:`DiagnosisAgentExecution` (Completed with a draft, or Controlled Stop with a stop
reason), or raises: :class:`EmptyDraft`, :class:`InvalidDraftJson`,
:class:`SchemaInvalidDraft` (each carrying the ProgressSnapshot), :class:`ModelFailure`, or
:class:`RunAborted`.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

import simpy
from pydantic import ValidationError

from harness_lab.core.context import RunContext
from harness_lab.defects import Defect
from harness_lab.diagnosis.collection import CollectionController, exhaust_budget
from harness_lab.diagnosis.progress import ProgressSnapshot, ProgressTracker, check_report, verified
from harness_lab.diagnosis.schema import DiagnosisDraft, decode_output, refusal, validator_of
from harness_lab.errors import (
    BudgetExceeded,
    DraftContractError,
    EmptyDraft,
    InvalidDraftJson,
    ModelFailure,
    ProviderError,
    SchemaInvalidDraft,
)
from harness_lab.frozen import value_class
from harness_lab.ports import (
    AgentRequest,
    CallKind,
    DiagnosisModel,
    ModelReply,
    Observation,
    PreviousTurn,
    ToolCallRequest,
)
from harness_lab.states import (
    DiagnosisStopReason,
    InformationGain,
    InvocationStatus,
    PreflightReason,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.tools.boundary import ToolBoundary

__all__ = ["DiagnosisAgent", "DiagnosisAgentExecution"]


_ENVELOPE_KEYS = frozenset({"progress", "draft"})
_NO_ENVELOPE: Mapping[str, Any] = {}
_parse_draft = validator_of(DiagnosisDraft)


@dataclass(frozen=True, slots=True, init=False)
class DiagnosisAgentExecution:
    """The agent's result: exactly one of ``draft`` and ``stop_reason`` is set (doc §6)."""

    draft: DiagnosisDraft | None
    stop_reason: DiagnosisStopReason | None
    snapshot: ProgressSnapshot

    def __init__(self,
                 draft: DiagnosisDraft | None, stop_reason: DiagnosisStopReason | None,
                 snapshot: ProgressSnapshot) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "draft", draft)
        object.__setattr__(self, "stop_reason", stop_reason)
        object.__setattr__(self, "snapshot", snapshot)
        self.__post_init__()

    def __post_init__(self) -> None:
        if (self.draft is None) == (self.stop_reason is None):
            raise ValueError("a DiagnosisAgentExecution is Completed (draft) xor "
                             "Controlled Stop (stop_reason)")


value_class(DiagnosisAgentExecution)  # see frozen.py


class DiagnosisAgent:
    """Runs one diagnosis: model steps, tool requests, progress reports, until a result."""

    __slots__ = ("ctx", "model", "boundary", "collection", "query", "previous_turn", "progress",
                 "steps", "_pending", "_awaiting_report", "_notice", "_observations")

    def __init__(self, ctx: RunContext, model: DiagnosisModel, boundary: ToolBoundary,
                 collection: CollectionController, query: str,
                 previous_turn: PreviousTurn | None = None) -> None:
        self.ctx = ctx
        self.model = model
        self.boundary = boundary
        self.collection = collection
        self.query = query
        self.previous_turn = previous_turn
        self.progress = ProgressTracker()
        self.steps = 0
        self._pending: list[str] = []  # READY invocations whose gain the agent must judge
        self._awaiting_report = False
        self._notice: str | None = None
        self._observations: list[Observation] = []

    def snapshot(self) -> ProgressSnapshot:
        """The ProgressSnapshot now (verified facts only)."""
        return self.progress.snapshot(self.steps)

    def run(self) -> Generator[simpy.Event, Any, DiagnosisAgentExecution]:
        """The ReAct loop; ``yield from`` it inside a simpy process."""
        while True:
            try:
                self.ctx.budget.reserve_model_call()
            except BudgetExceeded as exc:
                return self._budget_stop(exc)
            # delivered only with a model call that the budget admitted
            stop_required = self.collection.take_stop_required()
            if stop_required:
                self._notice = "STOP_REQUIRED: collection is saturated; write your draft now"
            reply = yield from self._model_step(stop_required)
            # the reply is read before its step is traced, so the trace says what it was
            envelope: Mapping[str, Any] = _NO_ENVELOPE
            draft: DiagnosisDraft | None = None
            refused: DraftContractError | None = None
            whole = False  # the whole reply was refused, not only its draft
            try:
                envelope = self._parse(reply)
                draft, refused = self._read_draft(reply, envelope)
            except DraftContractError as exc:
                refused, whole = exc, True
            self._trace_step(reply, stop_required, refused)
            try:
                self.ctx.budget.check_tokens()
            except BudgetExceeded as exc:
                return self._budget_stop(exc)
            if whole and refused is not None:
                raise refused
            self._handle_progress(envelope.get("progress"))
            if refused is not None:
                # the draft is discarded; the snapshot holds this step's verified progress
                refused.progress = self.snapshot()
                raise refused
            if reply.tool_call is not None:
                if self.collection.stop_required_delivered:
                    return self._ignored_stop(reply.tool_call)
                try:
                    obs = yield from self.boundary.invoke(reply.tool_call)
                except BudgetExceeded as exc:
                    return self._budget_stop(exc)
                self._observe(obs)
                continue
            if draft is not None:
                return self._complete(draft)
            if stop_required:
                return self._stop()

    # -- one model step ---------------------------------------------------------------------

    def _model_step(self, stop_required: bool) -> Generator[simpy.Event, Any, ModelReply]:
        ctx = self.ctx
        self.steps += 1
        request = AgentRequest(ctx.run_id, self.query, self.steps, tuple(self._observations),
                               tuple(self.boundary.tools), stop_required, self.previous_turn,
                               self._notice)
        self._notice = None
        self._observations = []
        steps = self.steps
        try:
            # the step's success is traced once its reply is read (``_trace_step``)
            reply: ModelReply = yield from ctx.provider_call(
                CallKind.MODEL, "diagnosis", lambda: self.model.step(request),
                TraceEventType.AGENT_MODEL_STEP, None, failed={"step": steps})
        except ProviderError as exc:
            raise ModelFailure(f"diagnosis model failed at step {steps}: {exc}") from exc
        return reply

    def _trace_step(self, reply: ModelReply, stop_required: bool,
                    refused: DraftContractError | None) -> None:
        """AGENT_MODEL_STEP: OK with the reply's action, or REJECTED when the draft contract
        refused the reply (doc §6), with the contract error's kind and reason."""
        call = reply.tool_call
        tool = call.name if call is not None else None
        if refused is None:
            self.ctx.tracer.emit(TraceEventType.AGENT_MODEL_STEP, TraceEventStatus.OK,
                                 {"step": self.steps,
                                  "action": "tool" if call is not None else "reply",
                                  "tool": tool, "stop_required": stop_required})
            return
        self.ctx.tracer.emit(TraceEventType.AGENT_MODEL_STEP, TraceEventStatus.REJECTED,
                             {"step": self.steps, "action": "refused", "tool": tool,
                              "stop_required": stop_required, "kind": refused.kind,
                              "reason": str(refused)})

    def _parse(self, reply: ModelReply) -> Mapping[str, Any]:
        """The reply's JSON envelope; raise the draft-contract exceptions of doc §6."""
        snap = self.snapshot
        payload = reply.payload
        if payload is None and reply.content is not None and reply.content.strip():
            try:
                payload = decode_output(reply.content)
            except ValueError as exc:
                if reply.tool_call is None:
                    raise InvalidDraftJson(f"step {self.steps}: output is not JSON ({exc})",
                                           snap()) from exc
                payload = None
        if payload is None:
            if reply.tool_call is None:
                raise EmptyDraft(f"step {self.steps}: neither a draft nor an action", snap())
            return {}
        # a dict is tested first: isinstance against the Mapping ABC runs Python code
        if (type(payload) is not dict and not isinstance(payload, Mapping)
                or not set(payload) <= _ENVELOPE_KEYS):
            raise SchemaInvalidDraft(
                f"step {self.steps}: output must be an object with keys progress/draft", snap())
        if "draft" in payload and reply.tool_call is not None:
            raise SchemaInvalidDraft(f"step {self.steps}: a reply is a draft or an action, "
                                     "not both", snap())
        if reply.tool_call is None and "draft" not in payload and "progress" not in payload:
            raise EmptyDraft(f"step {self.steps}: neither a draft nor an action", snap())
        return payload

    # -- the progress protocol ----------------------------------------------------------------

    def _handle_progress(self, raw: Any) -> None:
        policy = self.ctx.config.policy
        if raw is None and (not self._awaiting_report or not policy.require_progress_reports
                            or Defect.MISSING_REPORT_NOT_VIOLATION in self.ctx.config.defects):
            self._pending.clear()
            return
        report, kind, problem = check_report(raw, self.boundary.ready_ids(), bool(self._pending))
        if report is None:
            self._pending.clear()  # protocol errors produce no InformationGain (doc §8.2)
            self._awaiting_report = False
            self._notice = f"progress protocol violated: {problem}"
            stopped = self.collection.record_violation()
            self.ctx.tracer.emit(TraceEventType.PROGRESS_PROTOCOL_VIOLATION,
                                 TraceEventStatus.REJECTED,
                                 {"step": self.steps, "kind": kind, "problem": problem,
                                  "violation_streak": self.collection.violation_streak})
            if stopped:
                self._collection_stop()
            return
        self.collection.record_valid_report()
        self.progress.accept(report)
        self._awaiting_report = False
        assessment = report.assessment  # a valid report has one whenever a gain is pending
        if assessment is not None:
            for invocation_id in self._pending:
                self._gain(invocation_id, assessment)
        self._pending.clear()

    def _observe(self, obs: Observation) -> None:
        self._observations.append(obs)
        self._awaiting_report = True
        invocation_id = obs.invocation_id
        if invocation_id is not None and obs.status is InvocationStatus.READY:
            if obs.needs_assessment:  # the agent's next valid report decides its gain
                self._pending.append(invocation_id)
            else:  # NO_EVIDENCE, or an exact duplicate tool_name + normalized_scope (doc §8.2)
                self._gain(invocation_id, InformationGain.NO_GAIN)
        elif (obs.status is InvocationStatus.ERROR
              and Defect.ERROR_RESETS_NO_GAIN in self.ctx.config.defects):
            self.collection.no_gain_streak = 0  # seeded: a failure breaks the streak

    def _gain(self, invocation_id: str, gain: InformationGain) -> None:
        self.boundary.set_gain(invocation_id, gain)
        if self.collection.record_gain(gain):
            self._collection_stop()

    def _collection_stop(self) -> None:
        c = self.collection
        self.ctx.tracer.emit(TraceEventType.COLLECTION_STOP, TraceEventStatus.OK,
                             {"reason": c.stop_reason.value if c.stop_reason else None,
                              "no_gain_streak": c.no_gain_streak,
                              "violation_streak": c.violation_streak})

    # -- endings ------------------------------------------------------------------------------

    def _read_draft(self, reply: ModelReply, envelope: Mapping[str, Any]
                    ) -> tuple[DiagnosisDraft | None, DraftContractError | None]:
        """The reply's draft, or the contract error refusing it (doc §6); neither without one.

        The error's snapshot is taken again when it is raised, after this step's progress.
        """
        if reply.tool_call is not None or "draft" not in envelope:
            return None, None
        try:
            draft = _parse_draft(envelope["draft"])
        except ValidationError as exc:
            return None, SchemaInvalidDraft(
                f"step {self.steps}: draft invalid {refusal(exc, 'draft')}")
        if draft.is_empty:
            return None, EmptyDraft(f"step {self.steps}: the draft is empty")
        return draft, None

    def _complete(self, draft: DiagnosisDraft) -> DiagnosisAgentExecution:
        self.progress.add_facts(verified(draft.findings, self.boundary.ready_ids()))
        return DiagnosisAgentExecution(draft, None, self.snapshot())

    def _stop(self) -> DiagnosisAgentExecution:
        """The Controlled Stop after STOP_REQUIRED: collection saturated, and its reason."""
        reason = self.collection.stop_reason
        assert reason is not None, "STOP_REQUIRED is delivered only once collection saturated"
        return DiagnosisAgentExecution(None, reason, self.snapshot())

    def _ignored_stop(self, request: ToolCallRequest) -> DiagnosisAgentExecution:
        """A tool request after STOP_REQUIRED: refused, the loop ends as a Controlled Stop."""
        self.boundary.refuse(request, PreflightReason.SATURATED,
                             "tool requested after STOP_REQUIRED was delivered")
        return self._stop()

    def _budget_stop(self, exc: BudgetExceeded) -> DiagnosisAgentExecution:
        """A hard budget ran out: the run is exhausted, the loop ends as a Controlled Stop."""
        exhaust_budget(self.ctx, self.collection, exc)
        return DiagnosisAgentExecution(None, DiagnosisStopReason.BUDGET_LIMIT_REACHED,
                                       self.snapshot())
