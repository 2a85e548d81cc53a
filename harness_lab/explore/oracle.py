"""The oracle: which SPEC §4 row a variant must end in, decided from the fault and the base run.

The prescription never looks at the variant's own result. It reads the injected fault and the
recorded base run (its outcome and its state at the fault's point: still active? deadline
passed? verified facts in the ProgressSnapshot? budget spent?) and applies the rules below,
each taken from the lifecycle document (``doc §n``) or the toolkit's SPEC (``SPEC §n``).
Where the document leaves the outcome open, or the rule would have to re-simulate the agent's
script, the prescription is **any legal row**: the observed (RunState, ReleaseOutcome,
FallbackType) must then be one of the thirteen rows of
:data:`~harness_lab.report.mapping.OUTCOME_TABLE`, stored with the ``diagnosis_run.status``
doc §12.2 maps its ReleaseOutcome to.

"Live" means the base run had no RunTermination yet and its deadline had not passed, read
after the base scenario's own faults acted at that boundary; "base" means the base run's own
row. The rule of each fault kind, and the document section it comes from, is tabled in
docs/explore.md ("The oracle") and written next to each rule below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness_lab.config import DeadlineDetection
from harness_lab.explore.boundaries import BaseRun, BoundaryState, at_label
from harness_lab.explore.variants import FAULT_ADAPTER
from harness_lab.outcome_table import (
    OUTCOME_BY_CASE,
    OUTCOME_TABLE,
    STORED_STATUS_FOR_OUTCOME,
    ExpectedOutcome,
)
from harness_lab.ports import CallKind
from harness_lab.runner.run import ScenarioResult
from harness_lab.scenarios import faults as fs
from harness_lab.states import FallbackType, ReleaseOutcome, RunState, SseEventKind, StoredRunStatus

__all__ = ["ANY_LEGAL", "CRASH", "TIMEOUT_PROGRESS_FALLBACK", "Observed", "Prescription",
           "closest_row", "judge", "legal_problem", "legal_rows", "prescribe",
           "refused_completion", "row_expectation"]

ANY_LEGAL = "any legal"
"""The case name of a prescription that only requires a legal SPEC §4 row."""

CRASH = "crash"
"""The case name of a prescribed crash (no record, the stored row stays RUNNING)."""

TIMEOUT_PROGRESS_FALLBACK = ExpectedOutcome(
    "timeout_progress_fallback", "timeout with safe progress (SPEC §5.1 policy switched on)",
    RunState.TIMED_OUT, ReleaseOutcome.FALLBACK, FallbackType.INSUFFICIENT_EVIDENCE,
    StoredRunStatus.SUCCESS)
"""The one outcome outside the thirteen rows that SPEC §5.1's policy setting makes legal."""


def legal_rows(timeout_progress_fallback: bool = False) -> tuple[ExpectedOutcome, ...]:
    """The SPEC §4 rows, plus the §5.1 policy row when that policy is switched on."""
    return OUTCOME_TABLE + ((TIMEOUT_PROGRESS_FALLBACK,) if timeout_progress_fallback else ())


@dataclass(frozen=True, slots=True)
class Prescription:
    """What the document prescribes for one variant: a row, any legal row, or a crash."""

    case: str
    row: ExpectedOutcome | None
    rule: str

    @property
    def text(self) -> str:
        """``client_disconnect: CANCELLED/CANCELLED/-``, ``any legal``, ``crash: ...``."""
        if self.row is not None:
            r = self.row
            ft = r.fallback_type.value if r.fallback_type is not None else "-"
            return f"{self.case}: {r.run_state.value}/{r.release_outcome.value}/{ft}"
        if self.case == CRASH:
            return "crash: db RUNNING, no record"
        return ANY_LEGAL


