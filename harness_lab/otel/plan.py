"""The span tree of one finished run, derived from its record alone (no OpenTelemetry here).

The trace of a run is a list of instants; a span needs a start and an end. Each span is
opened and closed by trace events (docs/otel.md draws the tree):

- a call traced at its start and its end: routing (``ROUTING_ATTEMPT`` -> ``ROUTING_DECISION``),
  a tool (``TOOL_INVOCATION`` -> its ``TOOL_PROGRESS``), the repair (``EVIDENCE_REPAIR``
  STARTED -> its outcome), the semantic guard (``SEMANTIC_GUARD_ATTEMPT`` -> ``..._DECISION``);
- a call traced only when it ends (a model step, a responder's answer, a retrieval) starts
  at the run's previous event: nothing in a run's own order happens between two events, so
  the call began when the event before it was traced. Events another party traces at its
  own moment (a losing termination, a cancel) do not count;
- a check that takes no time (the evidence guard, the release decision) is a span of zero
  length at its event.

The model steps and tools hang under one ``invoke_agent`` span; every other span, the SSE
events, the terminations and the events of other parties hang under the run's root span.
Each trace event is also an event of the span it opened, closed or belongs to, named by its
type, so the trace can be read back event by event (``harness-lab audit`` of OTLP JSON).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from harness_lab.otel.attributes import (
    NAMESPACE,
    Attributes,
    attributes,
    detail_attributes,
    invocation_attributes,
    run_attributes,
    sse_attributes,
    trace_event_attributes,
)
from harness_lab.states import SseState, TraceEventStatus, TraceEventType, TracePhase

if TYPE_CHECKING:
    from harness_lab.record import RunRecord
    from harness_lab.trace import TraceEvent

__all__ = ["AGENT_NAME", "ROOT_NAME", "PlannedEvent", "PlannedSpan", "plan_run"]

ROOT_NAME: Final = "harness_lab.run"
"""The name of a run's root span."""
AGENT_NAME: Final = "diagnosis"
"""``gen_ai.agent.name`` of the ReAct diagnosis agent (span ``invoke_agent diagnosis``)."""

T = TraceEventType
_ENDED_CALLS: Final = {  # traced when they end: (span name, GenAI operation, call kind)
    T.AGENT_MODEL_STEP: ("chat", "chat", "model"),
    T.SYSTEM_RESPONSE: ("system_response", "chat", "responder"),
    T.KNOWLEDGE_RETRIEVAL: ("knowledge_retrieval", "retrieval", "retriever"),
    T.KNOWLEDGE_ANSWER: ("knowledge_answer", "chat", "responder"),
}
_OPENED_CALLS: Final = {  # traced at both ends: the opening event -> (span, operation, kind)
    T.ROUTING_ATTEMPT: ("routing", "chat", "router"),
    T.SEMANTIC_GUARD_ATTEMPT: ("semantic_guard", "chat", "guard"),
    T.EVIDENCE_REPAIR: ("evidence_repair", "chat", "repair"),
}
_CLOSERS: Final = {T.ROUTING_DECISION: T.ROUTING_ATTEMPT,
                   T.SEMANTIC_GUARD_DECISION: T.SEMANTIC_GUARD_ATTEMPT,
                   T.EVIDENCE_REPAIR: T.EVIDENCE_REPAIR}
_CHECKS: Final = {T.EVIDENCE_GUARD_INITIAL: ("evidence_guard", "initial"),
                  T.EVIDENCE_GUARD_RECHECK: ("evidence_guard", "recheck"),
                  T.RELEASE_DECISION: ("release", None)}
_OTHER_PARTIES: Final = frozenset({T.TERMINATION_REJECTED, T.RUN_CANCELLED})
_AGENT_PHASES: Final = frozenset({TracePhase.AGENT, TracePhase.TOOL, TracePhase.COLLECTION})
_OPENING: Final = frozenset({SseState.NEW.value, SseState.OPEN.value})
_ERRORS: Final = frozenset({TraceEventStatus.FAILED, TraceEventStatus.REJECTED})


@dataclass(frozen=True, slots=True)
class PlannedEvent:
    """A span event: its name, its virtual time and its attributes."""

    name: str
    t: float
    attributes: Attributes


@dataclass(frozen=True, slots=True)
class PlannedSpan:
    """One span of a run's tree, times in the run's virtual seconds.

    ``kind`` is ``client`` for a call to a provider, ``internal`` otherwise; ``error`` is
    the status description of a span whose status is ERROR (None: status left unset).
    """

    name: str
    kind: str
    start: float
    end: float
    attributes: Attributes
    events: tuple[PlannedEvent, ...] = ()
    children: tuple[PlannedSpan, ...] = ()
    error: str | None = None

    def walk(self) -> list[PlannedSpan]:
        """This span and every span under it, parents before children, in order."""
        found = [self]
        for child in self.children:
            found += child.walk()
        return found


