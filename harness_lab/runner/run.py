"""Run scenarios: build the harness, play earlier turns, inject faults, check expectations.

A broken file or a crash inside one scenario becomes an ERROR result; every other scenario
still runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_lab.application.components import Components
from harness_lab.application.live import LiveRun
from harness_lab.application.parts import RunParts
from harness_lab.errors import ProcessCrash
from harness_lab.harness import Harness, RunHandle, nth_run_id
from harness_lab.invariants import Violation, check
from harness_lab.outcome_table import OUTCOME_BY_CASE
from harness_lab.ports import CallKind
from harness_lab.record import RunRecord
from harness_lab.runner.expect import Mismatch, compare
from harness_lab.runner.observe import observe
from harness_lab.runner.snapshot import check_snapshot
from harness_lab.scenarios.discovery import (
    CASSETTE_DIRECTORY,
    SelectionError,
    Selector,
    discover,
    select,
)
from harness_lab.scenarios.loader import LoadedScenario, ScenarioError, load_file
from harness_lab.scenarios.match import Shown, plain
from harness_lab.scenarios.spec import Expect, Scenario
from harness_lab.scripted.build import (
    ScenarioLatency,
    build_config,
    build_guard,
    build_model,
    build_repair,
    build_responder,
    build_retriever,
    build_router,
    build_tools,
)
from harness_lab.scripted.inject import FaultPlan
from harness_lab.sse import SseEvent
from harness_lab.store.base import RunStore
from harness_lab.store.memory import MemoryRunStore
from harness_lab.tools.ledger import InvocationLedger
from harness_lab.trace import TraceEvent

if TYPE_CHECKING:
    from harness_lab.runner.results import ResultSet

__all__ = ["CASSETTE_DIRECTORY", "ROW_COLUMNS", "PlannedRun", "ScenarioResult", "ScenarioRun",
           "SelectionError", "Selector", "build_components", "discover", "expectations",
           "plan_paths", "run_paths", "run_plan", "run_scenario", "select"]

ROW_COLUMNS = ("scenario", "intent", "run_state", "release_outcome", "fallback_type",
               "db_status", "expected", "invariants")
"""The columns of :meth:`ScenarioResult.row`, the command line's table of results."""


