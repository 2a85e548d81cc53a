"""The scenario library as a conformance suite: every scenario against one harness URL, or
against ``harness-lab serve`` processes started with the scenarios' configurations (one for
the scenarios that share one).

:func:`run_suite` starts the scripted providers once, plays each scenario
(:func:`~harness_lab.live.conform.conform_scenario`) and returns the results with the parity
figure: the share of applicable scenarios whose simulated and live outcomes agree.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from harness_lab.live.adapter import Adapter, DatabaseSpec
from harness_lab.live.conform import (
    ConformResult,
    Tolerance,
    conform_scenario,
    default_tolerance,
    not_applicable,
)
from harness_lab.live.sources import http_terms
from harness_lab.parent_watch import watched_by_this_process
from harness_lab.scenarios import faults as fs
from harness_lab.scenarios.loader import LoadedScenario
from harness_lab.scenarios.spec import Scenario
from harness_lab.scripted import ProvidersServer

__all__ = ["ServeProcess", "SuiteReport", "configured", "run_suite"]

_LISTENING = re.compile(r"listening on (http://[^\s(]+)")

WARM_UP = Scenario.model_validate({
    "name": "conform-warm-up", "description": "One diagnosis run that warms a fresh server.",
    "query": "conform warm-up", "model": [{"draft": {"missing_info": ["nothing"]}}]})
"""The run a fresh server plays before the scenario's: its first run pays the process's
imports and first connections, which the scenario's deadlines must not."""


