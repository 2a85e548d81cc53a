"""Shared builders: a harness on scripted fakes, with every default overridable; and the
layers of the suite, told from the fixtures each test uses (markers in pyproject.toml)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness_lab.application.components import Components
from harness_lab.cli import main
from harness_lab.config import HarnessConfig
from harness_lab.fakes import (
    Evidence,
    ScriptedModel,
    ScriptedRepair,
    ScriptedResponder,
    ScriptedRetriever,
    ScriptedRouter,
    ScriptedSemanticGuard,
    ScriptedTool,
)
from harness_lab.harness import Harness
from harness_lab.runner.results import ResultSet
from harness_lab.runner.run import run_paths
from tests.postgres import postgres_server, postgres_url

__all__ = ["postgres_server", "postgres_url"]  # the throwaway PostgreSQL server's fixtures


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's own ``pytester``, whose sessions (in this process or another) load no
    Arize Phoenix plugin, as pyproject's addopts keep it out of this one: arize-phoenix (the
    test extra's, for tests/otel/test_phoenix.py) registers a plugin that takes some 20 s to
    import and cannot be imported twice in one process."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:phoenix")
    return pytester

@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers more than the cores this process may use. About a fifth of
    the workers' time waits on servers that play in real time, during which the extra
    workers keep the cores busy (docs/development.md, "Running the tests", has the figures).
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` and ``-n logical`` keep their meaning."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.option.numprocesses != "auto":
        return None
    return len(os.sched_getaffinity(0)) + 2


INV1, INV2, INV3 = "run-000001-inv-1", "run-000001-inv-2", "run-000001-inv-3"


def standard_tools(**overrides: Any) -> list[ScriptedTool]:
    """logs, metrics and traces tools that find evidence for any scope."""
    tools = {
        "logs": ScriptedTool("logs", default=Evidence(({"line": "timeout after 30s"},),
                                                      latency_s=2.0)),
        "metrics": ScriptedTool("metrics", default=Evidence(({"pool_use": 1.0},),
                                                            latency_s=1.0)),
        "traces": ScriptedTool("traces", default=Evidence(({"span": "db.query 29s"},),
                                                          latency_s=1.0)),
    }
    tools.update(overrides)
    return list(tools.values())


def scripted_components(steps: Sequence[Any] = (), *, router: Any = "DIAGNOSIS",
                        guard: Any = "SUPPORTED", repair: Sequence[Any] = (),
                        responder: Any = None, retriever: Any = None, tools: Any = None,
                        across_runs: bool = False) -> Components:
    """Components on scripted fakes: the diagnosis model plays ``steps`` (through successive
    runs when ``across_runs``, else from the top for each run), the router answers ``router``,
    the guard ``guard``; the responder and the retriever give their defaults unless told,
    and the tools are the standard ones unless given."""
    return Components(
        router=ScriptedRouter(router), model=ScriptedModel(steps, across_runs=across_runs),
        guard=ScriptedSemanticGuard(guard), repair=ScriptedRepair(list(repair)),
        responder=ScriptedResponder() if responder is None else ScriptedResponder(responder),
        retriever=ScriptedRetriever(retriever),
        tools=standard_tools() if tools is None else tools)


def build(steps: Sequence[Any], *, tools: Sequence[ScriptedTool] | None = None,
          router: Any = "DIAGNOSIS", guard: Any = "SUPPORTED", repair: Sequence[Any] = (),
          config: HarnessConfig | None = None, across_runs: bool = False,
          **harness_kw: Any) -> Harness:
    """A harness on :func:`scripted_components` whose diagnosis model plays ``steps``."""
    components = scripted_components(steps, router=router, guard=guard, repair=repair,
                                     tools=tools, across_runs=across_runs)
    return Harness(components, config, **harness_kw)


LAYER_OF_FIXTURE = {"browser": "browser", "postgres_url": "postgres",
                    "postgres_server": "postgres"}
"""A test that uses one of these fixtures, itself or through another, is in its layer."""

OUTSIDE_THE_QUICK_LAYER = ("browser", "postgres", "notebook", "live")
"""Layers whose tests are ``slow`` too: each starts a program besides the test's Python (a
browser, a database server, a notebook kernel, a served harness on a socket), one a developer
may not have installed or that takes seconds to start and stop."""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with the layers of the fixtures it uses, and as ``slow`` when one of
    its layers is outside the quick layer; then put the files that hold a slow test first,
    each file's tests in their order, so that workers taking a file at a time start the long
    ones early and end on quick ones rather than wait for one long file at the end."""
    for item in items:
        for name in getattr(item, "fixturenames", ()):
            if name in LAYER_OF_FIXTURE:
                item.add_marker(LAYER_OF_FIXTURE[name])
        if (any(item.get_closest_marker(layer) for layer in OUTSIDE_THE_QUICK_LAYER)
                and item.get_closest_marker("slow") is None):
            item.add_marker("slow")
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


@pytest.fixture(autouse=True, scope="session")
def _run_logs_in_a_temporary_directory(tmp_path_factory: pytest.TempPathFactory
                                       ) -> Iterator[None]:
    """Commands the tests run write their run logs to a temporary directory, never into the
    work tree (a test that wants another sets the variable itself), and print no GitHub
    annotations when the suite itself runs on GitHub Actions."""
    patch = pytest.MonkeyPatch()
    patch.setenv("HARNESS_LAB_LOG_DIR", str(tmp_path_factory.mktemp("harness_logs")))
    patch.delenv("GITHUB_ACTIONS", raising=False)
    yield
    patch.undo()


@pytest.fixture
def make_harness() -> Any:
    """The ``build`` function, as a fixture."""
    return build


LIBRARY = Path(__file__).resolve().parents[1] / "scenarios"
"""The scenario library of the repository."""

OUTCOMES = LIBRARY / "outcomes"
"""The scenarios of the outcome table, one a row."""


def outcomes_log(directory: Path) -> Path:
    """The run log ``harness-lab run`` writes to ``directory`` for :data:`OUTCOMES`."""
    assert main(["run", str(OUTCOMES), "-q", "--format", "csv", "--log-dir",
                 str(directory)]) == 0
    (path,) = directory.glob("*.jsonl")
    return path


def tampered_log(log: Path, scenario: str, change: Callable[[dict[str, Any]], None],
                 out: Path) -> Path:
    """A copy of the run log ``log``, written to ``out``, whose ``scenario``'s record
    ``change`` edited as JSON data (as a clock bug or a hand-edited copy would)."""
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    (entry,) = [line for line in lines if line.get("scenario") == scenario]
    change(entry["record"])
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return out


def finished_before_created(record: dict[str, Any]) -> None:
    """A run record's stored row and its own finish a second before the run started."""
    record["stored_row"]["finished_at"] = record["finished_at"] = record["started_at"] - 1.0


@pytest.fixture(scope="session")
def library() -> ResultSet:
    """Every scenario of the library, run live once per test session."""
    return run_paths([LIBRARY])