def _invariant_verdict(violations: Iterable[Violation], wanted: set[str]
                      ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The invariants ``violations`` break that are not ``wanted`` (a scenario's
    ``expect.violations``), and those wanted that held, each sorted."""
    broken = sorted({v.invariant for v in violations})
    return (tuple(n for n in broken if n not in wanted),
            tuple(sorted(wanted - set(broken))))


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """The outcome of one scenario (variant): its record, mismatches and violations."""

    scenario: str
    path: str | None
    description: str = ""
    tags: tuple[str, ...] = ()
    case: str | None = None
    record: RunRecord | None = None
    turns: tuple[RunRecord, ...] = ()
    mismatches: tuple[Mismatch, ...] = ()
    violations: tuple[Violation, ...] = ()
    unexpected: tuple[str, ...] = ()  # invariants broken that the file did not expect
    missing: tuple[str, ...] = ()  # invariants the file expected to break that held
    error: str | None = None
    crashed: bool = False
    stored_row: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    partial_sse: tuple[SseEvent, ...] = ()  # what a crashed run sent before it died
    partial_trace: tuple[TraceEvent, ...] = ()  # what a crashed run traced before it died
    observation: dict[str, Any] | None = None  # what a snapshot pins (observe.py), turns too

    @property
    def ok(self) -> bool:
        """True when every expectation and invariant held and nothing errored."""
        return (self.error is None and not self.mismatches and not self.unexpected
                and not self.missing)

    @property
    def verdict(self) -> str:
        """``ok``, ``FAILED`` (an expectation or invariant did not hold) or ``ERROR``."""
        if self.error is not None:
            return "ERROR"
        return "ok" if self.ok else "FAILED"

    @property
    def expected_text(self) -> str:
        """``ok``, ``ERROR: ...`` or the mismatches."""
        if self.error is not None:
            return f"ERROR: {self.error}"
        return "; ".join(str(m) for m in self.mismatches) or "ok"

    @property
    def invariants_text(self) -> str:
        """``ok``, the names of invariants broken unexpectedly (or expected and held), or
        ``not checked`` when there is no record to check them on."""
        if self.record is None:
            return "not checked"
        parts = list(self.unexpected) + [f"{n} (expected to break)" for n in self.missing]
        return ", ".join(parts) or "ok"

    def rechecked(self) -> ScenarioResult:
        """This result with its record's invariants checked again (a result read back from a
        run log keeps the verdict its run had): an invariant the record now breaks that the
        run did not expect is unexpected, and the result fails. The same result when nothing
        changed."""
        if self.record is None:
            return self
        wanted = {v.invariant for v in self.violations} - set(self.unexpected)
        violations = tuple(check(self.record))
        unexpected, missing = _invariant_verdict(violations, wanted | set(self.missing))
        if (unexpected, missing) == (self.unexpected, self.missing) and \
                set(violations) <= set(self.violations):
            return self
        return replace(self, violations=violations, unexpected=unexpected, missing=missing)

    def row(self) -> dict[str, Any]:
        """The CLI row: exactly :data:`ROW_COLUMNS`."""
        r = self.record
        if r is None:
            status = (self.stored_row or {}).get("status")
            return {"scenario": self.scenario, "intent": None, "run_state": None,
                    "release_outcome": None, "fallback_type": None, "db_status": status,
                    "expected": self.expected_text, "invariants": self.invariants_text}
        return {"scenario": self.scenario, "intent": plain(r.intent),
                "run_state": r.run_state.value, "release_outcome": r.release_outcome.value,
                "fallback_type": plain(r.fallback_type), "db_status": plain(r.stored_status),
                "expected": self.expected_text, "invariants": self.invariants_text}


def expectations(scenario: Scenario) -> Expect:
    """The scenario's expectations, with its outcome-table ``case`` filling the gaps."""
    if scenario.case is None:
        return scenario.expect
    row = OUTCOME_BY_CASE[scenario.case]
    base: dict[str, Any] = {
        "run_state": row.run_state, "release_outcome": row.release_outcome,
        "fallback_type": row.fallback_type if row.fallback_type is not None else "none",
        "db_status": row.db_status,
    }
    base.update(scenario.expect.model_dump(exclude_unset=True))
    return Expect.model_validate(base)