@dataclass(frozen=True, slots=True)
class SuiteReport:
    """Every scenario's result, and the parity figure."""

    results: tuple[ConformResult, ...]
    serves: int = 0
    """How many ``harness-lab serve`` processes were started for it (0 against a URL)."""
    tolerance: Tolerance | None = None
    """Within what live times and durations matched the expected ones."""

    def counts(self) -> dict[str, int]:
        """Scenarios by verdict, and how many applicable ones agree with the simulation."""
        verdicts = [r.verdict for r in self.results]
        compared = [r for r in self.results if r.applicable and r.agrees is not None]
        return {"scenarios": len(verdicts), "pass": verdicts.count("pass"),
                "fail": verdicts.count("fail"), "error": verdicts.count("error"),
                "n/a": verdicts.count("n/a"), "compared": len(compared),
                "agree": sum(1 for r in compared if r.agrees)}

    @property
    def parity(self) -> float | None:
        """Agreeing share of the applicable scenarios compared (None: none compared)."""
        c = self.counts()
        return c["agree"] / c["compared"] if c["compared"] else None

    @property
    def ok(self) -> bool:
        """Every applicable scenario passed."""
        return all(r.verdict in ("pass", "n/a") for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        """JSON data."""
        return {"ok": self.ok, "parity": self.parity, "counts": self.counts(),
                "serves": self.serves,
                "tolerance": None if self.tolerance is None else {
                    "seconds": self.tolerance.seconds, "share": self.tolerance.share},
                "results": [r.to_dict() for r in self.results]}


def configured(sc: Scenario) -> Scenario:
    """``sc`` with the faults holding from its start applied to its configuration and tools
    (:func:`~harness_lab.scenarios.faults.start_configuration`, as a simulated run's fault
    plan applies them), and no faults left: what a harness is started with to play it, since
    a live harness can be configured, not wrapped."""
    start = fs.start_configuration(sc.faults, sc.tools)
    config = sc.config
    changes: dict[str, Any] = {}
    if start.deadline_s is not None:
        changes["deadline_s"] = start.deadline_s
    if start.exhausted:
        changes["budget"] = config.budget.model_copy(update={b: 0 for b in start.exhausted})
    if start.unauthorized:
        changes["authorized_tools"] = start.authorized(config.authorized_tools, sc.tools)
    tools = {name: t.model_copy(update={"read_only": False} if name in start.writable else {})
             for name, t in sc.tools.items()}
    return sc.model_copy(update={"config": config.model_copy(deep=True, update=changes),
                                 "tools": tools, "faults": [], "matrix": None,
                                 "expect_when": [], "sweep": None})


class ServeProcess:
    """``harness-lab serve`` in a child process for one scenario, on a free local port."""

    def __init__(self, sc: Scenario, providers_url: str, db: str, *, time_scale: float,
                 workdir: Path, extra: Sequence[str] = ()) -> None:
        served = configured(sc)
        data = served.model_dump(mode="json", by_alias=True, exclude_none=True)
        # the configuration whole: a null there is a value (``budget.tokens: null`` is no
        # limit), where leaving it out would give the server the default
        data["config"] = served.config.model_dump(mode="json", by_alias=True)
        data.pop("$schema", None)
        path = workdir / "scenario.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        self.command = [sys.executable, "-m", "harness_lab", "serve", "--scenario", str(path),
                        "--provider-url", f"{providers_url}/v1", "--tool-url", providers_url,
                        "--db", db, "--port", "0", "--time-scale", repr(time_scale), *extra]
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self, timeout_s: float = 30.0) -> str:
        """Start the server and return its URL once it answers ``/healthz``."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **watched_by_this_process()}
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, env=env)
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout_s
        seen: list[str] = []
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            seen.append(line.rstrip())
            m = _LISTENING.search(line)
            if m:
                self.url = m.group(1).rstrip("/;")
                break
        if not self.url:
            self.stop()
            raise RuntimeError("harness-lab serve did not start: " + " | ".join(seen[-5:]))
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/healthz", timeout=2.0).status_code == 200:
                    return self.url
            except httpx.HTTPError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"harness-lab serve at {self.url} never answered /healthz")

    def stop(self) -> None:
        """Stop the server (this process's own child, by its pid)."""
        p = self.process
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        if p is not None and p.stdout is not None:
            p.stdout.close()


def run_suite(planned: Sequence[LoadedScenario | ConformResult], *, url: str | None,
              adapter: Adapter, time_scale: float, db: str | None = None,
              on_result: Callable[[ConformResult], None] | None = None,
              timeout_s: float = 60.0, providers_port: int = 0,
              tolerance: Tolerance | None = None, defects: Sequence[str] = ()
              ) -> SuiteReport:
    """Play every planned scenario (a ConformResult stands for one that failed to load);
    the report lists them in the planned order, ``on_result`` hears of each as it ends.
    Live times and durations match the expected ones within ``tolerance`` (None: the
    :func:`~harness_lab.live.conform.default_tolerance` of ``time_scale``).

    ``url`` None: play the scenarios on ``harness-lab serve`` processes started with their
    configuration, those with the same :func:`http_terms` one after another on one serve
    (in the planned order of the first of them), storing runs in ``db`` (a temporary SQLite
    file by default). The scripted providers listen on ``providers_port`` (0: a free one),
    where a harness at ``url`` must call them. ``defects`` are seeded into every serve's
    configuration (not into the scenarios, which keep their expectations): how a seeded defect
    shows live.
    """
    results: dict[int, ConformResult] = {}
    tolerance = tolerance or default_tolerance(time_scale)
    with ProvidersServer(time_scale=time_scale, compensate=True,
                         port=providers_port) as providers, \
            tempfile.TemporaryDirectory(prefix="conform-") as tmp:
        store = db or f"sqlite:///{Path(tmp) / 'runs.db'}"
        serving = _Serving(providers, store, Path(tmp), time_scale, tuple(defects))
        try:
            for i in _play_order(planned) if url is None else range(len(planned)):
                entry = planned[i]
                if isinstance(entry, ConformResult):
                    result = entry
                else:
                    result = _one(entry, url, providers, adapter, time_scale, serving,
                                  timeout_s, tolerance)
                results[i] = result
                if on_result is not None:
                    on_result(result)
        finally:
            serving.stop()
    return SuiteReport(tuple(results[i] for i in range(len(planned))), serves=serving.started,
                       tolerance=tolerance)


def _play_order(planned: Sequence[LoadedScenario | ConformResult]) -> list[int]:
    """The indices of ``planned`` with the scenarios of one serve configuration together,
    each group where its first scenario was planned (a stable sort: the planned order within
    a group; scenarios that need no serve keep their places)."""
    first: dict[str, int] = {}
    keys = []
    for i, entry in enumerate(planned):
        if isinstance(entry, ConformResult) or not_applicable(entry.scenario, configurable=True):
            keys.append(i)
        else:
            keys.append(first.setdefault(http_terms(configured(entry.scenario)), i))
    return sorted(range(len(planned)), key=lambda i: (keys[i], i))


class _Serving:
    """The ``harness-lab serve`` of the scenario played last, kept while the next ones have
    the same :func:`http_terms` (starting one takes about a second)."""

    def __init__(self, providers: ProvidersServer, store: str, workdir: Path,
                 time_scale: float, defects: tuple[str, ...] = ()) -> None:
        self.providers = providers
        self.defects = defects
        self.store = store
        self.workdir = workdir
        self.time_scale = time_scale
        self.terms: str | None = None
        self.serve: ServeProcess | None = None
        self.started = 0
        """How many serves it started."""

    def base_for(self, sc: Scenario) -> str:
        """The URL of a serve configured for ``sc``: the running one when its terms are the
        same and it still runs, else a fresh one, warmed up (RuntimeError, OSError or
        httpx.HTTPError when it cannot start)."""
        terms = http_terms(configured(sc))
        serve = self.serve
        if (serve is not None and terms == self.terms and serve.process is not None
                and serve.process.poll() is None):
            return serve.url
        self.stop()
        if self.defects:
            sc = sc.model_copy(update={"config": sc.config.model_copy(
                update={"defects": [*sc.config.defects, *self.defects]})})
        serve = ServeProcess(sc, self.providers.url, self.store, time_scale=self.time_scale,
                             workdir=self.workdir)
        self.started += 1
        try:
            base = serve.start()
            _warm_up(base, self.providers, self.time_scale)
        except BaseException:
            serve.stop()
            raise
        self.serve, self.terms = serve, terms
        return base

    def stop(self) -> None:
        """Stop the kept serve, if any."""
        if self.serve is not None:
            self.serve.stop()
        self.serve, self.terms = None, None


def _one(loaded: LoadedScenario, url: str | None, providers: ProvidersServer,
         adapter: Adapter, time_scale: float, serving: _Serving, timeout_s: float,
         tolerance: Tolerance | None) -> ConformResult:
    from harness_lab.runner.run import run_scenario

    sc = loaded.scenario
    configurable = url is None
    simulated = run_scenario(loaded)
    if url is not None or not_applicable(sc, configurable=True):
        return conform_scenario(loaded, url or "http://127.0.0.1:9", providers, adapter,
                                time_scale=time_scale, configurable=configurable,
                                timeout_s=timeout_s, simulated=simulated,
                                tolerance=tolerance)
    try:
        base = serving.base_for(sc)
    except (RuntimeError, OSError, httpx.HTTPError) as exc:
        return ConformResult(sc.name, loaded.path, "error", (str(exc),))
    local = adapter.model_copy(update={"database": DatabaseSpec(url=serving.store)})
    result = conform_scenario(loaded, base, providers, local, time_scale=time_scale,
                              configurable=True, timeout_s=timeout_s, simulated=simulated,
                              tolerance=tolerance)
    if result.verdict == "error":  # whatever went wrong, the next scenario gets a fresh serve
        serving.stop()
    return result


def _warm_up(base: str, providers: ProvidersServer, time_scale: float) -> None:
    """Play :data:`WARM_UP` on the server at ``base`` to its end."""
    providers.load(WARM_UP, time_scale=time_scale)
    with httpx.stream("POST", f"{base}/chat", json={"query": WARM_UP.query, "sessionId": None},
                      timeout=30.0) as response:
        for _ in response.iter_lines():
            pass
