"""The release pipeline: guards, one repair, and the release decision (doc §9-§10).

``DiagnosisReleaseResult`` only expresses SUCCESS or FALLBACK; when nothing safe can be
published the pipeline raises :class:`ReleaseFailed` and the application maps it to FAILED.
Each decision also states the RunState the run ends with (doc §10): SUCCESS for a normal
release, BUDGET_EXHAUSTED after a budget stop (:meth:`ReleasePipeline._budget_release`),
TIMED_OUT for the policy's timeout fallback.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import simpy
from pydantic import ValidationError

from harness_lab.core.context import RunContext
from harness_lab.defects import Defect
from harness_lab.diagnosis.agent import DiagnosisAgentExecution
from harness_lab.diagnosis.collection import exhaust_budget
from harness_lab.diagnosis.data import draft_data
from harness_lab.diagnosis.progress import ProgressSnapshot, verified
from harness_lab.diagnosis.schema import (
    DiagnosisDraft,
    Fact,
    decode_output,
    parse_json_object,
    refusal,
)
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
    """What release publishes: SUCCESS with a report, or FALLBACK with a safe content.

    ``run_state`` is the terminal RunState the release ends the run with (doc §10);
    ``repaired`` says whether the one EvidenceRepair was asked for.
    """

    outcome: ReleaseOutcome
    fallback_type: FallbackType | None
    content: Mapping[str, Any]
    verdict: SemanticVerdict | None = None
    repaired: bool = False
    draft: DiagnosisDraft | None = None
    problems: tuple[str, ...] = ()
    run_state: RunState = RunState.SUCCESS

    def __init__(self,
                 outcome: ReleaseOutcome, fallback_type: FallbackType | None,
                 content: Mapping[str, Any], verdict: SemanticVerdict | None = None,
                 repaired: bool = False, draft: DiagnosisDraft | None = None,
                 problems: tuple[str, ...] = (),
                 run_state: RunState = RunState.SUCCESS) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "outcome", outcome)
        object.__setattr__(self, "fallback_type", fallback_type)
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "repaired", repaired)
        object.__setattr__(self, "draft", draft)
        object.__setattr__(self, "problems", problems)
        object.__setattr__(self, "run_state", run_state)

    @property
    def conclusion(self) -> str | None:
        """The published conclusion (only a SUCCESS has one)."""
        value = self.content.get("conclusion")
        return value if isinstance(value, str) else None


value_class(ReleaseDecision)  # see frozen.py


class ReleasePipeline:
    """Releases a diagnosis execution, or a ProgressSnapshot after a draft-contract error."""

    __slots__ = ("ctx", "boundary", "repairer", "guard", "query", "guard_requests",
                 "repair_requests")

    def __init__(self, ctx: RunContext, boundary: ToolBoundary, repairer: EvidenceRepair,
                 guard: SemanticGuard, query: str) -> None:
        self.ctx = ctx
        self.boundary = boundary
        self.repairer = repairer
        self.guard = guard
        self.query = query
        self.guard_requests: list[GuardRequest] = []  # what each call received, for the record
        self.repair_requests: list[RepairRequest] = []

    def budget_stopped(self, execution: DiagnosisAgentExecution) -> bool:
        """True for the budget's Controlled Stop: the agent's loop exhausted the run."""
        return (execution.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
                and self.ctx.state is RunState.BUDGET_EXHAUSTED)

    def may_release(self, execution: DiagnosisAgentExecution) -> bool:
        """Whether an execution may still be released: the budget's stop of a run the budget
        ended (doc §10), or any execution of a run still active (release checks it again at
        its own boundary)."""
        return self.budget_stopped(execution) or self.ctx.lifecycle.is_active

    def release(self, execution: DiagnosisAgentExecution
                ) -> Generator[simpy.Event, Any, ReleaseDecision]:
        """Release a Completed or Controlled Stop execution (the doc §9 flow)."""
        snapshot = execution.snapshot
        if self.budget_stopped(execution):  # the run is already BUDGET_EXHAUSTED
            return self._budget_release(self._snapshot_facts(snapshot), snapshot.missing_info,
                                        "no verified facts in the ProgressSnapshot")
        self.ctx.check_active("release")
        draft = execution.draft
        if draft is None:
            return self.snapshot_fallback(snapshot)
        if draft.conclusion is None:
            return self._no_conclusion(draft, snapshot)
        try:
            decision: ReleaseDecision = yield from self._guard_chain(draft, snapshot)
        except BudgetExceeded as exc:
            # a guard or repair reply spent the token budget: its conclusion is not published,
            # since its guard chain did not finish within the budget
            exhaust_budget(self.ctx, self.boundary.collection, exc)
            return self._budget_release(verified(snapshot.facts, self.boundary.ready_ids()),
                                        snapshot.missing_info, "the token budget ran out "
                                        "during release, with no verified facts", draft=draft)
        return decision

    def _budget_release(self, facts: tuple[Fact, ...], missing: tuple[str, ...], why: str, *,
                        draft: DiagnosisDraft | None = None) -> ReleaseDecision:
        """The budget rule (doc §10), for every budget stop, in the agent's loop or in release.

        The run stays BUDGET_EXHAUSTED; the ProgressSnapshot's verified ``facts`` make an
        INSUFFICIENT_EVIDENCE fallback; without any the run fails (``why``).
        """
        if not facts:
            self._failed(why)
        return self._decide(FallbackType.INSUFFICIENT_EVIDENCE, facts, missing, draft=draft,
                            run_state=RunState.BUDGET_EXHAUSTED)

    def snapshot_fallback(self, snapshot: ProgressSnapshot) -> ReleaseDecision:
        """Controlled stop or draft-contract error: verified facts -> INSUFFICIENT_EVIDENCE."""
        return self._snapshot_release(snapshot, RunState.SUCCESS)

    def timeout_fallback(self, snapshot: ProgressSnapshot) -> ReleaseDecision:
        """The policy's timeout fallback: as :meth:`snapshot_fallback`, the run stays TIMED_OUT.

        Called for a TIMED_OUT run whose policy sets ``timeout_progress_fallback`` (doc §10).
        """
        return self._snapshot_release(snapshot, RunState.TIMED_OUT)

    def _snapshot_release(self, snapshot: ProgressSnapshot, run_state: RunState
                          ) -> ReleaseDecision:
        facts = self._snapshot_facts(snapshot)
        if not facts:
            self._failed("no verified facts in the ProgressSnapshot")
        return self._decide(FallbackType.INSUFFICIENT_EVIDENCE, facts, snapshot.missing_info,
                            run_state=run_state)

    def _snapshot_facts(self, snapshot: ProgressSnapshot) -> tuple[Fact, ...]:
        """The snapshot's verified facts, the snapshot check traced (EVIDENCE_GUARD_INITIAL)."""
        facts = verified(snapshot.facts, self.boundary.ready_ids())
        self.ctx.tracer.emit(TraceEventType.EVIDENCE_GUARD_INITIAL,
                             TraceEventStatus.OK if facts else TraceEventStatus.FAILED,
                             {"mode": "snapshot", "verified_facts": len(facts)})
        return facts

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
        if not check.valid:
            fixed = yield from self._repair(draft, check)
            if fixed is not None and Defect.REPAIR_RELEASED_UNCHECKED in self.ctx.config.defects:
                check = EvidenceCheck(())  # seeded: released without the recheck
            elif fixed is not None:
                check = guard.check_conclusion(fixed)
                self._trace_check(TraceEventType.EVIDENCE_GUARD_RECHECK, check)
            if fixed is None or not check.valid:
                return self._decide(FallbackType.EVIDENCE_VALIDATION_FAILED,
                                    self._facts(draft, snapshot),
                                    draft.missing_info or snapshot.missing_info,
                                    draft=draft, problems=check.problems)
            draft = fixed
        verdict = yield from self._semantic(draft)
        if verdict is SemanticVerdict.SUPPORTED:
            return self._decide(None, (), (), verdict=verdict, draft=draft)
        kind = (FallbackType.SEMANTIC_UNSUPPORTED if verdict is SemanticVerdict.UNSUPPORTED
                else FallbackType.SEMANTIC_UNAVAILABLE)
        return self._decide(kind, self._facts(draft, snapshot),
                            draft.missing_info or snapshot.missing_info,
                            verdict=verdict, draft=draft)

    def _repair(self, draft: DiagnosisDraft, check: EvidenceCheck
                ) -> Generator[simpy.Event, Any, DiagnosisDraft | None]:
        """Exactly one EvidenceRepair; None when it fails or returns no valid draft."""
        ctx = self.ctx
        request = RepairRequest(ctx.run_id, self.query, draft_data(draft),
                                check.problems, tuple(sorted(self.boundary.ready_ids())))
        self.repair_requests.append(request)
        ctx.tracer.emit(TraceEventType.EVIDENCE_REPAIR, TraceEventStatus.STARTED,
                        {"problems": list(check.problems)})
        try:
            reply: ModelReply = yield from ctx.provider_call(
                CallKind.REPAIR, "evidence_repair", lambda: self.repairer.repair(request),
                TraceEventType.EVIDENCE_REPAIR, None)  # its outcome is the repaired draft's
        except ProviderError:
            return None
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
        self.guard_requests.append(request)
        ctx.tracer.emit(TraceEventType.SEMANTIC_GUARD_ATTEMPT, TraceEventStatus.STARTED, {})
        try:
            reply: GuardReply = yield from ctx.provider_call(
                CallKind.GUARD, "semantic_guard", lambda: self.guard.judge(request),
                TraceEventType.SEMANTIC_GUARD_DECISION,
                lambda r: {"verdict": _verdict(r).value, "rationale": r.rationale},
                failed={"verdict": SemanticVerdict.UNAVAILABLE.value})
        except ProviderError:
            if Defect.SEMANTIC_UNAVAILABLE_AS_SUPPORTED in ctx.config.defects:
                return SemanticVerdict.SUPPORTED  # seeded: a failed guard counts as a pass
            return SemanticVerdict.UNAVAILABLE
        verdict = _verdict(reply)
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
                draft: DiagnosisDraft | None = None,
                problems: tuple[str, ...] = (),
                run_state: RunState = RunState.SUCCESS) -> ReleaseDecision:
        if kind is None:
            assert draft is not None
            outcome, content = ReleaseOutcome.SUCCESS, report_content(draft)
        else:
            outcome, content = ReleaseOutcome.FALLBACK, fallback_content(kind, facts, missing)
        self.ctx.tracer.emit(TraceEventType.RELEASE_DECISION, TraceEventStatus.OK,
                             {"outcome": outcome.value,
                              "fallback_type": kind.value if kind else None})
        # a repair asked for is one whatever came of it: a failed one, or a budget it spent
        return ReleaseDecision(outcome, kind, content, verdict, bool(self.repair_requests),
                               draft, problems, run_state)

    def _failed(self, why: str) -> NoReturn:
        self.ctx.tracer.emit(TraceEventType.RELEASE_DECISION, TraceEventStatus.FAILED,
                             {"outcome": ReleaseOutcome.FAILED.value, "reason": why})
        raise ReleaseFailed(why)


