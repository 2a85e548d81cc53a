"""Record a recorded scenario's cassette without ever replacing a good one with a bad one.

:func:`record_scenario` records into a staging file beside the cassette and moves it over
the cassette (``os.replace``, atomic) only when the recording is sound: every request got an
answer, no answer was an HTTP error, and the scenario did what it expects. Otherwise the
staging file is deleted and the cassette keeps every byte it had.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_lab.recorded.cassette import RECORD_MODES, CassetteReport
from harness_lab.recorded.cassette_file import CassetteError, check_cassette
from harness_lab.runner.run import ScenarioResult, ScenarioRun
from harness_lab.scenarios.loader import LoadedScenario
from harness_lab.scripted.recorded import cassette_file

__all__ = ["RECORDING_MODES", "Recording", "record_scenario", "recorded_result"]

RECORDING_MODES = (*RECORD_MODES, "rewrite")
"""Record modes of :func:`record_scenario`: vcrpy's, and pytest-recording's ``rewrite``
(record everything again: the same as ``all`` here, which starts from an empty cassette)."""


@dataclass(frozen=True, slots=True)
class Recording:
    """What :func:`record_scenario` did.

    ``written`` is True when the cassette at ``path`` was replaced; ``problems`` says, one
    line each, why a recording was refused (then ``path`` is untouched).
    """

    path: Path
    record_mode: str
    result: ScenarioResult
    report: CassetteReport | None
    written: bool
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when nothing went wrong (whether or not anything new was recorded)."""
        return not self.problems

    @property
    def recorded(self) -> int:
        """Interactions recorded from the endpoint in this run."""
        return self.report.recorded if self.report is not None else 0

    @property
    def played(self) -> int:
        """Interactions replayed from the existing cassette in this run."""
        return self.report.played if self.report is not None else 0

    @property
    def interactions(self) -> int:
        """Interactions the cassette at ``path`` holds now (0 when there is none)."""
        try:
            return check_cassette(self.path)
        except CassetteError:
            return 0

    @property
    def size(self) -> int:
        """The cassette's size in bytes now (0 when there is none)."""
        try:
            return self.path.stat().st_size
        except OSError:
            return 0


def _problems(result: ScenarioResult, report: CassetteReport | None, key_env: str) -> list[str]:
    out: list[str] = []
    steps = report.steps if report is not None else []
    refused_key = False
    for s in steps:
        if s.outcome == "error":
            out.append(f"request {s.step} ({s.method} {s.url}) got no answer: {s.error}")
        elif s.outcome == "recorded" and s.status is not None and s.status >= 400:
            refused_key = refused_key or s.status in (401, 403)
            out.append(f"request {s.step} ({s.method} {s.url}) was answered HTTP {s.status}")
    if refused_key:
        out.append(f"the endpoint refused the key: is ${key_env} set and right?")
    if out:
        if not result.ok and result.record is not None:
            out.append(f"so the run ended {result.record.run_state.value}, which the "
                       "scenario does not expect")
        return out
    if result.error is not None:
        out.append(f"the run ended in an error: {result.error.splitlines()[0]}")
    else:
        out += [f"expected {m.field} {m.expected!r}, the run gave {m.observed!r}"
                for m in result.mismatches]
        out += [f"invariant {name} broke" for name in result.unexpected]
        out += [f"invariant {name} was expected to break but held" for name in result.missing]
    return out


def _staging(target: Path, copy_existing: bool) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                suffix=".recording.yaml")
    os.close(fd)
    staging = Path(name)
    if copy_existing and target.is_file():
        shutil.copy(target, staging)  # the content and the permission bits
    else:
        staging.unlink()  # vcrpy records into a file that does not exist yet
    return staging


