"""The report's "compared with" view: the reported results set against an earlier run log.

Which scenarios regressed, passed anew or changed is decided by
:mod:`harness_lab.logs.diff` alone; this module only gathers what the page shows of it: the
earlier log's date, commit and command, the diff's counts, each scenario's change (with its
outcome before and after) and the scenarios the new run no longer has.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from harness_lab.logs.diff import LogDiff, ScenarioChange, diff_logs, diff_results, log_sides
from harness_lab.logs.reader import Log, read_log
from harness_lab.report.palette import verdict_color
from harness_lab.report.run_html import badge, result_outcome
from harness_lab.runner.run import ScenarioResult

__all__ = ["ANY", "CHANGE_COLORS", "CHANGE_LABELS", "REGRESSION", "Comparison", "change_badge",
           "change_filter", "compare_with"]

CHANGE_LABELS: Final = {"regressed": "regressed", "new failure": "new failure",
                        "new pass": "newly passing", "changed": "changed", "added": "new",
                        "removed": "removed", "unchanged": "unchanged"}
"""How the page names each kind of change of :data:`harness_lab.logs.diff.KINDS`."""

CHANGE_COLORS: Final = {"regressed": verdict_color("FAILED"),
                        "new failure": verdict_color("FAILED"),
                        "new pass": verdict_color("ok"), "changed": "#0077BB",
                        "added": "#33BBEE", "removed": "#BBBBBB", "unchanged": "#DDDDDD"}
"""The colour of each kind's badge: regressions in the FAILED colour, new passes in ok's."""

ANY: Final = "any"
"""The change filter's value for every scenario that changed in any way."""
REGRESSION: Final = "regression"
"""The change filter's value for every regression (``regressed`` and ``new failure``)."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """An earlier run (its log) and the diff from it to the reported results."""

    old: Log
    diff: LogDiff
    _changes: dict[str, ScenarioChange] = field(init=False, repr=False, compare=False)
    _old_results: dict[str, ScenarioResult] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        changes = {c.scenario: c for c in self.diff.changes}
        olds: dict[str, ScenarioResult] = {}
        for entry in self.old.entries:
            olds.setdefault(entry.scenario, entry.result)  # the first, as the diff matches
        object.__setattr__(self, "_changes", changes)
        object.__setattr__(self, "_old_results", olds)

    def change_of(self, scenario: str) -> ScenarioChange | None:
        """The diff's change of ``scenario`` (None when the diff left it out)."""
        return self._changes.get(scenario)

    def old_result(self, scenario: str) -> ScenarioResult | None:
        """The earlier run's result of ``scenario`` (None when it did not have it)."""
        return self._old_results.get(scenario)

    @property
    def removed(self) -> list[ScenarioChange]:
        """The scenarios of the earlier run the reported one no longer has."""
        return self.diff.of_kind("removed")

    def counts(self) -> dict[str, int]:
        """The diff's counts by kind (:meth:`LogDiff.counts`)."""
        return self.diff.counts()

    def facts(self) -> list[tuple[str, str]]:
        """What the header says of the earlier run: (name, text) of its log, start time,
        toolkit version, git commit and command, those it has."""
        header = self.old.header
        facts = [("log", str(self.old.path))]
        if header.get("started_at"):
            facts.append(("run", str(header["started_at"]).replace("T", " ")))
        if header.get("toolkit_version"):
            facts.append(("version", f"harness_lab {header['toolkit_version']}"))
        if header.get("git_commit"):
            facts.append(("commit", str(header["git_commit"])[:10]))
        command = header.get("command")
        if isinstance(command, list) and command:
            facts.append(("command", shlex.join(str(word) for word in command)))
        return facts

    def outcome_change(self, change: ScenarioChange, new: ScenarioResult | None) -> str | None:
        """``outcome changed: A → B`` when the diff found the outcome changed, else None."""
        if "outcome" not in change.aspects:
            return None
        old = self.old_result(change.scenario)
        before = (result_outcome(old) if old is not None else "") or "no run"
        after = (result_outcome(new) if new is not None else "") or "no run"
        return f"outcome changed: {before} → {after}"


def change_filter(change: ScenarioChange | None) -> list[str]:
    """The change filter's values a row matches: its kind, and ``any`` when it changed,
    ``regression`` when the diff says it regressed."""
    if change is None:
        return []
    values = [change.change]
    if change.change != "unchanged":
        values.append(ANY)
    if change.regressed:
        values.append(REGRESSION)
    return values


def change_badge(change: ScenarioChange | None) -> str:
    """The badge of a row's kind of change, its detail as the tooltip (empty for an
    unchanged scenario or one the diff left out)."""
    if change is None or change.change == "unchanged":
        return ""
    kind = change.change
    return badge(CHANGE_LABELS[kind], CHANGE_COLORS[kind], cls="hl-change",
                 title=change.detail or None, breakable=False)


def _tagged(result: ScenarioResult, tags: Sequence[str]) -> bool:
    return not tags or bool(set(tags) & set(result.tags))


def compare_with(old: Log | str | os.PathLike[str],
                 new: Log | Sequence[Log] | Iterable[ScenarioResult], *,
                 tags: Sequence[str] = ()) -> Comparison:
    """The comparison of ``new`` (a log, several logs, or the results of a fresh run) with
    the ``old`` log; raise LogError when ``old`` is not a readable run log.

    Logs are compared by the scenario files' hashes they kept, so a scenario that is gone
    is *removed*; a fresh run is compared as :func:`~harness_lab.logs.diff.diff_logs` does,
    leaving out the old scenarios it did not run. With ``tags``, only the scenarios with one
    of them are compared (on both sides).
    """
    old_log = old if isinstance(old, Log) else read_log(old)
    items: list[Log | ScenarioResult] = [new] if isinstance(new, Log) else list(new)
    logs = [item for item in items if isinstance(item, Log)]
    if not logs:
        results = [r for r in items if isinstance(r, ScenarioResult) and _tagged(r, tags)]
        diff = diff_logs(old_log, results)
    elif len(logs) != len(items):
        raise TypeError("compare logs or scenario results, not both")
    else:
        sides = [side for log in logs for side in log_sides(log) if _tagged(side.result, tags)]
        diff = diff_results([s for s in log_sides(old_log) if _tagged(s.result, tags)], sides,
                            old_label=str(old_log.path),
                            new_label=", ".join(str(log.path) for log in logs))
    return Comparison(old_log, diff)

