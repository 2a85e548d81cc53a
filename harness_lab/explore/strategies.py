"""Hypothesis strategies that generate whole scenarios (plain scenario dicts).

Every strategy draws plain JSON-ready data in the scenario format, so a generated example is a
scenario file already: :func:`scenarios` validates with :class:`~harness_lab.scenarios.spec.
Scenario` and can be written as YAML. docs/explore.md ("The property search") lists what
each piece generates: model and tool scripts, guard verdicts, repair replies, routers,
configurations and fault schedules of zero to three faults of any kind but a store failure.

The strategies a composite draw uses are built once (``functools.cache``): built anew for
every example, hypothesis validated each again, which took more than half a search's time.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from hypothesis import strategies as st

from harness_lab.scenarios.faults import FAULT_KINDS

__all__ = [
    "CITATIONS", "SCOPES", "TOOLS", "UNGENERATED", "configs", "drafts", "facts",
    "fault_schedules", "faults", "guard_verdicts", "latencies", "model_scripts", "model_steps",
    "progress_reports", "repair_scripts", "routers", "scenarios", "tool_results", "tool_specs",
]

TOOLS = ("logs", "metrics", "traces")
"""The generated scenarios' tools; ``logs`` requires a ``service`` in its scope."""

SCOPES: tuple[dict[str, Any], ...] = (
    {"service": "checkout"},
    {"service": "payments"},
    {"service": "checkout", "window": "1h"},
    {},
)
"""The scopes tool requests draw from (few, so exact duplicates are common)."""

UNGENERATED = frozenset({"store_failure"})
"""Fault kinds never generated: a run the store refuses ends outside SPEC §4's rows, with no
stored status to map (doc §12), so the property (a legal row) does not apply to it."""

CITATIONS = ("inv-1", "inv-2", "inv-3", "inv-4", "inv-9", "no-such-invocation")
"""Citations: the first four may name real invocations of the run, the last two never do."""

_STATEMENTS = ("checkout logs show db timeouts", "the db pool is at 100%",
               "payments are healthy")
_MISSING = ("the deploy time", "the slow query")
_SERVICES = ("checkout", "payments")


def _weighted(*options: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Draw from one of ``options`` chosen with the given integer weights."""
    slots = [strategy for weight, strategy in options for _ in range(weight)]
    return st.sampled_from(slots).flatmap(lambda strategy: strategy)


def latencies() -> st.SearchStrategy[float]:
    """Virtual seconds a call takes."""
    return st.sampled_from((0.0, 0.5, 1.0, 2.0, 5.0))


def _usage() -> st.SearchStrategy[dict[str, int] | None]:
    return st.one_of(st.none(), st.fixed_dictionaries({
        "input": st.integers(0, 400), "output": st.integers(0, 400)}))


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v not in (None, [], {})}


@cache
def facts() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Zero to two facts, each citing one or two (real or bogus) invocations."""
    fact = st.fixed_dictionaries({
        "statement": st.sampled_from(_STATEMENTS),
        "citations": st.lists(st.sampled_from(CITATIONS), min_size=1, max_size=2)})
    return st.lists(fact, max_size=2)


@cache
def progress_reports() -> st.SearchStrategy[dict[str, Any]]:
    """A progress report: an assessment or none, facts, maybe missing information."""
    return st.builds(
        lambda assessment, fs, missing: _compact(
            {"assessment": assessment, "facts": fs, "missing_info": missing}),
        st.sampled_from((None, "GAINED", "NO_GAIN")), facts(),
        st.lists(st.sampled_from(_MISSING), max_size=1))


@cache
def drafts() -> st.SearchStrategy[dict[str, Any]]:
    """A DiagnosisDraft: with or without a conclusion, evidence citing real or bogus ids."""
    evidence = st.lists(st.fixed_dictionaries({
        "invocation_id": st.sampled_from(CITATIONS), "claim": st.just("shows the cause")}),
        max_size=2)
    return st.builds(
        lambda conclusion, ev, fs, missing: _compact(
            {"conclusion": conclusion, "evidence": ev, "findings": fs, "missing_info": missing,
             "recommendations": ["Raise the pool size"] if conclusion else []}),
        st.sampled_from((None, "The checkout db pool is exhausted.")), evidence, facts(),
        st.lists(st.sampled_from(_MISSING), max_size=1))


@cache
def _tool_step() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda tool, scope, progress, call_id, latency: _compact(
            {"tool": tool, "scope": dict(scope), "progress": progress, "call_id": call_id,
             "latency_s": latency}),
        st.sampled_from(TOOLS), st.sampled_from(SCOPES), st.none() | progress_reports(),
        st.sampled_from((None, None, "c1", "c2")), st.none() | latencies())