@dataclass(frozen=True, slots=True)
class Observed:
    """What one variant's run ended as (the state axes the table speaks about)."""

    run_state: str | None
    release_outcome: str | None
    fallback_type: str | None
    db_status: str | None
    crashed: bool = False
    violations: tuple[str, ...] = ()
    error: str | None = None
    note: str | None = None

    @classmethod
    def of(cls, result: ScenarioResult, unfired: Sequence[str] = ()) -> Observed:
        """Read a scenario result; ``unfired`` are the messages of faults that never fired.

        Only a fault that never fired, or a run that left no record without crashing, is an
        ``error``. A scripted fake running out of steps is a ``note``: under a fault the agent
        may take more steps than the script holds, and the run then fails FAILED / FAILED. So
        is a recorded scenario's cassette miss: the variant asks what was never recorded.
        """
        names = tuple(sorted({v.invariant for v in result.violations}))
        r = result.record
        if r is None:
            status = (result.stored_row or {}).get("status")
            error = None if result.crashed else result.error or "the run left no record"
            if error is not None and error.startswith("CassetteMiss"):
                return cls(None, None, None, status, False, names, "; ".join(unfired) or None,
                           "not replayable: the recording holds no answer to a request this "
                           "variant makes")
            return cls(None, None, None, status, result.crashed, names,
                       "; ".join(unfired) or error)
        note = r.error if r.error and "ScriptExhausted" in r.error else None
        return cls(r.run_state.value, r.release_outcome.value,
                   r.fallback_type.value if r.fallback_type is not None else None,
                   r.stored_status.value if r.stored_status is not None else None,
                   False, names, "; ".join(unfired) or None, note)

    @property
    def text(self) -> str:
        """``SUCCESS/FALLBACK/SEMANTIC_UNAVAILABLE db SUCCESS`` or ``crash, db RUNNING``."""
        if self.crashed:
            return f"crash, db {self.db_status}"
        if self.run_state is None:
            return f"no record ({self.error})"
        return _text(_values(self))


def _row_values(row: ExpectedOutcome) -> tuple[str, str, str | None, str]:
    ft = row.fallback_type.value if row.fallback_type is not None else None
    return (row.run_state.value, row.release_outcome.value, ft, row.db_status.value)


def _values(o: Observed) -> tuple[str | None, str | None, str | None, str | None]:
    return (o.run_state, o.release_outcome, o.fallback_type, o.db_status)


def _text(values: Sequence[str | None]) -> str:
    run_state, release, fallback, db = values
    return f"{run_state}/{release}/{fallback or '-'} db {db}"


def refused_completion(values: Sequence[str | None]) -> tuple[str | None, ...]:
    """A row's (RunState, ReleaseOutcome, FallbackType) when the store refuses its
    completion: what would have been released (SUCCESS or FALLBACK) is released FAILED, the
    RunState staying (doc §2: the completion is stored before the result is sent)."""
    run_state, release, fallback = values[:3]
    if release in (ReleaseOutcome.SUCCESS.value, ReleaseOutcome.FALLBACK.value):
        return run_state, ReleaseOutcome.FAILED.value, None
    return run_state, release, fallback


def legal_problem(o: Observed, *, timeout_progress_fallback: bool = False,
                  stored: bool = True, refused: bool = False) -> str | None:
    """Why ``o`` is not a legal SPEC §4 row with its §12.2 stored status, or None
    (``stored=False``: the stored status is not judged, a store fault decides it;
    ``refused``: the store refuses the completion, see :func:`refused_completion`)."""
    if o.crashed:
        if stored and o.db_status != StoredRunStatus.RUNNING.value:
            return f"a crashed run left stored status {o.db_status}, not RUNNING"
        return None
    if o.run_state is None or o.release_outcome is None:
        return f"the run left no record ({o.error})"
    want = STORED_STATUS_FOR_OUTCOME.get(o.release_outcome)
    if stored and o.db_status != want:
        return f"stored status {o.db_status}, §12.2 maps {o.release_outcome} to {want}"
    triples = {refused_completion(_row_values(r)) if refused else _row_values(r)[:3]
               for r in legal_rows(timeout_progress_fallback)}
    if _values(o)[:3] not in triples:
        return f"{o.run_state}/{o.release_outcome}/{o.fallback_type or '-'} is no SPEC §4 row"
    return None


