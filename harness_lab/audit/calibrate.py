"""calibrate(): a sweep's distributions fitted from observed runs, written as a ``sweep:`` block.

From each run's trace: the latency of every completed call by kind (router, model, tool,
repair, guard), the share of tool calls that failed in execution and of provider calls that
failed, by kind, and the instants of client disconnects and user cancels. Latencies are
fitted as a lognormal (median and log-space sigma, by maximum likelihood), or kept as an
empirical distribution of quantiles, or ``fixed`` when every value is the same.

Calls cut short (a late result discarded) are left out of the latencies, and a disconnect or
cancel planned after a run ended leaves no trace: the fitted disconnect and cancel
probabilities are lower bounds, their instants those of the runs they reached. A run whose
times contradict each other (the ``times_consistent`` invariant: a clock bug, an edited
copy) is left out whole: its latencies and instants mean nothing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness_lab.record import RunRecord
from harness_lab.states import TraceEventStatus, TraceEventType
from harness_lab.trace import TraceEvent

__all__ = ["QUANTILES", "Observations", "calibrate", "fit_distribution", "fitted", "observe",
           "sweep_yaml"]

QUANTILES = 21
"""Values kept by an empirical fit: the 0th, 5th, ..., 100th percentiles."""

_OK = TraceEventStatus.OK
_FAILED = TraceEventStatus.FAILED
_PAIRS = {  # call kind: (the event that starts it, the event that ends it)
    "router": (TraceEventType.ROUTING_ATTEMPT, TraceEventType.ROUTING_DECISION),
    "guard": (TraceEventType.SEMANTIC_GUARD_ATTEMPT, TraceEventType.SEMANTIC_GUARD_DECISION),
}


@dataclass
class Observations:
    """What the runs show, before fitting; ``contradicting`` holds the run id and the first
    finding of each run left out for times that contradict each other."""

    runs: int = 0
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    tool_calls: int = 0
    tool_errors: int = 0
    disconnects: list[float] = field(default_factory=list)
    cancels: list[float] = field(default_factory=list)
    contradicting: list[tuple[str, str]] = field(default_factory=list)


def _end(obs: Observations, kind: str, e: TraceEvent, began: float | None) -> None:
    """Count a call of ``kind`` ended by event ``e``, its latency when it succeeded."""
    obs.calls[kind] += 1
    if e.status is _FAILED:
        obs.errors[kind] += 1
    if e.status is _OK and began is not None:
        obs.latency[kind].append(e.t - began)


def observe(records: Iterable[RunRecord]) -> Observations:
    """Latencies, call and error counts and fault instants of ``records``."""
    from harness_lab.invariants import time_contradictions

    obs = Observations()
    for r in records:
        if found := time_contradictions(r):
            obs.contradicting.append((r.run_id, found[0]))
            continue
        obs.runs += 1
        started: dict[Any, float] = {}
        previous = r.started_at
        for e in r.trace:
            kind = e.type
            if kind is TraceEventType.AGENT_MODEL_STEP and e.status is not (
                    TraceEventStatus.DISCARDED):
                _end(obs, "model", e, previous)
                if e.status is TraceEventStatus.REJECTED:  # a refused reply took its time too
                    obs.latency["model"].append(e.t - previous)
            elif kind is TraceEventType.TOOL_INVOCATION:
                started[e.detail.get("invocation_id")] = e.t
            elif kind is TraceEventType.TOOL_PROGRESS and e.status is not (
                    TraceEventStatus.DISCARDED):
                obs.tool_calls += 1
                if e.status is _FAILED and e.detail.get("error_code") == "EXECUTION":
                    obs.tool_errors += 1
                begun = started.get(e.detail.get("invocation_id"))
                if e.status is _OK and begun is not None:
                    obs.latency["tool"].append(e.t - begun)
            elif kind is TraceEventType.EVIDENCE_REPAIR:
                if e.status is TraceEventStatus.STARTED:
                    started["repair"] = e.t
                elif e.status is not TraceEventStatus.DISCARDED:
                    _end(obs, "repair", e, started.get("repair"))
            else:
                for call, (begin, end) in _PAIRS.items():
                    if kind is begin:
                        started[call] = e.t
                    elif kind is end and e.status is not TraceEventStatus.DISCARDED:
                        _end(obs, call, e, started.get(call))
            previous = e.t
        for state, reason, at in r.terminations:
            if state == "CANCELLED" and "disconnect" in reason:
                obs.disconnects.append(at)
            elif state == "CANCELLED":
                obs.cancels.append(at)
    return obs


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def fit_distribution(values: list[float], method: str = "lognormal") -> dict[str, Any]:
    """A ``sweep:`` distribution of ``values``: ``fixed`` when they are all equal, else a
    ``lognormal`` (maximum likelihood) or an ``empirical`` list of :data:`QUANTILES`
    quantiles. Values holding a zero (a call that took no time, as a scenario without
    latencies gives) get the empirical list under ``lognormal`` too: no lognormal has
    them, and a fit forced on them is nonsense (a sigma of 8 in log space)."""
    if not values:
        raise ValueError("no values to fit")
    low, high = min(values), max(values)
    if high - low <= 1e-9 * max(1.0, high):
        return {"fixed": _round(low)}
    if method == "empirical" or (method == "lognormal" and low <= 0):
        ordered = sorted(values)
        picks = [ordered[round(i * (len(ordered) - 1) / (QUANTILES - 1))]
                 for i in range(QUANTILES)]
        return {"empirical": [_round(v) for v in picks]}
    if method != "lognormal":
        raise ValueError(f"unknown fit {method!r}: lognormal or empirical")
    logs = [math.log(v) for v in values]
    mean = sum(logs) / len(logs)
    sigma = math.sqrt(sum((x - mean) ** 2 for x in logs) / len(logs))
    return {"lognormal": {"median": _round(math.exp(mean)), "sigma": _round(sigma)}}


def calibrate(records: Iterable[RunRecord], method: str = "lognormal") -> dict[str, Any]:
    """The ``sweep:`` block (latency and faults) the runs imply, checked by the sweep's own
    schema; raise ValueError when there are no runs."""
    return fitted(observe(records), method)


def fitted(obs: Observations, method: str = "lognormal") -> dict[str, Any]:
    """The ``sweep:`` block of what :func:`observe` found (see :func:`calibrate`)."""
    from harness_lab.sweep.spec import SweepBlock

    if not obs.runs:
        left = (f" ({len(obs.contradicting):,} left out: their times contradict each other)"
                if obs.contradicting else "")
        raise ValueError(f"no finished runs to calibrate from{left}")
    latency = {kind: fit_distribution(values, method)
               for kind, values in sorted(obs.latency.items()) if values}
    faults: dict[str, Any] = {}
    if obs.tool_calls:
        faults["tool_error_p"] = _round(obs.tool_errors / obs.tool_calls)
    provider = {kind: _round(obs.errors[kind] / n) for kind, n in sorted(obs.calls.items())
                if n and obs.errors[kind]}
    if provider:
        faults["provider_error_p"] = provider
    for name, instants in (("disconnect", obs.disconnects), ("cancel", obs.cancels)):
        if instants:
            faults[name] = {"p": _round(len(instants) / obs.runs),
                            "at_s": fit_distribution(instants, "empirical")}
    block = {"latency": latency, "faults": faults}
    SweepBlock.model_validate(block)
    return block


def sweep_yaml(block: dict[str, Any], note: str = "") -> str:
    """The block as the ``sweep:`` key of a scenario file, ``note`` as its comment, in lines
    of 80 columns at the most (a long source URL or path alone stays whole)."""
    import textwrap

    import yaml

    head = "".join(f"# {part}\n" for line in note.splitlines()
                   for part in textwrap.wrap(line, 78, break_long_words=False,
                                             break_on_hyphens=False) or [""])
    return head + yaml.safe_dump({"sweep": block}, sort_keys=False, default_flow_style=None,
                                 width=70)
