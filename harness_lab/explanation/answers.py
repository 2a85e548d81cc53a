"""The answers to doc §15's troubleshooting questions, read from one RunRecord.

Each function answers one question in two or three sentences and cites what it read: a state
axis as ``Axis VALUE``, a trace event as ``TYPE t=… STATUS``, an SSE event as ``sse kind
t=…``. Nothing here runs anything; every fact comes from the record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness_lab.record import RunRecord
from harness_lab.sse import SseEvent
from harness_lab.states import (
    EvidenceStatus,
    IntentType,
    InvocationStatus,
    ReleaseOutcome,
    RunState,
    SseEventKind,
    SseState,
    StoredRunStatus,
    TraceEventType,
)
from harness_lab.trace import TraceEvent

__all__ = ["QUESTIONS", "Answerer", "cite", "collection", "evidence", "limits", "outcome",
           "previous_turn", "sse_done", "stored_status"]

Answerer = Callable[[RunRecord], str]

_LISTED = 3  # items named in one sentence before "and N more"


def _t(value: float) -> str:
    """A time to the millisecond (``1.25``); one too large for that in its shortest form."""
    if value != value or abs(value) >= 1e15:
        return f"{value:g}"
    return f"{value:.3f}".rstrip("0").rstrip(".")


def cite(e: TraceEvent) -> str:
    """``TYPE t=1.2 STATUS`` of a trace event."""
    return f"{e.type.value} t={_t(e.t)} {e.status.value}"


def _sse(e: SseEvent) -> str:
    return f"sse {e.kind.value} t={_t(e.t)}"


def _first(r: RunRecord, kind: TraceEventType) -> TraceEvent | None:
    return next(iter(r.events_of(kind)), None)


def _last(r: RunRecord, kind: TraceEventType) -> TraceEvent | None:
    return next(reversed(r.events_of(kind)), None)


def _v(member: Any) -> str:
    return "none" if member is None else str(getattr(member, "value", member))


def _listed(items: Sequence[str]) -> str:
    shown = list(items[:_LISTED])
    more = len(items) - len(shown)
    text = "; ".join(shown)
    return f"{text}; and {more} more" if more else text


def _sse_event(r: RunRecord, kind: SseEventKind) -> SseEvent | None:
    return next((e for e in r.sse_events if e.kind is kind), None)


# -- why did the user get this outcome and content ---------------------------------------------

def outcome(r: RunRecord) -> str:
    """Why the user got this ReleaseOutcome (and FallbackType) and this content."""
    states = (f"RunState {r.run_state.value}, ReleaseOutcome {r.release_outcome.value}, "
              f"FallbackType {_v(r.fallback_type)}")
    release = _last(r, TraceEventType.RELEASE_DECISION)
    decided = f" ({cite(release)})" if release is not None else ""
    if r.release_outcome is ReleaseOutcome.CANCELLED:
        cancel = _first(r, TraceEventType.RUN_CANCELLED)
        why = (f"it was cancelled by {cancel.detail.get('reason')} ({cite(cancel)})"
               if cancel is not None else f"it was cancelled ({r.termination_reason})")
        failure = _sse_event(r, SseEventKind.FAILURE)
        got = ("no content" if failure is None else
               f"a failure event with code {dict(failure.data).get('code')} ({_sse(failure)})")
        return (f"{states}: {why}, so nothing was released; ReleaseOutcome CANCELLED is "
                f"never a public outcome, so the user got {got} and no done.")
    if r.release_outcome is ReleaseOutcome.FAILED:
        return _failed(r, states, decided)
    if r.release_outcome is ReleaseOutcome.SUCCESS:
        return _success(r, states, decided)
    return _fallback(r, states)


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _content_kind(r: RunRecord) -> str:
    content = _sse_event(r, SseEventKind.CONTENT)
    if content is None:
        return "no content event was sent"
    kind = content.data.get("contentType", "content")
    return f"the content event carries contentType {kind} ({_sse(content)})"


def _success(r: RunRecord, states: str, decided: str) -> str:
    if r.intent is not IntentType.DIAGNOSIS:
        answer = _first(r, TraceEventType.SYSTEM_RESPONSE) or _first(
            r, TraceEventType.KNOWLEDGE_ANSWER)
        where = f" ({cite(answer)})" if answer is not None else ""
        return (f"{states}: the query was routed to {_v(r.intent)}{where}, which answers "
                f"without the diagnosis agent or its guards; {_content_kind(r)}{decided}.")
    guard = _last(r, TraceEventType.EVIDENCE_GUARD_RECHECK) or _first(
        r, TraceEventType.EVIDENCE_GUARD_INITIAL)
    semantic = _last(r, TraceEventType.SEMANTIC_GUARD_DECISION)
    checks = []
    if guard is not None:
        checks.append(f"EvidenceGuard passed ({cite(guard)})")
    if semantic is not None:
        checks.append(f"SemanticGuard judged it {semantic.detail.get('verdict')} "
                      f"({cite(semantic)})")
    passed = " and ".join(checks) or "the guard chain passed"
    return (f"{states}: the agent drafted a conclusion, {passed}, so the release decision "
            f"published it as a diagnosis report{decided}. {_upper(_content_kind(r))}.")


_FALLBACK_WHY = {
    "MISSING_REQUIRED_CONTEXT": "the agent ended legally without the context it needs and "
                                "asked for it",
    "INSUFFICIENT_EVIDENCE": "no conclusion could be released, so the verified facts "
                             "gathered so far are released instead",
    "EVIDENCE_VALIDATION_FAILED": "the drafted conclusion's evidence failed EvidenceGuard and "
                                  "the one repair did not fix it",
    "SEMANTIC_UNSUPPORTED": "SemanticGuard judged the conclusion UNSUPPORTED by its evidence",
    "SEMANTIC_UNAVAILABLE": "SemanticGuard was technically unavailable, so the conclusion "
                            "could not be checked and is withheld",
}


def _fallback(r: RunRecord, states: str) -> str:
    kind = _v(r.fallback_type)
    why = _FALLBACK_WHY.get(kind, "the release decision chose a safe fallback")
    cites = [cite(e) for e in r.trace if e.type in (
        TraceEventType.EVIDENCE_GUARD_INITIAL, TraceEventType.EVIDENCE_REPAIR,
        TraceEventType.EVIDENCE_GUARD_RECHECK, TraceEventType.SEMANTIC_GUARD_DECISION)
        and e.status.value != "STARTED"]
    semantic = _last(r, TraceEventType.SEMANTIC_GUARD_DECISION)
    said = semantic and (semantic.detail.get("rationale") or semantic.detail.get("error"))
    detail = f" SemanticGuard said: {said}." if said else ""
    recheck = _last(r, TraceEventType.EVIDENCE_GUARD_RECHECK)
    if recheck is not None and recheck.detail.get("problems"):
        detail = f" The recheck found: {_listed(list(recheck.detail['problems']))}."
    if r.run_state is not RunState.SUCCESS:
        why += f"; RunState stays {r.run_state.value}"
    release = _last(r, TraceEventType.RELEASE_DECISION)
    steps = cites + ([cite(release)] if release is not None else [])
    read = f" ({' -> '.join(steps)})" if steps else ""
    return (f"{states}: {why}{read}. A fallback is a normal release, not a failed run "
            f"(invariant 9); {_content_kind(r)}.{detail}")


def _failed(r: RunRecord, states: str, decided: str) -> str:
    failure = _sse_event(r, SseEventKind.FAILURE)
    code = dict(r.failure or {}).get("code")
    sent = (f"the user got a failure event with code {code} ({_sse(failure)})"
            if failure is not None else "no failure event reached the user")
    reason = r.termination_reason or "unknown"
    if r.run_state is RunState.TIMED_OUT:
        why = (f"the deadline at t={_t(r.deadline_at)} s passed ({reason}) and after the "
               "deadline no boundary passes, Release included, so nothing safe is released")
    elif r.run_state is RunState.BUDGET_EXHAUSTED:
        why = ("a budget limit was passed and the ProgressSnapshot held no verified fact to "
               "release")
    elif r.run_state is RunState.FAILED:
        why = f"the run failed unrecoverably ({reason}: {_failure_message(r)})"
    else:
        why = f"the release could not publish safe content ({_failure_message(r)})"
    release = _last(r, TraceEventType.RELEASE_DECISION)
    said = (f"; the release decision said: {release.detail.get('reason')}"
            if release is not None and release.detail.get("reason") else "")
    finished = _last(r, TraceEventType.RUN_FINISHED)
    ended = f"; {cite(finished)}" if finished is not None else ""
    if failure is not None:
        sent = sent[:-1] + ended + ")"
    return f"{states}: {why}{decided}{said}. So {sent}."


def _failure_message(r: RunRecord) -> str:
    failure = dict(r.failure or {})
    return str(failure.get("message") or failure.get("reason") or r.error or "no message")


# -- why did collection stop / the agent stop calling tools --------------------------------------

def collection(r: RunRecord) -> str:
    """Why collection stopped (CollectionState, DiagnosisStopReason) or the agent stopped
    calling tools."""
    if r.intent is not IntentType.DIAGNOSIS:
        return (f"No collection ran: the query was routed to {_v(r.intent)}, which runs no "
                "diagnosis agent and no evidence tool.")
    states = (f"CollectionState {_v(r.collection_state)}, DiagnosisStopReason "
              f"{_v(r.stop_reason)}")
    stop = _first(r, TraceEventType.COLLECTION_STOP)
    budget = _first(r, TraceEventType.BUDGET_EXHAUSTED)
    rejected = [f"{e.detail.get('tool')} refused in preflight ({e.detail.get('reason')}, "
                f"{cite(e)})" for e in r.events_of(TraceEventType.TOOL_REQUEST_REJECTED)]
    tail = f" Tool requests refused: {_listed(rejected)}." if rejected else ""
    if stop is not None:
        reason = stop.detail.get("reason")
        streak = (f"{stop.detail.get('violation_streak')} consecutive progress-protocol "
                  "violations" if reason == "PROGRESS_PROTOCOL_VIOLATED"
                  else f"{stop.detail.get('no_gain_streak')} consecutive NO_GAIN results")
        after = ("STOP_REQUIRED was delivered once and the agent had one step to draft"
                 if r.stop_required_delivered else "STOP_REQUIRED was not delivered")
        return (f"{states}: collection saturated after {streak} ({cite(stop)}); no evidence "
                f"tool runs after SATURATED. {after}.{tail}")
    if budget is not None:
        return (f"{states}: the {budget.detail.get('kind')} budget was passed "
                f"({budget.detail.get('value')} > {budget.detail.get('limit')}, "
                f"{cite(budget)}), which stops the agent with BUDGET_LIMIT_REACHED while "
                f"CollectionState stays {_v(r.collection_state)}.{tail}")
    if r.run_state in (RunState.CANCELLED, RunState.TIMED_OUT, RunState.FAILED):
        finished = _last(r, TraceEventType.RUN_FINISHED)
        where = f" ({cite(finished)})" if finished is not None else ""
        return (f"{states}: collection did not stop on its own; the run ended "
                f"{r.run_state.value} ({r.termination_reason}){where} after "
                f"{len(r.invocations)} tool call(s).{tail}")
    steps = r.events_of(TraceEventType.AGENT_MODEL_STEP)
    reply = next((e for e in reversed(steps) if e.detail.get("action") == "reply"), None)
    drafted = f" ({cite(reply)}, step {reply.detail.get('step')})" if reply is not None else ""
    return (f"{states}: collection never stopped; the agent stopped calling tools itself "
            f"and drafted{drafted} after {len(r.invocations)} tool call(s).{tail}")


# -- why did a tool have no evidence -------------------------------------------------------------

def _progress(r: RunRecord, invocation_id: str) -> TraceEvent | None:
    return next((e for e in r.events_of(TraceEventType.TOOL_PROGRESS)
                 if e.detail.get("invocation_id") == invocation_id), None)


def evidence(r: RunRecord) -> str:
    """Why a tool had no evidence (InvocationStatus, EvidenceStatus, error code)."""
    lacking: list[str] = []
    found = 0
    for inv in r.invocations:
        progress = _progress(r, inv.invocation_id)
        where = f", {cite(progress)}" if progress is not None else ""
        name = f"{inv.tool} ({inv.invocation_id})"
        if inv.status is InvocationStatus.ERROR:
            lacking.append(f"{name} ended ERROR with EvidenceStatus ERROR, error code "
                           f"{_v(inv.error_code)}: {inv.error}{where}")
        elif inv.status is InvocationStatus.PROJECTING:
            lacking.append(f"{name} was still PROJECTING when the run ended, so it has no "
                           "EvidenceStatus and cannot be cited")
        elif inv.evidence_status is EvidenceStatus.NO_EVIDENCE:
            lacking.append(f"{name} is READY with NO_EVIDENCE{where}: it ran and found "
                           "nothing, which is NO_GAIN and never a global negative "
                           "(invariant 5)")
        else:
            found += 1
    refused = [f"{x.tool} was refused in preflight ({x.reason.value}: {x.message}) at "
               f"t={_t(x.t)}, so it has no canonical record" for x in r.rejections]
    if not r.invocations and not r.rejections:
        return ("No tool was invoked (0 canonical records, 0 preflight rejections), so no "
                "tool lacked evidence.")
    if not lacking and not refused:
        return (f"Every tool call returned evidence: {found} READY record(s) with "
                "EVIDENCE_FOUND (InvocationStatus READY, EvidenceStatus EVIDENCE_FOUND).")
    parts = lacking + refused
    kept = f" {found} other call(s) returned EVIDENCE_FOUND." if found else ""
    return f"{_listed(parts)}.{kept} Only READY records may be cited (invariant 3)."


# -- timeout or budget -------------------------------------------------------------------------

def _headroom(r: RunRecord) -> str:
    parts = [f"{k} {'unlimited' if v is None else v}" for k, v in r.headroom.items()]
    return ", ".join(parts) or "no budget"


def limits(r: RunRecord) -> str:
    """Timeout or budget: which limit ended the run, and the headroom of the others."""
    deadline = r.deadline_at - r.finished_at
    discarded = [cite(e) for e in r.trace if e.status.value == "DISCARDED"] or [
        f"{kind}:{name} at t={_t(at)}" for kind, name, at in r.discarded]
    late = (f" Late results discarded: {_listed(discarded)}." if discarded else "")
    if r.run_state is RunState.TIMED_OUT:
        where = _last(r, TraceEventType.RUN_FINISHED)
        found = f" ({cite(where)})" if where is not None else ""
        # when the run's one termination was taken (a boundary, or a rival attempt that found
        # the deadline passed), which is not always when the run finished
        at = next((t for state, _, t in r.terminations if state == RunState.TIMED_OUT.value),
                  r.finished_at)
        return (f"Timeout, not budget: RunState TIMED_OUT ({r.termination_reason}); the "
                f"deadline at t={_t(r.deadline_at)} s was found passed at t={_t(at)} s"
                f"{found}, {_t(at - r.deadline_at)} s late.{_lost(r)}{late} Budget "
                f"headroom left: {_headroom(r)}.")
    budget = _first(r, TraceEventType.BUDGET_EXHAUSTED)
    if r.run_state is RunState.BUDGET_EXHAUSTED or budget is not None:
        passed = (f"the {budget.detail.get('kind')} limit {budget.detail.get('limit')} was "
                  f"passed at {budget.detail.get('value')} ({cite(budget)})"
                  if budget is not None else f"a budget was passed ({r.termination_reason})")
        return (f"Budget, not timeout: RunState {r.run_state.value}; {passed}. Headroom left: "
                f"{_headroom(r)}; the deadline at t={_t(r.deadline_at)} s still had "
                f"{_t(deadline)} s.{late}")
    return (f"Neither: RunState {r.run_state.value} ({r.termination_reason}) at "
            f"t={_t(r.finished_at)} s, with {_t(deadline)} s of headroom before the deadline "
            f"at t={_t(r.deadline_at)} s. Budget headroom: {_headroom(r)}.{late}")


def _lost(r: RunRecord) -> str:
    """The attempts to end the run that lost to the termination it has, if any."""
    lost = [f"{e.detail.get('state')} ({e.detail.get('reason')}) at "
            f"t={_t(float(e.detail.get('at', e.t)))} ({cite(e)})"
            for e in r.trace if e.type is TraceEventType.TERMINATION_REJECTED]
    return (f" An attempt to end it otherwise lost to it: {_listed(lost)}." if lost else "")


# -- why is the stored status SUCCESS without a conclusion -----------------------------------------

def stored_status(r: RunRecord) -> str:
    """Why diagnosis_run.status is what it is, and why SUCCESS can come without a conclusion."""
    row: Mapping[str, Any] = r.stored_row or {}
    if not row:
        return (f"No diagnosis_run row was stored (stored status {_v(r.stored_status)}), so "
                "the database cannot say how the run ended; read the trace instead.")
    status = row.get("status")
    conclusion = row.get("conclusion")
    mapping = (f"doc §12.2 maps ReleaseOutcome {r.release_outcome.value} to "
               f"diagnosis_run.status {status}")
    if status != StoredRunStatus.SUCCESS.value:
        return (f"The stored status is {status}, not SUCCESS: {mapping}. RunState "
                f"{r.run_state.value} is stored beside it as termination_state "
                f"{row.get('termination_state')}, since neither replaces the other "
                "(invariant 10).")
    if conclusion:
        return (f"Stored status SUCCESS with a conclusion: {mapping}, and the released "
                f"report's conclusion was extracted and stored (\"{conclusion}\").")
    if r.release_outcome is ReleaseOutcome.FALLBACK:
        return (f"Stored status SUCCESS without a conclusion: {mapping}, because "
                "status=SUCCESS means the request was handled and safe content released, not "
                f"that there is a conclusion. The stored answer is a fallback (FallbackType "
                f"{_v(r.fallback_type)}), so the conclusion column is empty.")
    return (f"Stored status SUCCESS without a conclusion: {mapping}; the run was routed to "
            f"{_v(r.intent)}, whose answer is not a diagnosis report, so no conclusion is "
            "extracted.")


# -- why is there no SSE done ------------------------------------------------------------------

def sse_done(r: RunRecord) -> str:
    """Whether SSE ``done`` was sent, and if not why (SseState, disconnect, cancellation)."""
    done = _sse_event(r, SseEventKind.DONE)
    kinds = " -> ".join(r.sse_kinds()) or "nothing"
    refused = (f" Refused after that: {', '.join(k.value for k in r.sse_refused)}."
               if r.sse_refused else "")
    if done is not None:
        return (f"There is a done: {_sse(done)} with outcome {done.data.get('outcome')}, "
                f"SseState {r.sse_state.value} (sent: {kinds}).{refused}")
    cancel = _first(r, TraceEventType.RUN_CANCELLED)
    cancelled = (f"the run was cancelled by {cancel.detail.get('reason')} ({cite(cancel)})"
                 if cancel is not None else f"the run ended {r.run_state.value}")
    if r.sse_state is SseState.DISCONNECTED:
        return (f"No done because SseState is DISCONNECTED: the client went away or a send "
                f"failed, and {cancelled}; nothing is sent on a lost connection (sent: "
                f"{kinds}).{refused}")
    if r.sse_state is SseState.TERMINAL and cancel is not None:
        return (f"No done: {cancelled}, and ReleaseOutcome CANCELLED is never a public done, "
                f"so the server closed the stream (SseState TERMINAL) after {kinds}.{refused}")
    if r.sse_state is SseState.TERMINAL:
        return (f"No done: the server closed the stream (SseState TERMINAL) after {kinds} "
                f"without one; {cancelled}.{refused}")
    return (f"No done: SseState is still {r.sse_state.value}; the stream was never finished "
            f"(sent: {kinds}).{refused}")


# -- will the next turn see this run as PreviousTurn -----------------------------------------------

def previous_turn(r: RunRecord) -> str:
    """Whether the next turn of the session sees this run as PreviousTurn (doc §12.2)."""
    row: Mapping[str, Any] = r.stored_row or {}
    published = bool(row.get("published_result"))
    rule = "only DIAGNOSIS + ReleaseOutcome SUCCESS + published_result becomes PreviousTurn"
    if r.intent is IntentType.DIAGNOSIS and r.release_outcome is ReleaseOutcome.SUCCESS \
            and published:
        return (f"Yes: IntentType DIAGNOSIS, ReleaseOutcome SUCCESS and a stored "
                f"published_result, so the next turn of session {r.session_id} sees run "
                f"{r.run_id} as PreviousTurn ({rule}).")
    if r.intent is not IntentType.DIAGNOSIS:
        why = f"IntentType is {_v(r.intent)}"
    elif r.release_outcome is ReleaseOutcome.FALLBACK:
        why = "ReleaseOutcome is FALLBACK, and a fallback never becomes PreviousTurn"
    elif r.release_outcome is not ReleaseOutcome.SUCCESS:
        why = f"ReleaseOutcome is {r.release_outcome.value}"
    else:
        why = "no published_result was stored"
    return (f"No: {why}; {rule} (doc §12.2). The next turn of session {r.session_id} gets "
            f"no PreviousTurn from run {r.run_id}.")


QUESTIONS: dict[str, tuple[str, Answerer]] = {
    "outcome": ("Why did the user get this outcome and content?", outcome),
    "collection": ("Why did collection stop (why did the agent stop calling tools)?",
                   collection),
    "evidence": ("Why did a tool have no evidence?", evidence),
    "limits": ("Timeout or budget, which limit, and how much headroom was left?", limits),
    "stored_status": ("Why is the stored status what it is (SUCCESS without a conclusion)?",
                      stored_status),
    "sse_done": ("Why is there no SSE done?", sse_done),
    "previous_turn": ("Will the next turn see this run as PreviousTurn?", previous_turn),
}
"""Each question's key -> (the question, the function answering it), in doc §15 order."""