def judge(p: Prescription, o: Observed, *, timeout_progress_fallback: bool = False,
          store_refuses: str | None = None) -> str | None:
    """How the observed run contradicts the prescription (and SPEC §4), or None.

    A run that could not be observed at all (no record, no crash, only a ``note`` such as a
    cassette miss) contradicts nothing. ``store_refuses`` names the store operation a base's
    own fault refuses: the stored status is then the fault's, not judged, and a refused
    ``complete`` releases FAILED what would have been released (:func:`refused_completion`).
    """
    stored, refused = store_refuses is None, store_refuses == "complete"
    if o.run_state is None and not o.crashed and o.note is not None:
        return None
    if p.case == CRASH:
        if not o.crashed:
            return f"prescribed a crash, observed {o.text}"
        return legal_problem(o, stored=stored)
    if p.row is not None:
        if o.crashed or o.run_state is None:
            return f"prescribed {p.text}, observed {o.text}"
        want = _row_values(p.row)
        if stored and _values(o) == want:
            return None
        if not stored and _values(o)[:3] == (refused_completion(want) if refused else want[:3]):
            return None
        return f"prescribed {_text(want)}, observed {o.text}"
    return legal_problem(o, timeout_progress_fallback=timeout_progress_fallback, stored=stored,
                         refused=refused)


def row_expectation(row: ExpectedOutcome) -> dict[str, Any]:
    """A row as scenario ``expect`` fields (run_state, release_outcome, fallback_type,
    db_status)."""
    run_state, release, fallback, db = _row_values(row)
    return {"run_state": run_state, "release_outcome": release,
            "fallback_type": fallback or "none", "db_status": db}


def closest_row(o: Observed, rows: Iterable[ExpectedOutcome]) -> ExpectedOutcome:
    """The row agreeing with ``o`` on most of the four axes (the first such row on ties)."""
    got = _values(o)
    return max(rows, key=lambda row: sum(a == b for a, b in zip(_row_values(row), got,
                                                                strict=True)))


# -- the rules ------------------------------------------------------------------------------------

Rule = Callable[[Any, BaseRun], Prescription]


def _row(case: str, rule: str) -> Prescription:
    return Prescription(case, OUTCOME_BY_CASE[case], rule)


def _any(rule: str) -> Prescription:
    return Prescription(ANY_LEGAL, None, rule)


def _base(base: BaseRun, why: str) -> Prescription:
    row = base.outcome_row()
    if row is None:
        return _any(f"{why}; the base outcome is no SPEC §4 row")
    return Prescription(row.case, row, f"{why} (base outcome)")


_DISCONNECT = "client_disconnect"
_ENDING = ("client_disconnect", "user_cancel", "server_shutdown", "crash")
"""The fault kinds that end the run at the point they act (the others act at a later check)."""
_CANCEL_RULE = "a cancel while the run is live ends it CANCELLED / CANCELLED (doc §4, §10)"
_ENDED = "the run had already ended: first terminal wins (doc §3.1)"
_UNSEEN_DEADLINE = ("no checkActive has found the passed deadline yet (doc §3.2), so the cancel "
                    "is the first terminal (doc §3.1; SPEC §5.7 boundary)")


def _timeout(base: BaseRun, facts: int, rule: str) -> Prescription:
    if base.scenario.config.policy.timeout_progress_fallback and facts > 0:
        return Prescription(TIMEOUT_PROGRESS_FALLBACK.case, TIMEOUT_PROGRESS_FALLBACK,
                            f"{rule}; the SPEC §5.1 policy releases the verified progress")
    return _row("timeout_no_content", f"{rule}; no safe content after the deadline (SPEC §5.1)")


def _crash(f: fs.Crash, base: BaseRun) -> Prescription:
    return Prescription(CRASH, None, "a crash leaves the RUNNING row of doc §12.1 and no record")


def _instant_deadline(base: BaseRun) -> bool:
    """True when the base counts a passed deadline from its instant (SPEC §5.7)."""
    return base.scenario.config.policy.deadline_detection is DeadlineDetection.INSTANT