@dataclass(slots=True)
class _Open:
    """A span while its tree is being built."""

    name: str
    kind: str
    start: float
    end: float | None = None
    attributes: Attributes = field(default_factory=dict)
    events: list[PlannedEvent] = field(default_factory=list)
    children: list[_Open] = field(default_factory=list)
    error: str | None = None
    seqs: list[int] = field(default_factory=list)

    def take(self, e: TraceEvent) -> None:
        """Keep ``e`` as one of this span's trace events: its sequence number, and a span
        event named by its type (what an audit of the trace reads back)."""
        self.seqs.append(e.seq)
        self.events.append(_trace_event(e))

    def close(self, e: TraceEvent, error_type: str | None = None) -> None:
        """End at ``e``, taking its detail, its sequence number and its status."""
        self.end = e.t
        self.take(e)
        self.attributes.update(detail_attributes(e.detail))
        self.attributes[f"{NAMESPACE}.trace.status"] = e.status.value
        if e.status is TraceEventStatus.DISCARDED:
            self.discard(e)
        elif e.status in _ERRORS:
            self.error = str(e.detail.get("error") or e.detail.get("reason") or e.status.value)
            self.attributes["error.type"] = error_type or "_OTHER"

    def discard(self, e: TraceEvent) -> None:
        """Mark a call whose late result the run discarded (ended in ``detail['state']``)."""
        self.attributes.update(attributes([(f"{NAMESPACE}.discarded", True),
                                           (f"{NAMESPACE}.discarded_in", e.detail.get("state"))]))
        if self.end is None or e.t > self.end:
            self.end = e.t

    def freeze(self, default_end: float) -> PlannedSpan:
        """The finished span; one never closed ends at ``default_end``, marked unfinished."""
        attrs = dict(self.attributes)
        if self.seqs:
            attrs[f"{NAMESPACE}.trace.seq"] = tuple(self.seqs)
        if self.end is None:
            attrs[f"{NAMESPACE}.unfinished"] = True
        children = tuple(c.freeze(default_end) for c in self.children)
        end = max([self.end if self.end is not None else default_end,
                   *(c.end for c in children), *(e.t for e in self.events)])
        events = tuple(sorted(self.events, key=lambda e: e.t))
        return PlannedSpan(self.name, self.kind, self.start, end, attrs, events, children,
                           self.error)


def _trace_event(e: TraceEvent) -> PlannedEvent:
    """A trace event as a span event: named by its type, at its instant."""
    return PlannedEvent(e.type.value, e.t, trace_event_attributes(e))


