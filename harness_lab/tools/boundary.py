"""ToolBoundary: preflight, canonical begin, execution, projection and completion (doc §7)."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import simpy

from harness_lab.core.context import RunContext
from harness_lab.defects import Defect
from harness_lab.diagnosis.collection import CollectionController
from harness_lab.errors import BudgetExceeded, RunAborted, ToolExecutionError
from harness_lab.ports import CallKind, Observation, Tool, ToolCallRequest, ToolInput, ToolOutput
from harness_lab.states import (
    EvidenceStatus,
    InvocationStatus,
    PreflightReason,
    ToolErrorCode,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.tools.ledger import Ledger
from harness_lab.tools.records import CanonicalInvocation, ToolRejection
from harness_lab.tools.scope import normalize_scope

__all__ = ["ToolBoundary", "normalize_scope"]


class ToolBoundary:
    """The one way a run reaches a tool. Only READY records it produced may be cited."""

    __slots__ = ("ctx", "tools", "ledger", "collection", "records", "rejections", "_call_ids",
                 "_by_id", "_ready")

    def __init__(self, ctx: RunContext, tools: Mapping[str, Tool], ledger: Ledger,
                 collection: CollectionController) -> None:
        self.ctx = ctx
        self.tools = tools
        self.ledger = ledger
        self.collection = collection
        self.records: list[CanonicalInvocation] = []
        self.rejections: list[ToolRejection] = []
        self._call_ids: set[str] = set()
        self._by_id: dict[str, int] = {}
        self._ready: set[str] = set()  # READY is terminal: an id, once in, stays

    def record(self, invocation_id: str) -> CanonicalInvocation | None:
        """The current canonical record with this id, if any."""
        i = self._by_id.get(invocation_id)
        return None if i is None else self.records[i]

    def ready_ids(self) -> frozenset[str]:
        """Ids of every READY record of this run."""
        return frozenset(self._ready)

    def set_gain(self, invocation_id: str, gain: Any) -> None:
        """Store the decided InformationGain on a record."""
        i = self._by_id[invocation_id]
        self.records[i] = self.records[i].with_gain(gain)

    def invoke(self, request: ToolCallRequest) -> Generator[simpy.Event, Any, Observation]:
        """Preflight, execute and project one request; return what the agent observes.

        Raises RunAborted if the run ended, BudgetExceeded if a budget ran out (the caller
        exhausts the run); every other failure becomes an ERROR observation.
        """
        ctx = self.ctx
        rejection = self._preflight(request)
        if rejection is not None:
            return self._reject(request, *rejection)
        tool = self.tools[request.name]
        try:
            ctx.budget.reserve_tool_call()
        except BudgetExceeded as exc:
            self._reject(request, PreflightReason.BUDGET, str(exc))
            if Defect.REFUSED_TOOL_CALL_COUNTED in ctx.config.defects:
                ctx.budget.tool_calls += 1  # seeded: the refused call is counted as made
            raise
        seq = len(self.records)
        norm = normalize_scope(request.scope)
        rec = CanonicalInvocation(f"{ctx.run_id}-inv-{seq + 1}", ctx.run_id, seq, request.name,
                                  request.scope, norm, InvocationStatus.PROJECTING, ctx.now,
                                  call_id=request.call_id)
        if not self.ledger.begin(rec):
            ctx.budget.refund_tool_call()  # nothing was admitted
            return self._reject(request, PreflightReason.STORE, "canonical store refused begin")
        duplicate = self.collection.is_duplicate(request.name, norm)
        if request.call_id is not None:
            self._call_ids.add(request.call_id)
        self._by_id[rec.invocation_id] = seq
        self.records.append(rec)
        ctx.tracer.emit(TraceEventType.TOOL_INVOCATION, TraceEventStatus.STARTED,
                        {"tool": request.name, "invocation_id": rec.invocation_id,
                         "evidence_tool": tool.evidence})
        tool_input = ToolInput(ctx.run_id, rec.invocation_id, request.name, request.scope)
        try:
            output: ToolOutput = yield from ctx.call(
                CallKind.TOOL, request.name, lambda: tool.invoke(tool_input),
                TraceEventType.TOOL_PROGRESS)
        except ToolExecutionError as exc:
            return self._unanswered(seq, request, ToolErrorCode.EXECUTION, str(exc))
        except RunAborted:
            self._unanswered(seq, request, ToolErrorCode.ABORTED,
                             f"run ended {ctx.state.value} while the call was in flight")
            raise
        except Exception as exc:  # a bug in the tool ends the run; its record still closes
            self._unanswered(seq, request, ToolErrorCode.EXECUTION,
                             f"{type(exc).__name__}: {exc}")
            raise
        return self._project(seq, request, output, duplicate)

    def _preflight(self, request: ToolCallRequest) -> tuple[PreflightReason, str] | None:
        ctx = self.ctx
        try:
            if not ctx.certainly_active():
                ctx.check_active(f"tool preflight:{request.name}")
        except RunAborted:  # the run ended before the request (doc §7.1: invalid run)
            self._reject(request, PreflightReason.RUN, f"run is {ctx.state.value}")
            raise
        cid = request.call_id
        if cid is not None and (not cid.strip() or cid in self._call_ids):
            return PreflightReason.ID, f"invalid or duplicate call id {cid!r}"
        tool = self.tools.get(request.name)
        if tool is None:
            return PreflightReason.REQUEST, f"unknown tool {request.name!r}"
        allowed = ctx.config.authorized_tools
        if allowed is not None and request.name not in allowed:
            return PreflightReason.AUTH, f"tool {request.name!r} is not authorised for this run"
        if not tool.read_only:
            return PreflightReason.READ_ONLY, f"tool {request.name!r} is not read-only"
        problem = tool.validate(request.scope)
        if problem is not None:
            return PreflightReason.REQUEST, problem
        if (tool.evidence and self.collection.saturated
                and Defect.EVIDENCE_TOOL_AFTER_SATURATION not in ctx.config.defects):
            return PreflightReason.SATURATED, "collection is SATURATED: no new evidence tool"
        return None

    def refuse(self, request: ToolCallRequest, reason: PreflightReason, message: str
               ) -> Observation:
        """Reject a request without running it (an audit event, no canonical record)."""
        return self._reject(request, reason, message)

    def _reject(self, request: ToolCallRequest, reason: PreflightReason, message: str
                ) -> Observation:
        ctx = self.ctx
        self.rejections.append(ToolRejection(ctx.run_id, request.name, request.scope, reason,
                                             message, ctx.now, request.call_id))
        ctx.tracer.emit(TraceEventType.TOOL_REQUEST_REJECTED, TraceEventStatus.REJECTED,
                        {"tool": request.name, "reason": reason.value})
        return Observation(request.call_id, request.name, request.scope, None, None, None,
                           error=f"{reason.value}: {message}")

    def _project(self, seq: int, request: ToolCallRequest, output: ToolOutput, duplicate: bool
                 ) -> Observation:
        ctx = self.ctx
        size = output.size_bytes
        try:
            ctx.budget.charge_bytes(size)
        except BudgetExceeded as exc:
            self._finish_error(seq, request, ToolErrorCode.BUDGET, str(exc), size)
            raise
        if not output.projectable:
            return self._finish_error(seq, request, ToolErrorCode.PROJECTION,
                                      "backend answer cannot be projected", size)
        limit = ctx.config.projection_max_bytes
        if size > limit:
            return self._finish_error(seq, request, ToolErrorCode.SIZE,
                                      f"result of {size} bytes exceeds {limit}", size)
        items = output.items[: ctx.config.projection_max_items]
        found = bool(items)
        evidence = EvidenceStatus.EVIDENCE_FOUND if found else EvidenceStatus.NO_EVIDENCE
        rec = self.records[seq].ready(evidence, len(items), size, ctx.now)
        if not self.ledger.complete(rec):
            return self._finish_error(seq, request, ToolErrorCode.STORE,
                                      "canonical store refused completion", size)
        self.records[seq] = rec
        self._ready.add(rec.invocation_id)
        self.collection.seen(request.name, rec.normalized_scope)
        needs = found and not duplicate  # the agent judges its gain (doc §8.2)
        ctx.tracer.emit(TraceEventType.TOOL_PROGRESS, TraceEventStatus.OK,
                        {"tool": request.name, "invocation_id": rec.invocation_id,
                         "evidence": evidence.value, "bytes": size, "duplicate": duplicate})
        return Observation(request.call_id, request.name, request.scope, rec.invocation_id,
                           rec.status, evidence, items, needs_assessment=needs)

    def _unanswered(self, seq: int, request: ToolCallRequest, code: ToolErrorCode,
                    message: str) -> Observation:
        """A call that brought no result back ends ERROR holding no bytes."""
        return self._finish_error(seq, request, code, message, 0)

    def _finish_error(self, seq: int, request: ToolCallRequest, code: ToolErrorCode,
                      message: str, size: int) -> Observation:
        ctx = self.ctx
        rec = self.records[seq].failed(code, message, size, ctx.now)
        self.records[seq] = rec
        ctx.tracer.emit(TraceEventType.TOOL_PROGRESS, TraceEventStatus.FAILED,
                        {"tool": request.name, "invocation_id": rec.invocation_id,
                         "error_code": code.value})
        return Observation(request.call_id, request.name, request.scope, rec.invocation_id,
                           rec.status, EvidenceStatus.ERROR, error=f"{code.value}: {message}")