def _cancel(f: fs.ClientDisconnect | fs.UserCancel | fs.ServerShutdown, base: BaseRun
            ) -> Prescription:
    instant = _instant_deadline(base)
    k = getattr(f, "sse_event", None)
    if k is not None:
        send = base.send(k)
        if send is None:
            return _any(f"the base run sent no SSE event {k}")
        if send.kind in (SseEventKind.CONTENT, SseEventKind.FAILURE, SseEventKind.DONE):
            return _base(base, "the outcome was persisted before the result was sent (doc §2)")
        if not (send.live if instant else send.active):
            return _base(base, _ENDED)
        return _row(_DISCONNECT, "a failed send is a disconnect (doc §11); " + _CANCEL_RULE)
    if f.at is not None:
        b = base.find(f.at)
        if b is None:
            return _any("the base run never reaches this point")
        if b.live or (not instant and b.active):
            return _row(_DISCONNECT, _CANCEL_RULE if b.live else _UNSEEN_DEADLINE)
        return _base(base, _ENDED)
    assert f.at_s is not None
    t = base.started_at + f.at_s
    if base.terminated_by(t) or (instant and t >= base.deadline_at):
        return _base(base, _ENDED)
    if base.first_at_or_after(t) is None:
        return _any("no boundary follows this instant")
    if t >= base.deadline_at:
        return _row(_DISCONNECT, _UNSEEN_DEADLINE)
    return _row(_DISCONNECT, "the next checkActive sees the cancel; " + _CANCEL_RULE)


def _deadline(f: fs.Deadline, base: BaseRun) -> Prescription:
    rule = "checkActive finds the deadline passed: TIMED_OUT (doc §3.2, §10)"
    if f.at is not None:
        b = base.find(f.at)
        if b is None:
            return _any("the base run never reaches this point")
        return _timeout(base, b.facts, rule) if b.live else _base(base, _ENDED)
    assert f.at_s is not None
    if f.at_s > base.deadline_s:
        return _any("the fault moves the deadline later than the base run's")
    trigger = base.first_at_or_after(base.started_at + f.at_s)
    if trigger is None:
        return _base(base, "no boundary checks the deadline after it passed")
    if not trigger.reached_active:
        return _base(base, _ENDED)
    if not _instant_deadline(base) and any(g.kind in _ENDING for g in base.faults_at(trigger)):
        return _base(base, "the base's own cancel or crash acts at the boundary whose "
                           "checkActive would first find the passed deadline, before it does: "
                           + _UNSEEN_DEADLINE)
    return _timeout(base, trigger.facts, rule)


def _live_call(base: BaseRun, call: CallKind, n: int, tool: str | None = None
               ) -> tuple[BoundaryState, BoundaryState] | Prescription:
    """The boundaries before and after the base run's n-th ``call`` (of ``tool``), when a
    fault there meets the run still live; else the row that holds instead."""
    pair = base.call(call, n, tool)
    if pair is None:
        return _any("the base run never makes this call")
    before, after = pair
    if base.faults_at(before) or base.faults_at(after):
        return _any("the base scenario's own fault acts at this call")
    if not before.live:
        return _base(base, _ENDED)
    return pair


def _latency_spike(f: fs.LatencySpike, base: BaseRun) -> Prescription:
    pair = _live_call(base, f.call, f.n, f.tool)
    if isinstance(pair, Prescription):
        return pair
    before, after = pair
    if f.latency_s < base.deadline_at - before.t:
        return _any("the spike ends before the deadline; the timeline shifts")
    if base.call_raised(before):
        return _any("the call raised in the base run; a spike does not lengthen a call whose "
                    "provider raises")
    return _timeout(base, after.facts, "the call runs to its end past the deadline and its "
                                       "result is discarded (SPEC §5.3, doc §14)")


def _budget(f: fs.BudgetExhausted, base: BaseRun) -> Prescription:
    point: BoundaryState | None = None
    if f.at is not None:
        point = base.find(f.at)
        if point is None:
            return _any("the base run never reaches this point")
        if not point.active:
            return _base(base, _ENDED)
    trip = _trip(f.budget, point, base)
    if trip is None:
        return _base(base, f"the {f.budget} budget is never checked again")
    where, live = trip
    if not live:
        return _base(base, _ENDED)
    rule = f"the {f.budget} budget check at {where.label} exhausts the run (doc §3.3, §8.1)"
    if where.facts > 0:
        return _row("budget_progress", f"{rule}; verified facts make a safe fallback")
    return _row("budget_no_progress", f"{rule}; no verified facts")


