"""pytest plugin: every ``scenarios/**/*.yaml`` file is collected as test items.

A YAML file is a scenario file when a directory named ``scenarios`` lies on its path from
pytest's rootdir (the rootdir itself included) and no directory named ``cassettes`` does;
directories above the rootdir never count (outside the rootdir, the invocation directory
stands in for it). Registered through the ``pytest11`` entry point. Each scenario (each matrix
variant) is one item, marked with its tags so ``-m tag`` selects them (``--scenario-tag`` does
too). A failing item shows expected against observed states, the broken invariants and the
run's timeline.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from harness_lab.runner.run import CASSETTE_DIRECTORY, ScenarioResult, run_scenario
from harness_lab.runner.snapshot import SNAPSHOT_DIRECTORY
from harness_lab.scenarios.loader import LoadedScenario, ScenarioError, load_file

__all__ = ["SCENARIO_DIRECTORY", "ScenarioFailed", "ScenarioFile", "ScenarioItem",
           "is_scenario_file"]

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
"""``--record-mode`` values (pytest-recording's): ``none`` replays recorded scenarios."""

SCENARIO_DIRECTORY = "scenarios"
"""YAML files below a directory of this name (within pytest's rootdir) are scenario files."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--scenario-tag TAG`` (repeatable), ``--no-scenarios``, ``--record-mode``, the run
    log's options and ``--scenario-otlp URL``."""
    group = parser.getgroup("harness_lab")
    group.addoption("--scenario-tag", action="append", default=[],
                    help="only run scenarios carrying this tag")
    group.addoption("--no-scenarios", action="store_true",
                    help="do not collect scenario YAML files")
    group.addoption("--snapshot-update", action="store_true",
                    help="write the snapshots of scenarios with `snapshot: true` instead of "
                         "comparing with them, and remove snapshots no scenario uses")
    if importlib.util.find_spec("pytest_recording") is None:  # else its option serves both
        group.addoption("--record-mode", default="none", choices=RECORD_MODES,
                        help="record mode of recorded scenarios' cassettes: none (replay "
                             "only, the default), once, new_episodes, all, rewrite")
    from harness_lab.logs.pytest_log import add_options
    from harness_lab.otel.pytest_otlp import add_option

    add_options(group)
    add_option(group)


def pytest_configure(config: pytest.Config) -> None:
    """Prepare the run log of the scenario items (see :mod:`harness_lab.logs.pytest_log`)
    and their OTLP export (:mod:`harness_lab.otel.pytest_otlp`)."""
    from harness_lab.logs.pytest_log import open_log
    from harness_lab.otel.pytest_otlp import open_export
    from harness_lab.pytest_session import distributing

    open_export(config)
    open_log(config)
    if distributing(config):
        config.pluginmanager.register(_WorkerFiles(config), "harness_lab_collected_files")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the run log's footer; send the runs still queued for export."""
    from harness_lab.logs.pytest_log import close
    from harness_lab.otel import pytest_otlp

    close(session.config)
    pytest_otlp.close(session.config)
    from harness_lab.pytest_session import handed_over

    handed = handed_over(session.config)
    if handed is not None:  # the controller checks the snapshots' use
        collected: set[Path] = session.config.stash.get(_COLLECTED, set())
        handed[_FILES] = sorted(map(str, collected))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Name the run log of the scenario items, when one was written, and list the snapshots
    no collected scenario file uses (removing them under ``--snapshot-update``)."""
    from harness_lab.logs.pytest_log import written
    from harness_lab.otel.pytest_otlp import summary_line

    path = written(config)
    if path is not None:
        terminalreporter.write_line(f"harness-lab run log: {path}")
    exported = summary_line(config)
    if exported is not None:
        terminalreporter.write_line(exported)
    files = config.stash.get(_COLLECTED, set())
    if files:
        from harness_lab.runner.snapshot import unused_report, unused_snapshots

        update = bool(config.getoption("--snapshot-update"))
        unused = unused_snapshots(sorted(files), remove=update)
        for line in unused_report(unused, removed=update, flag="--snapshot-update"):
            terminalreporter.write_line(line)


_COLLECTED = pytest.StashKey[set[Path]]()
"""The scenario files collected in this session (whose snapshots are checked for use)."""
_FILES = "harness_lab_collected"
"""The key of the scenario files a pytest-xdist worker collected, in what it hands over."""


class _WorkerFiles:
    """The controller's plugin that gathers the scenario files its workers collected (each
    worker collects them all), so that unused snapshots are found under pytest-xdist too."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Add the files the worker ``node`` collected."""
        files = getattr(node, "workeroutput", {}).get(_FILES, ())
        self.config.stash.setdefault(_COLLECTED, set()).update(map(Path, files))