class ScenarioRun:
    """One scenario being run; keeps the harness for inspection (``show``, notebooks).

    Each play of it stores its runs in ``store``, or in a fresh in-memory store when none is
    given (a database's rows, refusals and previous turns, without a database)."""

    def __init__(self, loaded: LoadedScenario | Scenario, *, store: RunStore | None = None,
                 hook: Callable[[Harness], None] | None = None, record_mode: str = "none",
                 base_url: str | None = None, tool_url: str | None = None,
                 update_snapshots: bool = False, observe: bool = True) -> None:
        """``observe=False`` builds a run's observation only when an expectation or a
        snapshot reads it (the explorer judges its variants by their records alone); the
        result's ``observation`` is then None."""
        if isinstance(loaded, Scenario):
            loaded = LoadedScenario(loaded, "<memory>")
        self.loaded = loaded
        self.scenario = loaded.scenario
        self.store = store
        self.hook = hook
        self.harness: Harness | None = None
        self.plan: FaultPlan | None = None
        self.record_mode = record_mode
        self.base_url = base_url
        self.tool_url = tool_url
        self.cassette_report: Any = None
        self.update_snapshots = update_snapshots
        self._recorded: Components | None = None
        self._http: Any = None  # the recorded components' httpx.Client, closed after the run
        self.observe = observe

    def run(self) -> ScenarioResult:
        """Play the scenario; never raises for a failure inside the run."""
        sc = self.scenario
        try:
            from harness_lab.scripted.recorded import replaying

            with replaying(sc, self.loaded.path, record_mode=self.record_mode) as report:
                self.cassette_report = report
                return self._run()
        except Exception as exc:  # a broken scenario is an ERROR row, never a lost sweep
            return replace(self._result(), error=f"{type(exc).__name__}: {exc}")
        finally:
            if self._http is not None:  # a recording's kept-alive connections end with it
                self._http.close()
                self._http = None
                self._recorded = None

    def _result(self) -> ScenarioResult:
        """The result naming this scenario (name, file, description, tags, case) and no
        outcome yet: :func:`dataclasses.replace` gives it one."""
        sc = self.scenario
        return ScenarioResult(sc.name, self.loaded.path, sc.description, tuple(sc.tags),
                              sc.case)

    def _components(self, turn: Any | None, tools: dict[str, Any]) -> Components:
        if self.scenario.recorded is not None:
            if self._recorded is None:
                from harness_lab.recorded.client import http_client
                from harness_lab.scripted.recorded import recorded_components

                self._http = http_client()  # one TLS context per process
                self._recorded = recorded_components(self.scenario, tools, self._http,
                                                     base_url=self.base_url,
                                                     tool_url=self.tool_url)
            return self._recorded
        return build_components(self.scenario, tools, turn)

    def _run(self) -> ScenarioResult:
        sc = self.scenario
        config = build_config(sc.config)
        tools = build_tools(sc.tools)
        self.plan = plan = FaultPlan(sc.faults) if sc.faults else None
        first = self._components(None, tools)
        latency = ScenarioLatency.from_spec(sc.latency)
        ledger = InvocationLedger()  # the session's turns and the run share one ledger
        # the in-memory store keeps the SQL store's rows and refusals (tests/store holds
        # them equal) at a tenth of a database's cost a scenario; pass a store for a database
        store = self.store if self.store is not None else MemoryRunStore()
        self.harness = harness = Harness(first, config, store=store, latency=latency,
                                         ledger=ledger)
        if self.hook is not None:
            self.hook(harness)
        session = sc.session_id or harness.new_session_id()
        earlier: list[RunRecord] = []
        turn_mismatches: list[Mismatch] = []
        turn_observations: list[dict[str, Any]] = []
        turn_errors: list[str] = []
        turn_line = self.loaded.key_lines.get("turns")
        restarted = False  # after a crash, a restarted process counts run ids on
        for t, turn in enumerate(sc.turns):
            turn_plan = FaultPlan(turn.faults) if turn.faults else None
            handle = _submit(harness, turn.query, session, turn_plan, RunParts(
                self._components(turn, tools), config, ledger, latency),
                run_id=nth_run_id(t + 1) if restarted else None)
            expect = turn.expect or Expect()
            try:
                harness.env.run(until=handle.process)
            except ProcessCrash:
                # the session goes on in a restarted process on the same store and ledger
                row = harness.store.get_run(handle.live.run_id)
                turn_mismatches += [replace(m, field=f"turns.{t}.{m.field}")
                                    for m in _crash_mismatches(expect, row)]
                turn_observations.append({"crashed": True, "row": row})
                self.harness = harness = Harness(first, config, store=harness.store,
                                                 latency=latency, ledger=ledger)
                restarted = True
                if self.hook is not None:
                    self.hook(harness)
                continue
            if turn_plan is not None:
                turn_errors += [f"{self.loaded.where(f'turns.{t}.faults.{i}', turn_line)}: {m}"
                                for i, m in turn_plan.unfired()]
            earlier.append(handle.record)
            seen = _observe(handle, turn_plan) if self._reads(turn.expect) else {}
            turn_observations.append(seen)
            if expect.crashed:
                turn_mismatches.append(Mismatch(f"turns.{t}.crashed", True, False))
            if turn.expect is not None:
                turn_mismatches += [replace(m, field=f"turns.{t}.{m.field}")
                                    for m in compare(turn.expect, handle.record, seen)]
        # the components the harness was built with are still unplayed when no turn ran
        components = self._components(None, tools) if sc.turns else first
        handle = _submit(harness, sc.query, session, plan,
                         RunParts(components, config, ledger, latency),
                         run_id=nth_run_id(len(sc.turns) + 1) if restarted else None)
        try:
            harness.env.run(until=handle.process)
        except ProcessCrash as exc:
            return self._crashed(handle.live, str(exc), tuple(earlier))
        expect = expectations(sc)
        observation = _observe(handle, plan) if self._reads(expect) else {}
        if turn_observations:
            observation["turns"] = turn_observations
        return self._judge(handle.record, tuple(earlier), observation, turn_mismatches,
                           turn_errors, expect)

    def _reads(self, expect: Expect | None) -> bool:
        """Whether the run's observation is wanted: always, unless built with
        ``observe=False``; then when ``expect`` says anything or a snapshot pins it."""
        return (self.observe or self.scenario.snapshot
                or (expect is not None and bool(expect.model_fields_set)))

    def _judge(self, record: RunRecord, earlier: tuple[RunRecord, ...],
               observation: dict[str, Any], turn_mismatches: list[Mismatch],
               turn_errors: Sequence[str], expect: Expect) -> ScenarioResult:
        sc = self.scenario
        mismatches = turn_mismatches + compare(expect, record, observation)
        if expect.crashed:
            mismatches.append(Mismatch("crashed", True, False))
        violations = tuple(check(record))
        unexpected, missing = _invariant_verdict(violations, set(expect.violations))
        errors = ([f"{self.loaded.path}: the scenario's script ran out ({record.error}); add "
                   "the missing step or expect the run to end earlier"]
                  if record.error and "ScriptExhausted" in record.error else [])
        errors += turn_errors
        if self.plan is not None:
            errors += [self._fault_message(i, m) for i, m in self.plan.unfired()]
        extra: dict[str, Any] = {}
        if sc.snapshot:
            found, problem, extra = check_snapshot(self.loaded.path, sc.name, observation,
                                                   update=self.update_snapshots)
            mismatches += found
            if problem is not None:
                errors.append(problem)
        return replace(self._result(), record=record, turns=earlier,
                       mismatches=tuple(mismatches), violations=violations,
                       unexpected=unexpected, missing=missing,
                       error="; ".join(errors) or None,
                       stored_row=dict(record.stored_row or {}), extra=extra,
                       observation=observation or None)

    def _fault_message(self, index: int, message: str) -> str:
        lines = self.loaded.fault_lines
        line = lines[index] if index < len(lines) else None
        return f"{self.loaded.where(f'faults.{index}', line)}: {message}"

    def _crashed(self, live: LiveRun, why: str, earlier: tuple[RunRecord, ...]
                 ) -> ScenarioResult:
        sc = self.scenario
        assert self.harness is not None
        row = self.harness.store.get_run(live.run_id)
        expect = expectations(sc)
        mismatches = _crash_mismatches(expect, row)
        if sc.snapshot:  # a crashed run has no finished observation to pin
            mismatches.insert(1 if mismatches and mismatches[0].field == "crashed" else 0,
                              Mismatch("snapshot", Shown("a finished run's observation"),
                                       Shown("none: the host process crashed")))
        trace = tuple(live.ctx.tracer.events) if live.ctx is not None else ()
        return replace(self._result(), turns=earlier, mismatches=tuple(mismatches),
                       crashed=True, stored_row=dict(row) if row else None,
                       extra={"crash": why}, partial_sse=tuple(live.sse.events),
                       partial_trace=trace)