def _trip(budget: str, point: BoundaryState | None, base: BaseRun
          ) -> tuple[BoundaryState, bool] | None:
    """Where the exhausted budget is next checked, and whether the run is live there.

    A model call's reserve comes just before its ``before`` boundary and sees only the
    lifecycle (the budget cancel does not check the deadline); a tool's reserve follows the
    preflight ``checkActive``; the token check after a model step and the byte charge after
    a tool result follow the ``after`` boundary's ``checkActive``.
    """
    index = point.index if point is not None else -1
    model, tool = CallKind.MODEL, CallKind.TOOL
    found: BoundaryState | None
    if budget == "model_calls":
        found = base.after_index(index, model, "before")
        return None if found is None else (found, found.reached_active)
    if budget == "tool_calls":
        found = base.after_index(index, tool, "before")
        return None if found is None else (found, found.reached_live)
    if budget == "tokens":
        return _token_check(point, base)
    for b in base.boundaries:  # bytes: the next tool result that brings bytes
        if b.index >= index and b.kind is tool and b.when == "after":
            invocations = base.record.invocations
            size = invocations[b.ordinal - 1].size_bytes if b.ordinal <= len(invocations) else 0
            if size > 0:
                return b, b.live
    return None


_TOKEN_CHECKED = (CallKind.MODEL, CallKind.REPAIR, CallKind.GUARD)


def _token_check(point: BoundaryState | None, base: BaseRun
                 ) -> tuple[BoundaryState, bool] | None:
    """The next token check: a model call's reserve, or the check after a diagnosis reply
    (model step, EvidenceRepair, SemanticGuard) that used tokens.

    At a ``before`` point the call about to start was already admitted, so its own reserve is
    behind the run; its reply's check is still ahead.
    """
    index = point.index if point is not None else -1
    for b in base.boundaries:
        if b.index < index or (b is point and b.when == "before"):
            continue
        if b.when == "after" and b.kind in _TOKEN_CHECKED and _step_tokens(b, base) > 0:
            return b, b.live
        if b.when == "before" and b.kind is CallKind.MODEL:
            return b, b.reached_active
    return None


def _step_tokens(after: BoundaryState, base: BaseRun) -> int:
    nxt = base.boundaries[after.index + 1] if after.index + 1 < len(base.boundaries) else None
    total = nxt.tokens if nxt is not None else base.record.usage.tokens
    return total - after.tokens


_PROVIDER_CASE = {
    CallKind.ROUTER: ("internal_failure", "the router is unavailable: FAILED (doc §3.2)"),
    CallKind.MODEL: ("internal_failure", "the diagnosis model failed: FAILED (doc §3.2)"),
    CallKind.RESPONDER: ("internal_failure", "the answer model failed: FAILED (SPEC §5.4)"),
    CallKind.RETRIEVER: ("internal_failure", "retrieval failed: FAILED (SPEC §5.4)"),
    CallKind.GUARD: ("semantic_unavailable", "SemanticGuard is technically unavailable "
                                             "(doc §9, §10)"),
    CallKind.REPAIR: ("evidence_guard_failed", "the one EvidenceRepair failed, EvidenceGuard "
                                               "finally fails (doc §9, §10)"),
}


def _at_call(base: BaseRun, call: CallKind, n: int, duration: float | None,
             row: tuple[str, str] | None = None) -> Prescription:
    """The row of a fault that changes what the n-th ``call`` returns: ``row`` (case, rule),
    by default the row of that call's provider failing (:data:`_PROVIDER_CASE`).

    ``duration`` is how long the faulted call takes in the variant (None: as in the base);
    a provider error is instant unless it says otherwise, so the variant's ``after``
    boundary may come before a deadline the base run's call outlived.
    """
    pair = _live_call(base, call, n)
    if isinstance(pair, Prescription):
        return pair
    before, after = pair
    ends = after.t if duration is None else before.t + duration
    if ends >= base.deadline_at:
        return _base(base, "the run timed out while the call was in flight; its late result "
                           "is discarded (doc §14)")
    return _row(*(row or _PROVIDER_CASE[call]))