@cache
def _draft_step() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda draft, progress, usage: {"draft": draft,
                                        **_compact({"progress": progress, "usage": usage})},
        drafts(), st.none() | progress_reports(), _usage())


@cache
def model_steps() -> st.SearchStrategy[dict[str, Any]]:
    """One diagnosis-model step of any action: tool, draft, report, invalid, error."""
    return st.one_of(
        _tool_step(),
        _draft_step(),
        st.builds(lambda report: {"report": report}, progress_reports()),
        st.just({"invalid_json": "{the pool is exhausted"}),
        st.just({"schema_invalid": {"conclusion": 42}}),
        st.just({"empty": True}),
        st.just({"error": "model unavailable"}),
    )


@cache
def _cited(k: int) -> st.SearchStrategy[list[str]]:
    """One or two citations of the invocations 1..k a healthy run has made so far."""
    real = [f"inv-{i}" for i in range(1, k + 1)]
    return st.lists(st.sampled_from(real), min_size=1, max_size=2, unique=True)


@cache
def _cited_fact(k: int) -> st.SearchStrategy[dict[str, Any]]:
    """A fact citing one or two of the invocations 1..k."""
    return st.builds(lambda text, cites: {"statement": text, "citations": cites},
                     st.sampled_from(_STATEMENTS), _cited(k))


@cache
def _healthy_progress(k: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda assessment, fs: _compact({"assessment": assessment, "facts": fs}),
                     st.sampled_from(("GAINED", "NO_GAIN")), st.lists(_cited_fact(k), max_size=1))


@cache
def _healthy_final(k: int) -> st.SearchStrategy[dict[str, Any]]:
    progress = _healthy_progress(k) if k else st.just({})
    missing = st.builds(lambda p, missing: {"draft": {"missing_info": [missing]},
                                            **_compact({"progress": p})},
                        progress, st.sampled_from(_MISSING))
    if not k:
        return st.one_of(missing)
    evidence = st.lists(st.builds(lambda i: {"invocation_id": i, "claim": "shows it"},
                                  st.sampled_from([f"inv-{i}" for i in range(1, k + 1)])),
                        min_size=1, max_size=2)
    conclusion = st.builds(
        lambda ev, p: {"draft": {"conclusion": "The checkout db pool is exhausted.",
                                 "evidence": ev, "recommendations": ["Raise the pool"]},
                       **_compact({"progress": p})},
        evidence, progress)
    findings = st.builds(lambda fs, p: {"draft": {"findings": fs}, **_compact({"progress": p})},
                         st.lists(_cited_fact(k), min_size=1, max_size=2), progress)
    return st.one_of(conclusion, missing, findings)