def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    """Collect YAML files that live under a ``scenarios`` directory (see the module doc), and
    a YAML file named on the command line wherever it lies, as pytest collects a test module
    named there whatever its name."""
    config = parent.config
    if config.getoption("--no-scenarios"):
        return None
    roots = (config.rootpath, config.invocation_params.dir)
    named = file_path.suffix in (".yaml", ".yml") and parent.session.isinitpath(file_path)
    if not (named or is_scenario_file(file_path, roots)):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A directory holding a scenario "file" that is not a regular file (a FIFO, a device, a
    socket named ``*.yaml``) is collected so that entry is a failing item: pytest itself
    passes over such entries silently. Any other directory is left to pytest."""
    config = parent.config
    if config.getoption("--no-scenarios") or (path / "__init__.py").is_file():
        return None
    roots = (config.rootpath, config.invocation_params.dir)
    if not _special_entries(path, roots):
        return None
    return ScenarioDirectory.from_parent(parent, path=path)  # type: ignore[no-any-return]


def _special_entries(path: Path, roots: Sequence[Path]) -> list[Path]:
    """The scenario entries of ``path`` that are neither directories nor regular files."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return []  # pytest reports a directory it cannot list
    return sorted(Path(e.path) for e in entries
                  if not e.is_dir() and not e.is_file()
                  and is_scenario_file(Path(e.path), roots))


class ScenarioDirectory(pytest.Dir):  # type: ignore[misc]  # Dir is final for typing only
    """A directory collected as pytest does, plus one failing item per scenario entry that
    is not a regular file (see :func:`pytest_collect_directory`)."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        """What pytest collects here, then the special entries' failing items."""
        yield from super().collect()
        roots = (self.config.rootpath, self.config.invocation_params.dir)
        for entry in _special_entries(self.path, roots):
            yield ScenarioFile.from_parent(self, path=entry)


def is_scenario_file(path: Path, roots: Sequence[Path]) -> bool:
    """True for a YAML file with a ``scenarios`` and no ``cassettes`` directory on its way down
    from the first of ``roots`` that holds it (that root's own name included); False for a
    file outside every root."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    for root in roots:
        try:
            below = path.relative_to(root).parts[:-1]
        except ValueError:
            continue
        directories = (root.name, *below)
        return (SCENARIO_DIRECTORY in directories and CASSETTE_DIRECTORY not in directories
                and SNAPSHOT_DIRECTORY not in below)
    return False


class ScenarioFailed(Exception):
    """A scenario's expectations or invariants did not hold."""

    def __init__(self, result: ScenarioResult) -> None:
        self.result = result
        super().__init__(result.scenario)


class ScenarioFile(pytest.File):
    """One scenario file: one item per scenario (matrix variant)."""

    def collect(self) -> Iterator[pytest.Item]:
        """One item per scenario variant, or one failing item for a malformed file."""
        try:
            loaded = load_file(self.path)
        except ScenarioError as exc:
            yield BrokenScenarioItem.from_parent(self, name=self.path.stem, error=exc)
            return
        self.config.stash.setdefault(_COLLECTED, set()).add(self.path)
        wanted = set(self.config.getoption("--scenario-tag") or ())
        for item in loaded:
            tags = set(item.scenario.tags)
            if wanted and not wanted & tags:
                continue
            test = ScenarioItem.from_parent(self, name=item.scenario.name, loaded=item)
            for tag in sorted(tags):
                marker = tag.replace("-", "_")
                self.config.addinivalue_line("markers", f"{marker}: scenario tag {tag}")
                test.add_marker(getattr(pytest.mark, marker))
            yield test