def _default_latency(base: BaseRun, call: CallKind) -> float:
    return float(getattr(base.scenario.latency, call.value))


def _provider(f: fs.ProviderFault, base: BaseRun) -> Prescription:
    return _at_call(base, CallKind(f.call), f.n, f.latency_s)


def _router_unavailable(f: fs.RouterUnavailable, base: BaseRun) -> Prescription:
    return _at_call(base, CallKind.ROUTER, 1, 0.0)


def _semantic(f: fs.SemanticFault, base: BaseRun) -> Prescription:
    if f.verdict == "UNSUPPORTED":
        return _at_call(base, CallKind.GUARD, f.n, _default_latency(base, CallKind.GUARD),
                        ("semantic_unsupported", "SemanticGuard says unsupported (doc §9, §10)"))
    return _at_call(base, CallKind.GUARD, f.n, 0.0)


def _repair_failed(f: fs.RepairFailed, base: BaseRun) -> Prescription:
    duration = 0.0 if f.form == "error" else _default_latency(base, CallKind.REPAIR)
    return _at_call(base, CallKind.REPAIR, 1, duration)


def _invalid_draft(f: fs.InvalidDraft, base: BaseRun) -> Prescription:
    pair = base.call(CallKind.MODEL, f.n)
    rule = "the invalid draft is discarded (doc §6)"
    if pair is not None and pair[1].facts > 0:
        case, rule = "insufficient_evidence", (f"{rule}; the verified ProgressSnapshot becomes "
                                               "a process-type fallback (doc §9)")
    else:
        case, rule = "internal_failure", f"{rule}; no verified progress: FAILED (doc §3.2)"
    return _at_call(base, CallKind.MODEL, f.n, _default_latency(base, CallKind.MODEL),
                    (case, rule))


def _script_decides(f: Any, base: BaseRun) -> Prescription:
    return _any("the agent's script decides how the run goes on after this fault; the "
                "document fixes no single row")


_RULES: dict[str, Rule] = {
    "crash": _crash,
    "client_disconnect": _cancel,
    "user_cancel": _cancel,
    "server_shutdown": _cancel,
    "deadline": _deadline,
    "latency_spike": _latency_spike,
    "budget_exhausted": _budget,
    "provider_error": _provider,
    "router_unavailable": _router_unavailable,
    "semantic_guard": _semantic,
    "repair_failed": _repair_failed,
    "invalid_draft": _invalid_draft,
    "tool_error": _script_decides,
    "tool_rejection": _script_decides,
    "no_gain_streak": _script_decides,
    "protocol_violation": _script_decides,
}


def _collides(f: Any, base: BaseRun) -> bool:
    label = at_label(f)
    if label is None:
        return False
    point = base.find(f.at)
    return any(at_label(g) == label or (point is not None and base.find(at) is point)
               for g in base.scenario.faults if (at := getattr(g, "at", None)) is not None)


def _timeline_faults(base: BaseRun) -> bool:
    """True when the base has faults located by time or by SSE index.

    A variant takes a different path (and time) after its fault, so such faults land on a
    different instant or event than in the base run.
    """
    return any(getattr(g, "at_s", None) is not None or getattr(g, "sse_event", None) is not None
               for g in base.scenario.faults)


def prescribe(fault: Mapping[str, Any] | Any, base: BaseRun) -> Prescription:
    """The prescription for ``base`` plus one ``fault`` (a fault dict or model); see above."""
    f = FAULT_ADAPTER.validate_python(fault) if isinstance(fault, Mapping) else fault
    if f.kind == "crash":
        return _crash(f, base)
    if _collides(f, base):
        return _any("the base scenario's own fault acts at the same point")
    if _timeline_faults(base):
        return _any("the base's own faults located by time or SSE event land elsewhere on "
                    "the variant's timeline")
    rule = _RULES.get(f.kind, _script_decides)
    return rule(f, base)
