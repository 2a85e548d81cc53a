"""A run's results as JUnit XML, the report CI services read (GitHub test reporters, GitLab,
Jenkins).

One ``<testsuite>`` per scenario file (its ``name`` and ``file`` the path), one
``<testcase>`` per scenario (variant) in it, named by the scenario, its ``classname`` the
file's path dotted without its extension as pytest writes a test module's. A scenario that did
not hold has a ``<failure>`` listing each mismatch and broken invariant with its
``file:line``; one that errored (a file that does not load, a run that raised) an
``<error>``. Each testcase's ``<system-out>`` gives the states the run ended in, and its
suite's ``<properties>`` the same as ``SCENARIO.run_state`` and so on. The XML validates
against the JUnit schema of Jenkins's xUnit plugin (``junit-10.xsd``), which allows no
``properties``, ``file`` or ``line`` on a testcase.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from harness_lab.runner.results import first_difference, location
from harness_lab.scenarios.locate import expectation_line

if TYPE_CHECKING:
    from harness_lab.runner.run import ScenarioResult

__all__ = ["STATE_PROPERTIES", "junit_xml", "located_problems"]

STATE_PROPERTIES = ("run_state", "release_outcome", "fallback_type", "db_status")
"""The states of a run each testcase reports (``-`` for one the run has not); a scenario
that did not run (a file that does not load, a run that raised) reports none."""

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def located_problems(result: ScenarioResult) -> list[tuple[int | None, str]]:
    """What did not hold in ``result``, each with the line of its file that states it: the
    error (at the line it names), each mismatch (at its expectation), each invariant broken
    unexpectedly or expected to break and held (at ``expect.violations``, else the
    scenario); empty when it is ok."""
    path = result.path
    if result.error is not None:
        line = location(result)[1]
        text = result.error.strip()
        for prefix in (f"{path}:{line}: ", f"{path}: "):
            text = text.removeprefix(prefix)
        return [(line, text)]
    found = [(expectation_line(path, result.scenario, m.field), str(m))
             for m in result.mismatches]
    invariant_line = expectation_line(path, result.scenario, "violations")
    found += [(invariant_line, f"invariant {name} broke") for name in result.unexpected]
    found += [(invariant_line, f"invariant {name} held, expected to break")
              for name in result.missing]
    return found


def junit_xml(results: Sequence[ScenarioResult], *,
              wall_times: Sequence[float] | None = None, timestamp: datetime | None = None,
              hostname: str | None = None) -> str:
    """The JUnit XML text of ``results``; ``wall_times`` gives the seconds each took to run
    (in the same order; the testcases' and suites' ``time``), ``timestamp`` when the run
    started and ``hostname`` where (each left out when None)."""
    files: dict[str, list[tuple[ScenarioResult, float | None]]] = {}
    for i, result in enumerate(results):
        took = wall_times[i] if wall_times is not None and i < len(wall_times) else None
        files.setdefault(result.path or "<memory>", []).append((result, took))
    root = ET.Element("testsuites", _counts("harness-lab run", [r for r, _ in
                                                                _flat(files)]))
    total = [t for _, t in _flat(files)]
    if wall_times is not None:
        root.set("time", _seconds(sum(t or 0.0 for t in total)))
    for path, entries in files.items():
        suite = ET.SubElement(root, "testsuite", _counts(path, [r for r, _ in entries]))
        suite.set("skipped", "0")
        if wall_times is not None:
            suite.set("time", _seconds(sum(t or 0.0 for _, t in entries)))
        if timestamp is not None:
            suite.set("timestamp", timestamp.isoformat(timespec="seconds"))
        if hostname is not None:
            suite.set("hostname", hostname)
        suite.set("file", path)
        _properties(suite, [r for r, _ in entries])
        for result, took in entries:
            _testcase(suite, result, took)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _flat(files: dict[str, list[tuple[ScenarioResult, float | None]]]
          ) -> list[tuple[ScenarioResult, float | None]]:
    return [entry for entries in files.values() for entry in entries]


def _counts(name: str, results: Sequence[ScenarioResult]) -> dict[str, str]:
    verdicts = [r.verdict for r in results]
    return {"name": _text(name), "tests": str(len(results)),
            "failures": str(verdicts.count("FAILED")), "errors": str(verdicts.count("ERROR"))}


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _states(result: ScenarioResult) -> dict[str, str]:
    row = result.row()
    return {name: str(row[name] or "-") for name in STATE_PROPERTIES}


def _properties(suite: ET.Element, results: Sequence[ScenarioResult]) -> None:
    ran = [r for r in results if r.record is not None or r.crashed]
    if not ran:
        return
    properties = ET.SubElement(suite, "properties")
    for result in ran:
        for name, value in _states(result).items():
            ET.SubElement(properties, "property", name=_text(f"{result.scenario}.{name}"),
                          value=value)


def _testcase(suite: ET.Element, result: ScenarioResult, took: float | None) -> None:
    case = ET.SubElement(suite, "testcase", classname=_classname(result.path),
                         name=_text(result.scenario))
    if took is not None:
        case.set("time", _seconds(took))
    if result.verdict == "ERROR":
        assert result.error is not None
        kind = re.match(r"(\w+(?:Error|Exception|Crash)): ", result.error)
        error = ET.SubElement(case, "error", message=_text(first_difference(result)),
                              type=kind.group(1) if kind else "ScenarioError")
        error.text = _text(_where(result))
    elif result.verdict == "FAILED":
        failure = ET.SubElement(case, "failure", message=_text(first_difference(result)),
                                type="ExpectationMismatch")
        details = [line for m in result.mismatches if m.detail
                   for line in ["", *m.detail.splitlines()]]
        failure.text = _text("\n".join([_where(result), *details]))
    r = result.record
    if r is None and not result.crashed:
        return  # no run: nothing to report but the error
    out = [f"{name}: {value}" for name, value in _states(result).items()]
    if r is not None:
        out.append(f"virtual duration: {float(r.finished_at - r.started_at):g} s")
    if result.crashed:
        out.append(f"crashed: {result.extra.get('crash')}")
    ET.SubElement(case, "system-out").text = _text("\n".join(out))


def _where(result: ScenarioResult) -> str:
    """Each problem of ``result`` on a line of its own, after its ``file:line``."""
    path = result.path or "<memory>"
    return "\n".join(f"{path}:{line}: {text}" if line else f"{path}: {text}"
                     for line, text in located_problems(result))


def _classname(path: str | None) -> str:
    if path is None:
        return "memory"
    parts = PurePath(path).with_suffix("").parts
    return _text(".".join(p for p in parts if p not in ("/", "\\", ".", "..")))


def _text(value: str) -> str:
    """``value`` without the characters XML 1.0 cannot carry (terminal escapes' ESC...)."""
    return _NOT_XML.sub("\ufffd", value)