def _crash_mismatches(expect: Expect, row: Any) -> list[Mismatch]:
    """What a crashed run's expectations can be checked on: that it crashed, and the row the
    crash left behind."""
    out: list[Mismatch] = []
    if not expect.crashed:
        out.append(Mismatch("crashed", False, True))
    want = plain(expect.db_status)
    if want is not None and row is not None and row.get("status") != want:
        out.append(Mismatch("db_status", want, row.get("status")))
    return out


def _submit(harness: Harness, query: str, session: str, plan: FaultPlan | None,
            parts: RunParts, run_id: str | None = None) -> RunHandle:
    """Submit one run with ``parts``, or with its fault plan applied to them (and the plan's
    timed faults scheduled); ``run_id`` when the harness does not count it."""
    if plan is None:
        return harness.submit(query, session, parts=parts, run_id=run_id)
    handle = harness.submit(query, session, parts=plan.applied_to(parts), run_id=run_id)
    plan.arm(harness, handle)
    return handle


def build_components(sc: Scenario, tools: dict[str, Any], turn: Any | None = None
                     ) -> Components:
    """Fresh scripted components of a scenario (or of one of its earlier ``turns``)."""
    source = turn if turn is not None else sc
    r = sc.responder
    return Components(
        router=build_router(source.router), model=build_model(source.model),
        guard=build_guard(source.guard if source.guard is not None else sc.guard),
        repair=build_repair(source.repair),
        responder=build_responder(r.text, r.error, r.latency_s, r.usage),
        retriever=build_retriever(sc.retriever.passages, sc.retriever.error,
                                  sc.retriever.latency_s),
        tools=tools)