def _verdict(reply: GuardReply) -> SemanticVerdict:
    return SemanticVerdict.SUPPORTED if reply.supported else SemanticVerdict.UNSUPPORTED


def _merge(*groups: tuple[Fact, ...]) -> tuple[Fact, ...]:
    seen: dict[str, Fact] = {}
    for group in groups:
        for fact in group:
            seen.setdefault(fact.statement, fact)
    return tuple(seen.values())


def _repaired_draft(reply: ModelReply) -> tuple[DiagnosisDraft | None, str | None]:
    """The repaired draft of a repair reply, or why there is none (doc §9).

    The draft is the reply's payload, else its text read as JSON; either may hold the draft
    itself or ``{"draft": ...}``.
    """
    payload: Any = reply.payload
    if payload is None:  # a reply as text, as a recorded provider writes it
        text = reply.content
        if not text:
            return None, "repair returned nothing"
        try:
            payload = decode_output(text)
        except ValueError as exc:
            return None, f"repair output is not JSON ({exc})"
    if isinstance(payload, Mapping) and "draft" in payload:
        payload = payload["draft"]
    if payload is None:
        return None, "repair returned nothing"
    try:
        draft = parse_json_object(DiagnosisDraft, payload)
    except ValidationError as exc:
        return None, f"repaired draft invalid {refusal(exc, 'draft')}"
    if draft.conclusion is None:
        return None, "a repair must keep the conclusion"
    return draft, None
