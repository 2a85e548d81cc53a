"""The release pipeline: guards, one repair, and the release decision (doc §9-§10).

``DiagnosisReleaseResult`` only expresses SUCCESS or FALLBACK; when nothing safe can be
published the pipeline raises :class:`ReleaseFailed` and the application maps it to FAILED.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import simpy
from pydantic import ValidationError

from harness_lab.core.context import RunContext
from harness_lab.diagnosis.agent import DiagnosisAgentExecution
from harness_lab.diagnosis.data import draft_data
from harness_lab.diagnosis.progress import ProgressSnapshot, verified
from harness_lab.diagnosis.schema import DiagnosisDraft, Fact, parse_json_object
from harness_lab.errors import BudgetExceeded, ProviderError, ReleaseFailed
from harness_lab.frozen import value_class
from harness_lab.ports import (
    CallKind,
    EvidenceRepair,
    GuardReply,
    GuardRequest,
    ModelReply,
    RepairRequest,
    SemanticGuard,
)
from harness_lab.release.evidence import EvidenceCheck, EvidenceGuard
from harness_lab.release.fallback import fallback_content, report_content
from harness_lab.states import (
    CancellationReason,
    DiagnosisStopReason,
    FallbackType,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.tools.boundary import ToolBoundary

__all__ = ["ReleaseDecision", "ReleasePipeline"]

@dataclass(frozen=True, slots=True, init=False)
class ReleaseDecision:
    """What release publishes: SUCCESS with a report, or FALLBACK with a safe content."""

    outcome: ReleaseOutcome
    fallback_type: FallbackType | None
    content: Mapping[str, Any]
    verdict: SemanticVerdict | None = None
    repaired: bool = False
    draft: DiagnosisDraft | None = None
    problems: tuple[str, ...] = ()

    def __init__(self,
                 outcome: ReleaseOutcome, fallback_type: FallbackType | None,
                 content: Mapping[str, Any], verdict: SemanticVerdict | None = None,
                 repaired: bool = False, draft: DiagnosisDraft | None = None,
                 problems: tuple[str, ...] = ()) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "outcome", outcome)
        object.__setattr__(self, "fallback_type", fallback_type)
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "repaired", repaired)
        object.__setattr__(self, "draft", draft)
        object.__setattr__(self, "problems", problems)

    @property
    def conclusion(self) -> str | None:
        """The published conclusion (only a SUCCESS has one)."""
        value = self.content.get("conclusion")
        return value if isinstance(value, str) else None


value_class(ReleaseDecision)  # see frozen.py


class ReleasePipeline:
    """Releases a diagnosis execution, or a ProgressSnapshot after a draft-contract error."""

    __slots__ = ("ctx", "boundary", "repairer", "guard", "query")

    def __init__(self, ctx: RunContext, boundary: ToolBoundary, repairer: EvidenceRepair,
                 guard: SemanticGuard, query: str) -> None:
        self.ctx = ctx
        self.boundary = boundary
        self.repairer = repairer
        self.guard = guard
        self.query = query

    def release(self, execution: DiagnosisAgentExecution
                ) -> Generator[simpy.Event, Any, ReleaseDecision]:
        """Release a Completed or Controlled Stop execution (the doc §9 flow)."""
        budget_stop = (execution.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
                       and self.ctx.state is RunState.BUDGET_EXHAUSTED)
        if not budget_stop:
            self.ctx.check_active("release")
        draft = execution.draft
        if draft is None:
            return self.snapshot_fallback(execution.snapshot)
        if draft.conclusion is None:
            return self._no_conclusion(draft, execution.snapshot)
        try:
            decision: ReleaseDecision = yield from self._guard_chain(draft, execution.snapshot)
        except BudgetExceeded as exc:
            return self._budget_fallback(exc, draft, execution.snapshot)
        return decision

    def _budget_fallback(self, exc: BudgetExceeded, draft: DiagnosisDraft,
                         snapshot: ProgressSnapshot) -> ReleaseDecision:
        """A guard or repair reply spent the token budget: BUDGET_EXHAUSTED, then the snapshot.

        The conclusion is not published, since its guard chain did not finish within the
        budget; as for a budget stop in the loop (doc §3.3), the ProgressSnapshot's verified
        facts make an INSUFFICIENT_EVIDENCE fallback and without any the run fails.
        """
        ctx = self.ctx
        ctx.cancellation.cancel(CancellationReason.BUDGET_EXHAUSTED, str(exc))
        self.boundary.collection.budget_reached()
        ctx.tracer.emit(TraceEventType.BUDGET_EXHAUSTED, TraceEventStatus.OK,
                        {"kind": exc.kind, "value": exc.value, "limit": exc.limit})
        facts = verified(snapshot.facts, self.boundary.ready_ids())
        if not facts:
            self._failed("the token budget ran out during release, with no verified facts")
        return self._decide(FallbackType.INSUFFICIENT_EVIDENCE, facts, snapshot.missing_info,
                            draft=draft)

    def snapshot_fallback(self, snapshot: ProgressSnapshot) -> ReleaseDecision:
        """Controlled stop or draft-contract error: verified facts -> INSUFFICIENT_EVIDENCE."""
        facts = verified(snapshot.facts, self.boundary.ready_ids())
        self.ctx.tracer.emit(TraceEventType.EVIDENCE_GUARD_INITIAL,
                             TraceEventStatus.OK if facts else TraceEventStatus.FAILED,
                             {"mode": "snapshot", "verified_facts": len(facts)})
        if not facts:
            self._failed("no verified facts in the ProgressSnapshot")
        return self._decide(FallbackType.INSUFFICIENT_EVIDENCE, facts, snapshot.missing_info)

    def _no_conclusion(self, draft: DiagnosisDraft, snapshot: ProgressSnapshot
                       ) -> ReleaseDecision:
        ready = self.boundary.ready_ids()
        check = EvidenceGuard(self.boundary.record).check_references(draft)
        facts = _merge(verified(draft.findings, ready), verified(snapshot.facts, ready))
        self.ctx.tracer.emit(TraceEventType.EVIDENCE_GUARD_INITIAL,
                             TraceEventStatus.OK if check.valid else TraceEventStatus.FAILED,
                             {"mode": "references", "problems": list(check.problems),
                              "verified_facts": len(facts)})
        missing = draft.missing_info or snapshot.missing_info
        if facts:
            return self._decide(FallbackType.INSUFFICIENT_EVIDENCE, facts, missing)
        if missing:
            return self._decide(FallbackType.MISSING_REQUIRED_CONTEXT, (), missing)
        self._failed("a draft without conclusion, verified progress or missing information")

    def _guard_chain(self, draft: DiagnosisDraft, snapshot: ProgressSnapshot
                     ) -> Generator[simpy.Event, Any, ReleaseDecision]:
        guard = EvidenceGuard(self.boundary.record)
        check = guard.check_conclusion(draft)
        self._trace_check(TraceEventType.EVIDENCE_GUARD_INITIAL, check)
        repaired = False
        if not check.valid:
            fixed = yield from self._repair(draft, check)
            repaired = True
            if fixed is not None:
                check = guard.check_conclusion(fixed)
                self._trace_check(TraceEventType.EVIDENCE_GUARD_RECHECK, check)
            if fixed is None or not check.valid:
                return self._decide(FallbackType.EVIDENCE_VALIDATION_FAILED,
                                    self._facts(draft, snapshot),
                                    draft.missing_info or snapshot.missing_info,
                                    repaired=True, draft=draft, problems=check.problems)
            draft = fixed
        verdict = yield from self._semantic(draft)
        if verdict is SemanticVerdict.SUPPORTED:
            return self._decide(None, (), (), verdict=verdict, repaired=repaired, draft=draft)
        kind = (FallbackType.SEMANTIC_UNSUPPORTED if verdict is SemanticVerdict.UNSUPPORTED
                else FallbackType.SEMANTIC_UNAVAILABLE)
        return self._decide(kind, self._facts(draft, snapshot),
                            draft.missing_info or snapshot.missing_info,
                            verdict=verdict, repaired=repaired, draft=draft)

    def _repair(self, draft: DiagnosisDraft, check: EvidenceCheck
                ) -> Generator[simpy.Event, Any, DiagnosisDraft | None]:
        """Exactly one EvidenceRepair; None when it fails or returns no valid draft."""
        ctx = self.ctx
        request = RepairRequest(ctx.run_id, self.query, draft_data(draft),
                                check.problems, tuple(sorted(self.boundary.ready_ids())))
        ctx.tracer.emit(TraceEventType.EVIDENCE_REPAIR, TraceEventStatus.STARTED,
                        {"problems": list(check.problems)})
        try:
            reply: ModelReply = yield from ctx.call(
                CallKind.REPAIR, "evidence_repair", lambda: self.repairer.repair(request),
                TraceEventType.EVIDENCE_REPAIR)
        except ProviderError as exc:
            ctx.tracer.emit(TraceEventType.EVIDENCE_REPAIR, TraceEventStatus.FAILED,
                            {"error": str(exc)})
            return None
        ctx.budget.add_tokens(reply.usage.input_tokens, reply.usage.output_tokens)
        fixed, problem = _repaired_draft(reply)
        ctx.tracer.emit(TraceEventType.EVIDENCE_REPAIR,
                        TraceEventStatus.OK if fixed is not None else TraceEventStatus.FAILED,
                        {"error": problem} if problem else {})
        ctx.budget.check_tokens()  # a hard limit holds at every diagnosis boundary
        return fixed

    def _semantic(self, draft: DiagnosisDraft
                  ) -> Generator[simpy.Event, Any, SemanticVerdict]:
        ctx = self.ctx
        cited = []
        for ref in draft.evidence:
            rec = self.boundary.record(ref.invocation_id)
            if rec is not None:
                cited.append(rec.to_dict())
        request = GuardRequest(ctx.run_id, self.query, draft_data(draft),
                               tuple(cited))
        ctx.tracer.emit(TraceEventType.SEMANTIC_GUARD_ATTEMPT, TraceEventStatus.STARTED, {})
        try:
            reply: GuardReply = yield from ctx.call(
                CallKind.GUARD, "semantic_guard", lambda: self.guard.judge(request),
                TraceEventType.SEMANTIC_GUARD_DECISION)
        except ProviderError as exc:
            verdict = SemanticVerdict.UNAVAILABLE
            ctx.tracer.emit(TraceEventType.SEMANTIC_GUARD_DECISION, TraceEventStatus.FAILED,
                            {"verdict": verdict.value, "error": str(exc)})
            return verdict
        ctx.budget.add_tokens(reply.usage.input_tokens, reply.usage.output_tokens)
        verdict = SemanticVerdict.SUPPORTED if reply.supported else SemanticVerdict.UNSUPPORTED
        ctx.tracer.emit(TraceEventType.SEMANTIC_GUARD_DECISION, TraceEventStatus.OK,
                        {"verdict": verdict.value, "rationale": reply.rationale})
        ctx.budget.check_tokens()
        return verdict

    def _facts(self, draft: DiagnosisDraft, snapshot: ProgressSnapshot) -> tuple[Fact, ...]:
        ready = self.boundary.ready_ids()
        return _merge(verified(draft.findings, ready), verified(snapshot.facts, ready))

    def _trace_check(self, type_: TraceEventType, check: EvidenceCheck) -> None:
        self.ctx.tracer.emit(type_, TraceEventStatus.OK if check.valid else TraceEventStatus.FAILED,
                             {"mode": "conclusion", "problems": list(check.problems)})

    def _decide(self, kind: FallbackType | None, facts: tuple[Fact, ...],
                missing: tuple[str, ...], *, verdict: SemanticVerdict | None = None,
                repaired: bool = False, draft: DiagnosisDraft | None = None,
                problems: tuple[str, ...] = ()) -> ReleaseDecision:
        if kind is None:
            assert draft is not None
            outcome, content = ReleaseOutcome.SUCCESS, report_content(draft)
        else:
            outcome, content = ReleaseOutcome.FALLBACK, fallback_content(kind, facts, missing)
        self.ctx.tracer.emit(TraceEventType.RELEASE_DECISION, TraceEventStatus.OK,
                             {"outcome": outcome.value,
                              "fallback_type": kind.value if kind else None})
        return ReleaseDecision(outcome, kind, content, verdict, repaired, draft, problems)

    def _failed(self, why: str) -> NoReturn:
        self.ctx.tracer.emit(TraceEventType.RELEASE_DECISION, TraceEventStatus.FAILED,
                             {"outcome": ReleaseOutcome.FAILED.value, "reason": why})
        raise ReleaseFailed(why)


def _merge(*groups: tuple[Fact, ...]) -> tuple[Fact, ...]:
    seen: dict[str, Fact] = {}
    for group in groups:
        for fact in group:
            seen.setdefault(fact.statement, fact)
    return tuple(seen.values())


def _repaired_draft(reply: ModelReply) -> tuple[DiagnosisDraft | None, str | None]:
    payload: Any = reply.payload
    if payload is None and reply.content:
        try:
            payload = json.loads(reply.content)
        except json.JSONDecodeError as exc:
            return None, f"repair output is not JSON ({exc.msg})"
    if isinstance(payload, Mapping) and "draft" in payload:
        payload = payload["draft"]
    if payload is None:
        return None, "repair returned nothing"
    try:
        draft = parse_json_object(DiagnosisDraft, payload)
    except ValidationError as exc:
        return None, f"repaired draft invalid: {exc.errors()[0]['msg']}"
    if draft.conclusion is None:
        return None, "a repair must keep the conclusion"
    return draft, None