def record_scenario(loaded: LoadedScenario, *, record_mode: str = "once",
                    base_url: str | None = None, tool_url: str | None = None) -> Recording:
    """Run ``loaded`` (a scenario with ``recorded:`` and ``cassette:``) in ``record_mode``.

    ``none`` replays; ``once`` records when the cassette does not exist, else replays;
    ``new_episodes`` replays what matches and records the rest; ``all`` (``rewrite``) records
    everything from an empty cassette. ``base_url`` and ``tool_url`` replace the file's
    endpoints. The cassette is replaced only by a sound recording (see the module doc).
    Raise ValueError for a scenario that is not recorded, one with faults (a fork of a
    recording replays it, and is never recorded) in any mode but ``none``, or an unknown
    mode, and :class:`CassetteError` when the existing cassette cannot be read or written
    (mode ``all`` never reads it).
    """
    sc = loaded.scenario
    if record_mode not in RECORDING_MODES:
        raise ValueError(f"record mode must be one of {', '.join(RECORDING_MODES)}, "
                         f"not {record_mode!r}")
    mode = "all" if record_mode == "rewrite" else record_mode
    target = cassette_file(sc, loaded.path)
    if sc.recorded is None or target is None:
        raise ValueError(f"{loaded.path}: a recorded scenario needs `recorded:` and `cassette:`")
    if sc.faults and mode != "none":
        raise ValueError(f"{loaded.path}: this scenario injects faults into a replay of "
                         f"{target}; record the scenario without faults that uses the same "
                         "cassette, then replay this one")
    if target.is_dir():
        raise CassetteError(target, "is a directory, not a cassette file")
    written_to = target.resolve() if target.is_symlink() else target  # keep a link a link
    if target.exists() and mode != "all":
        check_cassette(target)
    if mode == "none":
        run = ScenarioRun(loaded, record_mode="none")
        result = run.run()
        report: Any = run.cassette_report
        return Recording(target, mode, result, report, False,
                         tuple(_problems(result, report, sc.recorded.api_key_env)))
    try:
        staging = _staging(written_to, copy_existing=mode != "all")
    except OSError as exc:
        raise CassetteError(target, f"cannot be written: {exc.strerror or exc}") from None
    try:
        staged = dataclasses.replace(
            loaded, scenario=sc.model_copy(update={"cassette": str(staging)}))
        run = ScenarioRun(staged, record_mode=mode, base_url=base_url, tool_url=tool_url)
        result = run.run()
        if result.error is not None:  # name the cassette, not the staging file
            result = dataclasses.replace(result, error=result.error.replace(str(staging),
                                                                            str(target)))
        report = run.cassette_report
        if report is not None:
            report.path = target
        problems = _problems(result, report, sc.recorded.api_key_env)
        written = False
        if not problems and report is not None and report.recorded and staging.is_file():
            os.replace(staging, written_to)
            written = True
        return Recording(target, mode, result, report, written, tuple(problems))
    finally:
        staging.unlink(missing_ok=True)


def recorded_result(loaded: LoadedScenario, record_mode: str) -> ScenarioResult:
    """The scenario's result under ``record_mode`` (the pytest plugin's ``--record-mode``).

    A refused recording (the cassette left as it was) or an unreadable cassette is the
    result's error, so the test fails naming why. A scenario with faults (a fork of a
    recording) is replayed whatever the mode: recording it would overwrite the shared
    cassette with a run cut short by the fault.
    """
    sc = loaded.scenario
    mode = "none" if sc.faults else record_mode
    try:
        recording = record_scenario(loaded, record_mode=mode)
    except (CassetteError, ValueError) as exc:
        return ScenarioResult(sc.name, loaded.path, sc.description, tuple(sc.tags), sc.case,
                              error=f"{type(exc).__name__}: {exc}")
    if recording.ok:
        return recording.result
    kept = "left as it was" if recording.path.exists() else "not written"
    why = "; ".join(recording.problems)
    return dataclasses.replace(recording.result, error=(
        f"not recorded ({recording.path} {kept}): {why}"))