class _Builder:
    """Walks one record's trace once, opening and closing spans."""

    def __init__(self, record: RunRecord, scenario: str | None) -> None:
        self.record = record
        self.root = _Open(ROOT_NAME, "internal", record.started_at, record.finished_at,
                          run_attributes(record, scenario))
        self.cursor = record.started_at  # when the run's latest own event was traced
        self.agent: _Open | None = None
        self.agent_done = False
        self.open: dict[Any, _Open] = {}  # open calls by opening event type or invocation id
        self.invocations = {i.invocation_id: i for i in record.invocations}

    def build(self) -> PlannedSpan:
        """The record's span tree."""
        for e in self.record.trace:
            self.visit(e)
            if e.type not in _OTHER_PARTIES:
                self.cursor = e.t
        self.add_root_events()
        return self.root.freeze(self.record.finished_at)  # a call still open ends here

    def visit(self, e: TraceEvent) -> None:
        """Place one trace event in the tree."""
        if e.phase not in _AGENT_PHASES and e.type not in _OTHER_PARTIES:
            self.agent_done = self.agent_done or self.agent is not None
        if e.type in (T.RUN_STARTED, T.RUN_FINISHED):
            self.root.take(e)
            if e.type is T.RUN_FINISHED:
                self.finish(e)
        elif e.type in _CLOSERS and (e.type is not T.EVIDENCE_REPAIR
                                     or e.status is not TraceEventStatus.STARTED):
            opener = _CLOSERS[e.type]
            span = self.open.pop(opener, None) or self.call(
                e, *_OPENED_CALLS[opener], self.root, start=self.cursor)
            span.close(e)
        elif e.type in _OPENED_CALLS:
            span = self.call(e, *_OPENED_CALLS[e.type], self.root)
            span.take(e)
            span.attributes.update(detail_attributes(e.detail))
            self.open[e.type] = span
        elif e.type in _ENDED_CALLS:
            self.ended_call(e)
        elif e.type is T.TOOL_INVOCATION:
            self.tool_started(e)
        elif e.type is T.TOOL_PROGRESS:
            self.tool_ended(e)
        elif e.type in _CHECKS:
            name, pass_ = _CHECKS[e.type]
            span = _Open(name, "internal", e.t)
            if pass_ is not None:
                span.attributes[f"{NAMESPACE}.guard.pass"] = pass_
            span.close(e)
            self.root.children.append(span)
        else:  # an instant of the agent's or of another party: an event
            parent = self.root if e.type in _OTHER_PARTIES else self.agent_parent(e.t)
            parent.events.append(_trace_event(e))

    def call(self, e: TraceEvent, name: str, operation: str, kind: str, parent: _Open,
             start: float | None = None) -> _Open:
        """A new span of a provider call under ``parent``."""
        span = _Open(name, "client", e.t if start is None else start, attributes={
            "gen_ai.operation.name": operation, f"{NAMESPACE}.call.kind": kind})
        parent.children.append(span)
        return span

    def ended_call(self, e: TraceEvent) -> None:
        """A call traced only at its end: it began at the run's previous event."""
        name, operation, kind = _ENDED_CALLS[e.type]
        agent = e.type is T.AGENT_MODEL_STEP
        parent = self.agent_parent(self.cursor) if agent else self.root
        span = self.call(e, name, operation, kind, parent, start=self.cursor)
        refused = e.detail.get("kind")  # a draft the contract refused: the kind of error
        span.close(e, error_type=str(refused) if refused else None)

    def tool_started(self, e: TraceEvent) -> None:
        """An ``execute_tool`` span, opened for the canonical invocation."""
        inv = self.invocations.get(str(e.detail.get("invocation_id")))
        name = f"execute_tool {e.detail.get('tool')}"
        span = _Open(name, "internal", e.t, attributes=(
            invocation_attributes(inv) if inv is not None else attributes(
                [("gen_ai.operation.name", "execute_tool"),
                 ("gen_ai.tool.name", e.detail.get("tool"))])))
        span.take(e)
        self.agent_parent(e.t).children.append(span)
        self.open[e.detail.get("invocation_id")] = span

    def tool_ended(self, e: TraceEvent) -> None:
        """A tool's outcome closes its span. A discarded result names only the tool and
        marks its span: the record's ABORTED outcome follows and closes it."""
        key = e.detail.get("invocation_id")
        if key is None:
            tool = f"execute_tool {e.detail.get('name')}"
            found = next((s for s in reversed(self.open.values()) if s.name == tool), None)
            if found is not None:
                found.take(e)
                found.discard(e)
                return
        span = self.open.pop(key, None)
        if span is None:  # an outcome whose start was not traced: from the previous event
            span = _Open(f"execute_tool {e.detail.get('tool') or e.detail.get('name')}",
                         "internal", self.cursor, attributes={
                             "gen_ai.operation.name": "execute_tool"})
            self.agent_parent(self.cursor).children.append(span)
        inv = self.invocations.get(str(key))
        code = e.detail.get("error_code")
        span.close(e, error_type=str(code) if code else None)
        if span.error is not None and inv is not None and inv.error:
            span.error = inv.error

    def agent_parent(self, start: float) -> _Open:
        """The ``invoke_agent`` span (opened at ``start`` on first use), or the root once
        the run has gone past its agent."""
        if self.agent_done:
            return self.root
        if self.agent is None:
            self.agent = _Open(f"invoke_agent {AGENT_NAME}", "internal", start, attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT_NAME,
                "gen_ai.conversation.id": self.record.session_id})
            self.agent.end = start
            self.root.children.append(self.agent)
        return self.agent

    def finish(self, e: TraceEvent) -> None:
        """``RUN_FINISHED``: the root's status (its detail repeats the record's summary)."""
        self.root.attributes[f"{NAMESPACE}.trace.status"] = e.status.value
        if e.status in _ERRORS:
            self.root.error = self.record.termination_reason or e.status.value
            self.root.attributes["error.type"] = self.record.run_state.value

    def add_root_events(self) -> None:
        """The SSE events, the SSE state changes and the terminations, on the root."""
        r = self.record
        events = self.root.events
        # the events are sorted by time, stably: at one instant a connection opens before
        # its first event is sent and closes after its last
        states = [PlannedEvent("sse.state", at, {f"{NAMESPACE}.sse_state": state})
                  for state, at in r.sse_history]
        opened = [s for s in states if s.attributes[f"{NAMESPACE}.sse_state"] in _OPENING]
        events += opened
        events += [PlannedEvent(f"sse.{s.kind.value}", s.t, sse_attributes(s))
                   for s in r.sse_events]
        events += [s for s in states if s not in opened]
        causes = r.termination_causes
        for i, (state, reason, at) in enumerate(r.terminations):
            events.append(PlannedEvent("termination", at, attributes([
                (f"{NAMESPACE}.termination.state", state),
                (f"{NAMESPACE}.termination.reason", reason),
                (f"{NAMESPACE}.termination.cause", causes[i] if i < len(causes) else None)])))


def plan_run(record: RunRecord, scenario: str | None = None) -> PlannedSpan:
    """The span tree of ``record`` (the root span, holding every other): see the module's
    docstring for how trace events become spans. ``scenario`` names the scenario the run
    played (the root's ``harness_lab.scenario``)."""
    return _Builder(record, scenario).build()