class ScenarioItem(pytest.Item):
    """One scenario run as a test."""

    def __init__(self, *, loaded: LoadedScenario, **kw: Any) -> None:
        super().__init__(**kw)
        self.loaded = loaded

    def runtest(self) -> None:
        """Run the scenario; fail when an expectation or invariant does not hold."""
        started_at = time.time()
        mode = self.config.getoption("--record-mode", "none") or "none"
        if mode != "none" and self.loaded.scenario.recorded is not None:
            from harness_lab.recorded.recording import recorded_result

            result = recorded_result(self.loaded, mode)
        else:
            result = run_scenario(self.loaded,
                                  update_snapshots=self.config.getoption("--snapshot-update"))
        from harness_lab.logs.pytest_log import log_result

        log_result(self.config, result)
        from harness_lab.otel.pytest_otlp import send_result

        send_result(self.config, result, started_at)
        if not result.ok:
            raise ScenarioFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        """Expected against observed, broken invariants and the timeline."""
        if isinstance(excinfo.value, ScenarioFailed):
            return explain(excinfo.value.result, root=self.config.rootpath)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from."""
        return self.path, 0, f"scenario: {self.name}"


class BrokenScenarioItem(pytest.Item):
    """A scenario file that does not load: fails with every problem named."""

    def __init__(self, *, error: ScenarioError, **kw: Any) -> None:
        super().__init__(**kw)
        self.error = error

    def runtest(self) -> None:
        """Fail with the file's problems."""
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        """Every problem of the file, with file, line and field."""
        return f"malformed scenario file:\n{self.error}"

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from."""
        return self.path, 0, f"scenario file: {self.name}"


def explain(result: ScenarioResult, *, root: Path | None = None) -> str:
    """Expected against observed, broken invariants, and the timeline of the run; the
    scenario and each failed expectation with its ``file:line``, as ``harness-lab run``
    names them (the file relative to ``root`` when it lies below it), and a missing state as
    ``none``, as scenario files write it."""
    from harness_lab.report.run_html import expectation_location, result_location

    def shown(where: str | None) -> str | None:
        if where is None or root is None or result.path is None:
            return where
        path = Path(result.path)
        if not path.is_relative_to(root):
            return where
        return str(path.relative_to(root)) + where[len(result.path):]

    lines = [f"scenario {result.scenario} ({shown(result_location(result)) or '<memory>'}): "
             f"{result.description}"]
    if result.error:
        lines.append(f"error: {result.error}")
    for m in result.mismatches:
        at = shown(expectation_location(result, m.field))
        lines.append(f"  {at}: {m}" if at else f"  {m}")
        lines.extend(f"    {line}" for line in m.detail.splitlines())
    for v in result.violations:
        lines.append(f"  invariant {v.invariant}: {v.message}")
    for name in result.missing:
        lines.append(f"  invariant {name} was expected to break but held")
    r = result.record
    if r is not None:
        lines.append(f"observed: run_state={r.run_state.value} "
                     f"release_outcome={r.release_outcome.value} "
                     f"fallback_type={_state(r.fallback_type)} "
                     f"db_status={_state(r.stored_status)}")
        lines.append("timeline:")
        for t in r.trace:
            lines.append(f"  t={t.t:8.3f} {t.type.value:<24} {t.status.value}")
        lines.append("sse: " + " -> ".join(r.sse_kinds()))
    return "\n".join(lines)


def _state(member: Enum | None) -> str:
    """A state axis's value; ``none`` where the run has none, as scenario files write it."""
    return "none" if member is None else str(member.value)
