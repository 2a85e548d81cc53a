"""The rules behind :mod:`harness_lab.invariants`: one check per invariant, on a record.

Each check reads only a :class:`RunRecord` and returns a message per breach; :func:`breaches`
runs them all. This module is part of the compiled run core (every sampled run is checked);
:mod:`harness_lab.invariants` is the public face.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from harness_lab.record import RunRecord
from harness_lab.states import (
    EvidenceStatus,
    IntentType,
    InvocationStatus,
    ReleaseOutcome,
    RunState,
    SseEventKind,
    SseState,
    StoredRunStatus,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.store.base import WALL_CLOCK_AFTER
from harness_lab.trace import TraceEvent

__all__ = ["INVARIANTS", "TIMES", "TIME_TOLERANCE_MS", "Check", "breaches"]


Check = Callable[[RunRecord], Iterable[str]]


def _single_termination(r: RunRecord) -> list[str]:
    """1. A run has exactly one RunTermination (and one RUN_FINISHED)."""
    out: list[str] = []
    if r.run_state is RunState.RUNNING:
        out.append("the run finished without a terminal RunState")
    if len(r.terminations) > 1:
        states = " -> ".join(t[0] for t in r.terminations)
        out.append(f"{len(r.terminations)} terminal transitions ({states}): "
                   "first terminal must win")
    finished = r.events_of(TraceEventType.RUN_FINISHED)
    if len(finished) != 1:
        out.append(f"{len(finished)} RUN_FINISHED events")
    elif finished[0].detail.get("run_state") != r.run_state.value:
        out.append(f"RUN_FINISHED says {finished[0].detail.get('run_state')}, the run is "
                   f"{r.run_state.value}")
    for e in r.trace:  # an attempt that lost, lost to the one termination the run has
        if e.type is TraceEventType.TERMINATION_REJECTED:
            winner = e.detail.get("lost_to")
            if winner != r.run_state.value:
                out.append(f"a {e.detail.get('state')} attempt at t={e.t} lost to {winner}, "
                           f"the run is {r.run_state.value}")
    return out


def _sse_protocol(r: RunRecord) -> list[str]:
    """2. At most one content/failure and one done, in the public order, identity matching."""
    out: list[str] = []
    events = r.sse_events
    results = dones = metadata = 0
    ordered = True
    last = 0
    for e in events:  # one pass: the counts and whether the ranks never go down
        kind = e.kind
        rank = _SSE_RANK[kind]
        if rank < last:
            ordered = False
        last = rank
        if kind is SseEventKind.CONTENT or kind is SseEventKind.FAILURE:
            results += 1
        elif kind is SseEventKind.DONE:
            dones += 1
        elif kind is SseEventKind.METADATA:
            metadata += 1
    if results > 1:
        out.append(f"{results} content/failure events")
    if dones > 1:
        out.append(f"{dones} done events")
    if events and events[0].kind is not SseEventKind.METADATA:
        out.append(f"the first event is {events[0].kind.value}, not metadata")
    if not ordered or metadata > 1:
        out.append("events out of the order metadata -> status* -> content|failure -> done")
    identity = (r.session_id, r.run_id)
    for e in events:
        kind = e.kind
        if kind is SseEventKind.CONTENT or kind is SseEventKind.FAILURE:
            if (e.data.get("sessionId"), e.data.get("runId")) != identity:
                out.append("a result's identity does not match the metadata")
        elif kind is SseEventKind.DONE:
            if e.data.get("outcome") == ReleaseOutcome.CANCELLED.value:
                out.append("CANCELLED was sent as a public done outcome")
            elif e.data.get("outcome") != r.release_outcome.value:
                out.append(f"done says {e.data.get('outcome')}, the release outcome is "
                           f"{r.release_outcome.value}")
    if r.release_outcome is ReleaseOutcome.CANCELLED and dones:
        out.append("a cancelled run sent done")
    return out


_SSE_RANK = {SseEventKind.METADATA: 0, SseEventKind.STATUS: 1, SseEventKind.CONTENT: 2,
             SseEventKind.FAILURE: 2, SseEventKind.DONE: 3}


def _cited_ready(r: RunRecord) -> list[str]:
    """3. Only READY invocations are cited in published content."""
    out: list[str] = []
    status = {i.invocation_id: i.status for i in r.invocations}
    for cid in _citations(r):
        if status.get(cid) is not InvocationStatus.READY:
            out.append(f"published content cites {cid}, which is not a READY invocation")
    return out


def _ready_has_evidence(r: RunRecord) -> list[str]:
    """4. A READY record has EVIDENCE_FOUND or NO_EVIDENCE."""
    out: list[str] = []
    ok = (EvidenceStatus.EVIDENCE_FOUND, EvidenceStatus.NO_EVIDENCE)
    for i in r.invocations:
        if i.status is InvocationStatus.READY and i.evidence_status not in ok:
            out.append(f"{i.invocation_id} is READY with evidence status {i.evidence_status}")
        if i.status is InvocationStatus.PROJECTING:
            out.append(f"{i.invocation_id} was left PROJECTING")
    return out


def _no_evidence_not_promoted(r: RunRecord) -> list[str]:
    """5. NO_EVIDENCE never supports a published conclusion."""
    out: list[str] = []
    if r.content is None or r.content.get("contentType") != "diagnosis_report":
        return out
    evidence = {i.invocation_id: i.evidence_status for i in r.invocations}
    for ref in r.content.get("evidence", ()):
        if evidence.get(ref.get("invocation_id")) is EvidenceStatus.NO_EVIDENCE:
            out.append(f"the conclusion rests on NO_EVIDENCE invocation {ref.get('invocation_id')}")
    return out


def _no_tool_after_saturation(r: RunRecord) -> list[str]:
    """6. No new evidence tool runs after SATURATED."""
    out: list[str] = []
    stopped = False
    for e in r.trace:
        type_ = e.type
        if type_ is TraceEventType.COLLECTION_STOP:
            stopped = True
        elif (stopped and type_ is TraceEventType.TOOL_INVOCATION
              and e.status is TraceEventStatus.STARTED
              and e.detail.get("evidence_tool", True)):
            out.append(f"evidence tool {e.detail.get('tool')} ran after COLLECTION_STOP")
    return out


def _release_decides_content(r: RunRecord) -> list[str]:
    """7. A diagnosis publishes content only through a RELEASE_DECISION."""
    out: list[str] = []
    if r.intent is not IntentType.DIAGNOSIS or r.content is None:
        return out
    for e in r.trace:
        if e.type is TraceEventType.RELEASE_DECISION and e.status is TraceEventStatus.OK:
            return out
    out.append("diagnosis content was published without a RELEASE_DECISION")
    return out


def _guard_chain_needs_conclusion(r: RunRecord) -> list[str]:
    """8. The full EvidenceGuard / Repair / SemanticGuard chain runs only for a conclusion."""
    out: list[str] = []
    chain = conclusion_checked = supported = False
    for e in r.trace:
        type_ = e.type
        if (type_ is TraceEventType.EVIDENCE_REPAIR
                or type_ is TraceEventType.SEMANTIC_GUARD_ATTEMPT):
            chain = True
        elif type_ is TraceEventType.EVIDENCE_GUARD_INITIAL:
            conclusion_checked = conclusion_checked or e.detail.get("mode") == "conclusion"
        elif type_ is TraceEventType.SEMANTIC_GUARD_DECISION:
            supported = supported or e.detail.get("verdict") == "SUPPORTED"
    if chain and not conclusion_checked:
        out.append("repair or semantic guard ran without a conclusion check")
    if (r.content is not None and r.content.get("contentType") == "diagnosis_report"
            and not supported):
        out.append("a diagnosis report was published without a SUPPORTED semantic verdict")
    return out


def _fallback_is_not_failure(r: RunRecord) -> list[str]:
    """9. FALLBACK is a normal release: never with RunState FAILED, always with safe content."""
    out: list[str] = []
    if r.release_outcome is ReleaseOutcome.FALLBACK:
        if r.run_state in (RunState.FAILED, RunState.CANCELLED):
            out.append(f"FALLBACK with RunState {r.run_state.value}")
        if r.fallback_type is None or r.content is None:
            out.append("FALLBACK without a FallbackType and its safe content")
        elif r.content.get("fallbackType") != r.fallback_type.value:
            out.append("the published fallback type differs from the release decision")
        if r.content is not None and "conclusion" in r.content:
            out.append("a fallback published a conclusion")
    elif r.fallback_type is not None:
        out.append(f"FallbackType {r.fallback_type.value} with outcome {r.release_outcome.value}")
    if r.run_state is RunState.SUCCESS and r.release_outcome not in (ReleaseOutcome.SUCCESS,
                                                                     ReleaseOutcome.FALLBACK):
        out.append(f"RunState SUCCESS with outcome {r.release_outcome.value}")
    return out


def _store_axes_distinct(r: RunRecord) -> list[str]:
    """10. Stored status, ReleaseOutcome and RunState are kept apart and mapped per §12.2."""
    out: list[str] = []
    row = r.stored_row
    if row is None:
        out.append("no stored diagnosis_run row")
        return out
    want = StoredRunStatus.for_outcome(r.release_outcome).value
    if row.get("status") != want:
        out.append(f"stored status {row.get('status')}, §12.2 maps {r.release_outcome.value} "
                   f"to {want}")
    if row.get("release_outcome") != r.release_outcome.value:
        out.append("stored release_outcome differs from the run's")
    if row.get("termination_state") != r.run_state.value:
        out.append("stored termination_state differs from the RunState")
    published = row.get("published_result")
    if published is not None and not (r.intent is IntentType.DIAGNOSIS
                                      and r.release_outcome is ReleaseOutcome.SUCCESS):
        out.append("published_result stored for a run that is not DIAGNOSIS + SUCCESS")
    return out


def _late_content_refused(r: RunRecord) -> list[str]:
    """SSE: nothing is sent after TERMINAL or DISCONNECTED; a disconnected run has no done."""
    out: list[str] = []
    if r.sse_state is SseState.DISCONNECTED and any(e.kind is SseEventKind.DONE
                                                    for e in r.sse_events):
        out.append("done was sent on a connection that ended DISCONNECTED")
    if r.run_state in (RunState.CANCELLED,) and any(
            e.kind is SseEventKind.CONTENT for e in r.sse_events):
        out.append("content was published for a cancelled run")
    return out


def _tool_calls_reconciled(r: RunRecord) -> list[str]:
    """Budget (doc §12.2, §12.3): RUN_FINISHED counts the tool calls started before it, and
    the stored row keeps that count (doc §12.2: the actual tool calls)."""
    out: list[str] = []
    started = 0
    counted: object = None
    for e in r.trace:
        type_ = e.type
        if type_ is TraceEventType.TOOL_INVOCATION and e.status is TraceEventStatus.STARTED:
            started += 1
        elif type_ is TraceEventType.RUN_FINISHED:
            counted = e.detail.get("tool_calls")
            break
    if counted is not None and counted != started:
        out.append(f"RUN_FINISHED counts {counted} tool calls, {started} were started")
    stored = None if r.stored_row is None else r.stored_row.get("tool_calls")
    if stored is not None and stored != started:
        out.append(f"the stored row counts {stored} tool calls, {started} were started")
    return out


def _tokens_reconciled(r: RunRecord) -> list[str]:
    """Budget (doc §12.2, §12.3): the stored row keeps the tokens RUN_FINISHED reconciled
    (doc §12.2: the run's Token count). Judged where both are known: a run that has not
    finished, or a store that keeps no tokens, says nothing."""
    if r.stored_row is None:
        return []
    stored = r.stored_row.get("total_tokens")
    if not _count(stored):
        return []
    finished = next((e for e in r.trace if e.type is TraceEventType.RUN_FINISHED), None)
    counted = None if finished is None else finished.detail.get("tokens")
    if not _count(counted) or counted == stored:
        return []
    return [f"the stored row counts {stored} tokens, RUN_FINISHED reconciled {counted}"]


def _count(value: object) -> bool:
    """Whether ``value`` is a count (an int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


TIMES: Final = "times_consistent"
"""The name of the invariant that holds a run's times to one another."""

TIME_TOLERANCE_MS: Final = 1.0
"""How far apart two times of one run may be and still agree, in milliseconds: a store that
keeps whole milliseconds moves each by less than one, while the float arithmetic on virtual
seconds below :data:`~harness_lab.store.base.WALL_CLOCK_AFTER` errs by under a microsecond."""


def _stored_time(row: Mapping[str, Any] | None, column: str) -> float | None:
    """A time or duration column of the stored row; None when it is empty or not a finite
    number (what a rebuilt row holds there was read by the rebuild, which refuses the rest)."""
    if row is None:
        return None
    value = row.get(column)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _at(t: float) -> str:
    """A time as a message quotes it: up to 15 significant digits, no trailing zeros."""
    return format(t, ".15g")


def _times_consistent(r: RunRecord) -> list[str]:
    """Persistence and timeline (doc §2, §7, §12.1, §12.2, §13): the row is created RUNNING
    before the completion finishes it and stores the run's duration, which is never negative;
    the trace is the run's timeline, no event earlier than the one before it, and so are the
    SSE events the client was sent (§11); a run, and each of its tool invocations, finishes
    no earlier than it starts, and the run ends within its time and times out no earlier
    than its deadline (:func:`_ends_in_time`). A row dated by the run's own clock (every
    simulated run) also keeps ``finished_at - created_at`` as the duration, the run's start
    and finish, and every trace event between the two, to within :data:`TIME_TOLERANCE_MS`;
    a row dated by the wall clock (from :data:`~harness_lab.store.base.WALL_CLOCK_AFTER`:
    the live store's, another harness's) is not compared with the run's clock, which times
    the duration and the trace."""
    out: list[str] = []
    row = r.stored_row
    created = _stored_time(row, "created_at")
    finished = _stored_time(row, "finished_at")
    duration = _stored_time(row, "duration_ms")
    ordered = True
    if created is not None and finished is not None and finished < created:
        ordered = False
        out.append(f"the stored finished_at {_at(finished)} is before its created_at "
                   f"{_at(created)}")
    if duration is not None and duration < 0:
        out.append(f"the stored duration_ms {_at(duration)} is negative")
    slack = TIME_TOLERANCE_MS / 1000.0
    run_clock = ordered and created is not None and created < WALL_CLOCK_AFTER
    if run_clock and created is not None:
        if abs(r.started_at - created) > slack:
            out.append(f"the run started at t={_at(r.started_at)}, its stored row was created "
                       f"at {_at(created)}")
        if finished is not None and abs(r.finished_at - finished) > slack:
            out.append(f"the run finished at t={_at(r.finished_at)}, its stored row at "
                       f"{_at(finished)}")
        if finished is not None and duration is not None and duration >= 0:
            span = (finished - created) * 1000.0
            if abs(duration - span) > TIME_TOLERANCE_MS:
                out.append(f"the stored duration_ms {_at(duration)} is not finished_at - "
                           f"created_at, {_at(span)} ms")
    elif r.started_at != created and r.finished_at < r.started_at:
        # the run's own start and finish (a rebuilt record's are the row's, said above)
        out.append(f"the run finished at t={_at(r.finished_at)}, before it started at "
                   f"t={_at(r.started_at)}")
    low = created - slack if run_clock and created is not None else -math.inf
    high = finished + slack if run_clock and finished is not None else math.inf
    back = outside = 0
    went_back = first_outside = ""
    outside_at: set[float] = set()  # said of the trace: not said again of a termination
    before: TraceEvent | None = None
    for e in r.trace:
        t = e.t
        if before is not None and t < before.t:
            back += 1
            if not went_back:
                went_back = (f"{e.type.value} (seq {e.seq}) at t={_at(t)} after "
                             f"{before.type.value} (seq {before.seq}) at t={_at(before.t)}")
        if t < low or t > high:
            outside += 1
            outside_at.add(t)
            if not first_outside:
                first_outside = f"{e.type.value} (seq {e.seq}) at t={_at(t)}"
        before = e
    if back:
        out.append(f"the trace goes back in time {back} time{'s' if back > 1 else ''}, "
                   f"first {went_back}")
    if outside and created is not None:
        end = "" if finished is None else _at(finished)
        out.append(f"{outside} trace event{'s' if outside > 1 else ''} outside the stored "
                   f"run's time [{_at(created)}, {end}], first {first_outside}")
    events = r.sse_events
    for a, b in zip(events, events[1:], strict=False):
        if b.t < a.t:
            out.append(f"the SSE events go back in time: {b.kind.value} (seq {b.seq}) at "
                       f"t={_at(b.t)} after {a.kind.value} (seq {a.seq}) at t={_at(a.t)}")
            break
    ended_first = [(i.invocation_id, i.started_at, i.finished_at) for i in r.invocations
                   if i.finished_at is not None and i.finished_at + slack < i.started_at]
    if ended_first:
        inv, began, ended = ended_first[0]
        more = f" ({len(ended_first)} in all)" if len(ended_first) > 1 else ""
        out.append(f"tool invocation {inv} finished at t={_at(float(ended or 0.0))} before it "
                   f"started at t={_at(began)}{more}")
    wall_row = created is not None and created >= WALL_CLOCK_AFTER
    out += _ends_in_time(r, slack, ordered and not wall_row, outside_at)
    return out


def _ends_in_time(r: RunRecord, slack: float, own_clock: bool,
                  said: set[float]) -> list[str]:
    """The run's terminal transition and its deadline on the run's clock (doc §2, §3.2): the
    run ends between its start and its finish, its deadline is not before its start, and it
    times out no earlier than its deadline (found passed at a boundary at or after it). A
    deadline that is not finite is unknown (a rebuilt record's); a run whose start is on
    another clock than its terminations (a row dated by the wall clock) is not held to the
    first, nor is a termination at the time of a trace event ``said`` to lie outside the run
    (a rebuilt record's terminations are its trace's)."""
    out: list[str] = []
    start, finish = r.started_at, r.finished_at
    if own_clock and start <= finish:
        outside = [(state, at) for state, _, at in r.terminations
                   if (at < start - slack or at > finish + slack) and at not in said]
        if outside:
            state, at = outside[0]
            out.append(f"the run ended {state} at t={_at(at)}, outside its time "
                       f"[{_at(start)}, {_at(finish)}]")
    deadline = r.deadline_at
    if not math.isfinite(deadline):
        return out
    if deadline < start - slack:
        out.append(f"the run's deadline t={_at(deadline)} is before it started at "
                   f"t={_at(start)}")
    early = [at for state, _, at in r.terminations
             if state == RunState.TIMED_OUT.value and at < deadline - slack]
    if early:
        out.append(f"the run timed out at t={_at(early[0])}, before its deadline at "
                   f"t={_at(deadline)}")
    return out


def _citations(r: RunRecord) -> list[str]:
    content = r.content or {}
    ids = [ref.get("invocation_id") for ref in content.get("evidence", ())]
    for fact in list(content.get("findings", ())) + list(content.get("facts", ())):
        ids.extend(fact.get("citations", ()))
    return [i for i in ids if isinstance(i, str)]


INVARIANTS: dict[str, Check] = {
    "single_termination": _single_termination,
    "sse_protocol": _sse_protocol,
    "cited_ready_only": _cited_ready,
    "ready_has_evidence_status": _ready_has_evidence,
    "no_evidence_not_promoted": _no_evidence_not_promoted,
    "no_evidence_tool_after_saturation": _no_tool_after_saturation,
    "release_decides_content": _release_decides_content,
    "guard_chain_needs_conclusion": _guard_chain_needs_conclusion,
    "fallback_is_not_failure": _fallback_is_not_failure,
    "stored_axes_distinct": _store_axes_distinct,
    "late_content_refused": _late_content_refused,
    "tool_calls_reconciled": _tool_calls_reconciled,
    "tokens_reconciled": _tokens_reconciled,
    TIMES: _times_consistent,
}


def breaches(record: RunRecord) -> list[tuple[str, str]]:
    """Every breach on one run, as (invariant, message) pairs in doc §16 order."""
    return [(name, msg) for name, fn in INVARIANTS.items() for msg in fn(record)]