def _observe(handle: RunHandle, plan: FaultPlan | None) -> dict[str, Any]:
    """The observation of a finished run, with its ProgressSnapshot when it had an agent, and
    the router's and model's requests as its fakes (or its fault plan) received them."""
    live = handle.live
    progress = live.agent.snapshot() if live.agent is not None else None
    routes: Sequence[Any] | None
    steps: Sequence[Any] | None
    if plan is not None:
        routes, steps = plan.requests[CallKind.ROUTER], plan.requests[CallKind.MODEL]
    else:
        components = handle.parts.components
        routes = getattr(components.router, "requests", None)
        steps = getattr(components.model, "requests", None)
    return observe(handle.record, progress=progress, routes=routes, steps=steps)


def run_scenario(scenario: LoadedScenario | Scenario, *, store: RunStore | None = None,
                 update_snapshots: bool = False) -> ScenarioResult:
    """Run one scenario (variant); ``update_snapshots`` writes its snapshot (if it keeps one)
    instead of comparing with it. TypeError for a path: files are run by :func:`run_paths`."""
    if not isinstance(scenario, LoadedScenario | Scenario):
        raise TypeError(f"run_scenario takes a loaded scenario (load_file(path)[0]) or a "
                        f"Scenario, not {type(scenario).__name__}; run_paths([path]) runs "
                        "files")
    return ScenarioRun(scenario, store=store, update_snapshots=update_snapshots).run()


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One entry of a run plan: a scenario to run, or the ERROR result it already is (a file
    that does not load, a duplicate name)."""

    loaded: LoadedScenario | None = None
    result: ScenarioResult | None = None

    def run(self, *, update_snapshots: bool = False) -> ScenarioResult:
        """Run the scenario (or return the error result)."""
        if self.result is not None:
            return self.result
        assert self.loaded is not None
        return run_scenario(self.loaded, update_snapshots=update_snapshots)


def plan_paths(paths: Iterable[str | Path], *, tags: Sequence[str] = ()) -> list[PlannedRun]:
    """Load every scenario under ``paths`` (``FILE[variant]`` selects one variant) without
    running any; a broken file is one ERROR entry. Raise :class:`SelectionError` for a
    variant a file does not have, before anything runs."""
    plan: list[PlannedRun] = []
    seen: dict[str, str] = {}
    for selector in map(Selector.parse, paths):
        for path in discover([selector.path]):
            try:
                loaded = load_file(path)
            except ScenarioError as exc:
                plan.append(PlannedRun(result=ScenarioResult(path.stem, str(path),
                                                             error=str(exc))))
                continue
            for item in select(selector, loaded):
                if tags and not set(tags) & set(item.scenario.tags):
                    continue
                name = item.scenario.name
                if name in seen and seen[name] != str(path):
                    plan.append(PlannedRun(result=ScenarioResult(name, str(path), error=(
                        f"{path}: scenario name {name!r} is already used by {seen[name]}"))))
                    continue
                seen[name] = str(path)
                plan.append(PlannedRun(loaded=item))
    return plan


def run_paths(paths: Iterable[str | Path], *, tags: Sequence[str] = (),
              progress: bool = False,
              on_result: Callable[[ScenarioResult], None] | None = None) -> ResultSet:
    """Run every scenario under ``paths``; a broken file becomes one ERROR result.

    ``FILE[variant]`` runs one matrix variant. ``progress=True`` shows a tqdm bar (in a
    notebook too) counting scenario runs; ``on_result`` is called after each run (the command
    line's progress bar).
    """
    plan = plan_paths(paths, tags=tags)
    if not progress:
        return run_plan(plan, on_result=on_result)
    from harness_lab.terminal.progress import progress_bar

    return run_plan(progress_bar(plan, total=len(plan), desc="scenario runs"), on_result=on_result)


def run_plan(plan: Iterable[PlannedRun], *, update_snapshots: bool = False,
             on_result: Callable[[ScenarioResult], None] | None = None) -> ResultSet:
    """Run each entry of ``plan`` (from :func:`plan_paths`) in order; ``on_result`` is
    called after each run. ``update_snapshots`` writes snapshots instead of comparing with
    them."""
    from harness_lab.runner.results import ResultSet

    results = ResultSet()
    for entry in plan:
        result = entry.run(update_snapshots=update_snapshots)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