@st.composite
def _healthy_script(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Tool requests with well-formed progress reports, then a draft or a report."""
    steps: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 3))):
        step: dict[str, Any] = {"tool": draw(st.sampled_from(TOOLS)),
                                "scope": dict(draw(st.sampled_from(SCOPES[:3])))}
        if i:
            step["progress"] = draw(_healthy_progress(i))
        steps.append(step)
    steps.append(draw(_healthy_final(len(steps))))
    return steps


_HEALTHY_SCRIPT = _healthy_script()


@cache
def _arbitrary_script() -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(_weighted((2, _tool_step()), (1, model_steps())), min_size=1, max_size=6)


@st.composite
def model_scripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A diagnosis-model script of one to six steps.

    Mostly a healthy script (tool requests with valid progress reports, then a draft with or
    without a conclusion citing real invocations, or a final report) that may have one step
    replaced by an arbitrary one; sometimes a script of arbitrary steps.
    """
    shape = draw(st.sampled_from(("healthy", "healthy", "perturbed", "arbitrary")))
    if shape == "arbitrary":
        return draw(_arbitrary_script())
    steps = draw(_HEALTHY_SCRIPT)
    if shape == "perturbed":  # the final step half of the time: it decides the release
        last = len(steps) - 1
        steps[draw(st.sampled_from((last, last, *range(last))))] = draw(model_steps())
    return steps


def tool_results() -> st.SearchStrategy[dict[str, Any]]:
    """One tool result: evidence, no evidence, an error or an oversize result."""
    kinds = _weighted(
        (3, st.just({"evidence": [{"line": "10:02 checkout: db timeout after 30s"}]})),
        (1, st.just({"no_evidence": True})),
        (1, st.just({"error": "backend down"})),
        (1, st.builds(lambda n: {"oversize": n}, st.sampled_from((100_000, 2_000_000)))),
    )
    return st.builds(lambda kind, latency: _compact({**kind, "latency_s": latency}), kinds,
                     st.none() | latencies())


def tool_specs(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """A scripted tool: a short script of results, then evidence forever."""
    return st.builds(
        lambda latency, script: _compact({
            "required": ["service"] if name == "logs" else [], "latency_s": latency,
            "script": script, "default": {"evidence": [{"tool": name, "line": "evidence"}]}}),
        st.none() | latencies(), st.lists(tool_results(), max_size=2))


def guard_verdicts() -> st.SearchStrategy[Any]:
    """A SemanticGuard verdict, or a short list of verdicts consumed in order."""
    verdict = st.sampled_from(("SUPPORTED", "UNSUPPORTED", "UNAVAILABLE"))
    steps = st.lists(st.builds(lambda v: {"verdict": v}, verdict), min_size=1, max_size=2)
    return _weighted((3, st.just("SUPPORTED")), (2, verdict), (1, steps))


def repair_scripts() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Zero or one EvidenceRepair reply: a repaired draft, invalid JSON, or an error."""
    reply = st.one_of(
        st.builds(lambda d: {"draft": d}, drafts()),
        st.just({"invalid_json": "{not a draft"}),
        st.just({"error": "repair unavailable"}),
    )
    return st.lists(reply, max_size=1)


def routers() -> st.SearchStrategy[Any]:
    """The router: mostly DIAGNOSIS, sometimes another intent or an error."""
    return _weighted((8, st.just("DIAGNOSIS")),
                     (2, st.sampled_from(("SYSTEM_CHAT", "KNOWLEDGE_QUERY"))),
                     (1, st.just({"error": "router unavailable"})))


def configs(defects: Sequence[str] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """A configuration: deadline, budgets, thresholds, policies, and the seeded defects."""
    limit = st.none() | st.integers(1, 5)
    limited = st.builds(
        lambda m, t, tok, b: _compact({"model_calls": m, "tool_calls": t, "tokens": tok,
                                       "bytes": b}),
        limit, limit, st.none() | st.sampled_from((100, 600)),
        st.none() | st.sampled_from((60, 1_000_000)))
    budget = _weighted((2, st.just({})), (1, limited))
    policy = st.builds(
        lambda timeout, notice, reports, detection: {"timeout_progress_fallback": timeout,
                                                     "user_cancel_notice": notice,
                                                     "require_progress_reports": reports,
                                                     "deadline_detection": detection},
        st.booleans(), st.sampled_from(("failure", "silent")), st.booleans(),
        st.sampled_from(("boundary", "instant")))
    return st.builds(
        lambda deadline, b, ng, pv, p: _compact({
            "deadline_s": deadline, "budget": b, "no_gain_threshold": ng,
            "protocol_violation_threshold": pv, "policy": p, "defects": list(defects)}),
        st.sampled_from((60.0, 3.0, 6.0, 10.0)), budget, st.integers(1, 3),
        st.integers(1, 3), policy)


_CALLS = ("model", "tool", "guard", "router", "repair", "responder", "retriever")


def _at() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda when, call, n, tool: _compact(
            {"when": when, "call": call, "n": n, "tool": tool if call == "tool" else None}),
        st.sampled_from(("after", "before")), st.sampled_from(_CALLS), st.integers(1, 3),
        st.none() | st.sampled_from(TOOLS))


def faults() -> st.SearchStrategy[dict[str, Any]]:
    """One fault of any kind of the scenario format (FAULT_KINDS) but :data:`UNGENERATED`."""
    at_s = st.sampled_from((0.1, 0.5, 1.0, 1.5, 2.5, 4.0, 7.0))
    n = st.integers(1, 3)
    tool = st.sampled_from(TOOLS)
    locate = st.one_of(st.builds(lambda a: {"at": a}, _at()),
                       st.builds(lambda t: {"at_s": t}, at_s))
    by_kind: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        "client_disconnect": _weighted(
            (1, locate), (1, st.builds(lambda k: {"sse_event": k}, st.integers(1, 6)))),
        "user_cancel": locate,
        "server_shutdown": locate,
        "deadline": locate,
        "budget_exhausted": st.builds(
            lambda b, a: _compact({"budget": b, "at": a}),
            st.sampled_from(("model_calls", "tool_calls", "tokens", "bytes")),
            st.none() | _at()),
        "no_gain_streak": st.builds(lambda c, k: {"count": c, "n": k}, st.integers(1, 3), n),
        "protocol_violation": st.builds(
            lambda c, k, m: {"count": c, "n": k, "mode": m}, st.integers(1, 3),
            st.integers(2, 4), st.sampled_from(("missing", "invalid", "bad_citation"))),
        "tool_rejection": st.builds(
            lambda r, t, k: {"reason": r, "tool": t, "n": k},
            st.sampled_from(("REQUEST", "ID", "STORE", "AUTH", "READ_ONLY")), tool, n),
        "tool_error": st.builds(
            lambda e, t, k: {"error": e, "tool": t, "n": k},
            st.sampled_from(("execution", "projection", "size", "store")), tool, n),
        "provider_error": st.builds(
            lambda c, k: {"call": c, "n": k},
            st.sampled_from(("model", "guard", "repair", "router", "responder", "retriever")),
            n),
        "latency_spike": st.builds(
            lambda c, k, lat: {"call": c, "n": k, "latency_s": lat},
            st.sampled_from(("model", "guard", "router", "responder")), n,
            st.sampled_from((4.0, 12.0, 90.0))),
        "invalid_draft": st.builds(
            lambda f, k: {"form": f, "n": k},
            st.sampled_from(("invalid_json", "schema_invalid", "empty")), n),
        "semantic_guard": st.builds(lambda v: {"verdict": v},
                                    st.sampled_from(("UNSUPPORTED", "UNAVAILABLE"))),
        "repair_failed": st.builds(lambda f: {"form": f},
                                   st.sampled_from(("still_invalid", "error", "invalid_json"))),
        "router_unavailable": st.just({}),
        "crash": st.builds(lambda a: {"at": a}, _at()),
    }
    assert set(by_kind) == set(FAULT_KINDS) - UNGENERATED
    return _weighted(*((_FAULT_WEIGHTS.get(kind, 2),
                        st.builds(lambda body, kind=kind: {"kind": kind, **body}, strategy))
                       for kind, strategy in by_kind.items()))


_FAULT_WEIGHTS = {"client_disconnect": 4, "user_cancel": 4, "deadline": 4, "budget_exhausted": 3,
                  "crash": 1, "router_unavailable": 1}


def fault_schedules() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Zero to three faults."""
    return st.lists(faults(), max_size=3)


def scenarios(defects: Sequence[str] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """A whole scenario dict, with ``defects`` seeded into its configuration."""
    latency = st.builds(
        lambda r, m, t, g, rep, resp: {"router": r, "model": m, "tool": t, "guard": g,
                                       "repair": rep, "responder": resp},
        latencies(), latencies(), latencies(), latencies(), latencies(), latencies())
    tools = st.fixed_dictionaries({name: tool_specs(name) for name in TOOLS})
    return st.builds(
        lambda router, model, tool_map, guard, repair, config, lat, fs: _compact({
            "name": "search-example",
            "description": "A scenario generated by the property search.",
            "router": router, "model": model, "tools": tool_map, "guard": guard,
            "repair": repair, "config": config, "latency": lat, "faults": fs}),
        routers(), model_scripts(), tools, guard_verdicts(), repair_scripts(),
        configs(defects), latency, fault_schedules())
