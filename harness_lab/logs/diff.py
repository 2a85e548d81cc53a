"""diff_logs: what changed between two runs of the scenario library, and whether it regressed.

Scenarios are matched by name. For each pair the outcome (RunState, ReleaseOutcome,
FallbackType, stored status), the other state axes, the SSE events (kinds and payloads), the
trace (types, statuses, details) and the stored row are compared, virtual times left aside.

A scenario **regressed** when

- its verdict went from ``ok`` to ``FAILED`` or ``ERROR`` (a new failure), or it is new and
  not ``ok``; or
- its outcome changed while its scenario file did not (same SHA-256): the file's
  expectations did not ask for the change, so the code made it; or
- its outcome changed and it is no longer ``ok``.

An outcome that changed together with its file, the new expectations holding, is a
*changed* scenario, not a regression. A scenario that is gone is *removed*, never a
regression (the run may have selected less).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_lab.logs.reader import Log, read_log
from harness_lab.record import RunRecord
from harness_lab.runner.run import ScenarioResult
from harness_lab.terminal.console import cut

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ASPECTS", "DIFF_COLUMNS", "KINDS", "LogDiff", "ScenarioChange", "Side", "diff_logs",
           "diff_results", "log_sides", "result_sides"]

ASPECTS = ("verdict", "outcome", "states", "sse", "trace", "stored_row", "file")
"""What is compared, in the order a change is reported."""

KINDS = ("regressed", "new failure", "new pass", "changed", "added", "removed", "unchanged")
"""The kinds of change, most serious first (``new failure`` is also a regression)."""

DIFF_COLUMNS = ("scenario", "change", "old", "new", "regressed", "aspects", "detail")
"""The columns of :attr:`LogDiff.frame`."""

_OUTCOME = ("run_state", "release_outcome", "fallback_type", "stored_status")
_STATES = ("intent", "termination_reason", "sse_state", "collection_state", "stop_reason",
           "semantic_verdict", "statuses", "gains", "agent_steps", "usage",
           "stop_required_delivered", "evidence_repaired", "error")


@dataclass(frozen=True, slots=True)
class Side:
    """One scenario as one run saw it: its result and its file's hash."""

    result: ScenarioResult
    sha256: str | None


@dataclass(frozen=True, slots=True)
class ScenarioChange:
    """How one scenario differs between the old and the new run."""

    scenario: str
    change: str
    old: str | None
    new: str | None
    regressed: bool
    aspects: tuple[str, ...]
    detail: str
    differences: tuple[tuple[str, str], ...] = ()
    """(aspect, what differs) pairs, in :data:`ASPECTS` order: the parts of ``detail``."""

    def row(self) -> dict[str, Any]:
        """The change as one table row (:data:`DIFF_COLUMNS`)."""
        return {"scenario": self.scenario, "change": self.change, "old": self.old,
                "new": self.new, "regressed": self.regressed,
                "aspects": ", ".join(self.aspects), "detail": self.detail}


@dataclass(frozen=True, slots=True)
class LogDiff:
    """Every scenario of either run and how it changed (``unchanged`` ones included)."""

    old_label: str
    new_label: str
    changes: tuple[ScenarioChange, ...]

    @property
    def regressed(self) -> bool:
        """True when any scenario regressed (the check a pull request runs)."""
        return any(c.regressed for c in self.changes)

    def of_kind(self, kind: str) -> list[ScenarioChange]:
        """The changes of one kind (see :data:`KINDS`)."""
        return [c for c in self.changes if c.change == kind]

    def counts(self) -> dict[str, int]:
        """How many scenarios of each kind, every kind listed."""
        return {kind: len(self.of_kind(kind)) for kind in KINDS}

    def summary(self) -> str:
        """``4 scenario(s) compared: 1 new failure; 3 unchanged`` (or ``: no change``)."""
        counts = self.counts()
        parts = [f"{n} {kind}" for kind, n in counts.items() if n and kind != "unchanged"]
        return (f"{sum(counts.values())} scenario(s) compared: "
                + (", ".join(parts) or "no change")
                + (f"; {counts['unchanged']} unchanged" if counts["unchanged"] and parts
                   else ""))

    @property
    def frame(self) -> pd.DataFrame:
        """One row per scenario that changed (:data:`DIFF_COLUMNS`), most serious first;
        ``change`` an ordered Categorical of :data:`KINDS`."""
        import pandas as pd

        rows = [c.row() for c in self.changes if c.change != "unchanged"]
        df = pd.DataFrame(rows, columns=list(DIFF_COLUMNS))
        df["change"] = df["change"].astype(pd.CategoricalDtype(list(KINDS), ordered=True))
        df["regressed"] = df["regressed"].astype(bool)
        return df

    def to_dict(self, *, unchanged: bool = False) -> dict[str, Any]:
        """The diff as JSON data: each changed scenario's row with its differences, one
        ``{"aspect", "what"}`` each (with ``unchanged``, the unchanged scenarios too)."""
        return {"old": self.old_label, "new": self.new_label, "regressed": self.regressed,
                "counts": self.counts(),
                "scenarios": [{**c.row(), "differences": [{"aspect": aspect, "what": what}
                                                          for aspect, what in c.differences]}
                              for c in self.changes if unchanged or c.change != "unchanged"]}


def _value(v: Any) -> Any:
    return getattr(v, "value", v)


def _outcome(r: RunRecord | None) -> tuple[Any, ...]:
    return tuple(None if r is None else _value(getattr(r, k)) for k in _OUTCOME)


def _first_difference(name: str, old: Sequence[tuple[Any, ...]],
                      new: Sequence[tuple[Any, ...]]) -> str:
    """Where two event lists first differ: ``sse event 4 content: contentType 'fallback' ->
    'diagnosis_report'``, ``trace event 9: TOOL_PROGRESS -> COLLECTION_STOP``..."""
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a == b:
            continue
        if a[0] != b[0]:
            return f"{name} {i}: {a[0]} -> {b[0]}"
        if len(a) == 3 and a[1] != b[1]:
            return f"{name} {i} {a[0]}: status {a[1]} -> {b[1]}"
        before, after = a[-1], b[-1]
        key = next(k for k in [*before, *after] if before.get(k) != after.get(k))
        return (f"{name} {i} {a[0]}: {key} {_payload(before, key)} -> "
                f"{_payload(after, key)}")
    return f"{name}s: {len(old)} -> {len(new)}"


def _payload(data: dict[str, Any], key: str) -> str:
    """A payload's value as Python writes it (``none`` for None); ``(absent)`` for a key it
    does not have."""
    if key not in data:
        return "(absent)"
    return "none" if data[key] is None else _short(repr(data[key]), 40)


def _short(value: Any, limit: int = 80) -> str:
    return cut("none" if value is None else str(value), limit)


def _sse(r: RunRecord) -> list[tuple[str, dict[str, Any]]]:
    return [(e.kind.value, dict(e.data)) for e in r.sse_events]


def _trace(r: RunRecord) -> list[tuple[str, str, dict[str, Any]]]:
    return [(e.type.value, e.status.value, dict(e.detail)) for e in r.trace]


def _compare(old: Side, new: Side) -> list[tuple[str, str]]:
    """(aspect that differs, what differs) pairs, in :data:`ASPECTS` order."""
    found: list[tuple[str, str]] = []
    a, b = old.result, new.result
    if a.verdict != b.verdict:
        from harness_lab.runner.results import first_difference

        why = first_difference(b) if b.verdict != "ok" else ""
        found.append(("verdict", f"verdict {a.verdict} -> {b.verdict}"
                                 + (f" ({why})" if why else "")))
    ra, rb = a.record, b.record
    if _outcome(ra) != _outcome(rb):
        pairs = [f"{k} {_short(x)} -> {_short(y)}"
                 for k, x, y in zip(_OUTCOME, _outcome(ra), _outcome(rb), strict=True) if x != y]
        found.append(("outcome", "; ".join(pairs)))
    if ra is not None and rb is not None:
        states = [k for k in _STATES if getattr(ra, k) != getattr(rb, k)]
        if states:
            k = states[0]
            found.append(("states", f"{k} {_short(_value(getattr(ra, k)))} -> "
                                    f"{_short(_value(getattr(rb, k)))}"))
        if _sse(ra) != _sse(rb):
            found.append(("sse", _first_difference("sse event", _sse(ra), _sse(rb))))
        if _trace(ra) != _trace(rb):
            found.append(("trace", _first_difference("trace event", _trace(ra), _trace(rb))))
    row_a, row_b = a.stored_row or {}, b.stored_row or {}
    if row_a != row_b:
        keys = sorted(k for k in set(row_a) | set(row_b) if row_a.get(k) != row_b.get(k))
        found.append(("stored_row", f"stored row {', '.join(keys)}"))
    if old.sha256 != new.sha256:
        found.append(("file", "scenario file changed"))
    return found


def _change(name: str, old: Side | None, new: Side | None) -> ScenarioChange:
    if old is None:
        assert new is not None
        verdict = new.result.verdict
        bad = verdict != "ok"
        return ScenarioChange(name, "new failure" if bad else "added", None, verdict, bad,
                              (), "new scenario" + (f", {verdict}" if bad else ""))
    if new is None:
        return ScenarioChange(name, "removed", old.result.verdict, None, False, (),
                              "not in the new run")
    notes = _compare(old, new)
    aspects = tuple(aspect for aspect, _ in notes)
    was_ok, is_ok = old.result.verdict == "ok", new.result.verdict == "ok"
    if was_ok and not is_ok:
        kind, bad = "new failure", True
    elif "outcome" in aspects and ("file" not in aspects or not is_ok):
        kind, bad = "regressed", True
    elif is_ok and not was_ok:
        kind, bad = "new pass", False
    elif aspects:
        kind, bad = "changed", False
    else:
        kind, bad = "unchanged", False
    if kind == "regressed" and "file" not in aspects:
        notes.append(("file", "the scenario file did not change"))
    return ScenarioChange(name, kind, old.result.verdict, new.result.verdict, bad, aspects,
                          "; ".join(what for _, what in notes), tuple(notes))


def _by_name(sides: Iterable[Side]) -> dict[str, Side]:
    """The sides by scenario name; a second scenario of a name already seen (another file
    that gives the same name, whose run errors) is kept under its name and file, never
    dropped, so its verdict is compared too."""
    named: dict[str, Side] = {}
    for side in sides:
        name = side.result.scenario
        if name in named and side.result.path != named[name].result.path:
            name = f"{name} ({side.result.path})"
        named.setdefault(name, side)
    return named


def diff_results(old: Iterable[Side], new: Iterable[Side], *, old_label: str = "old",
                 new_label: str = "new", removed: bool = True) -> LogDiff:
    """Compare two runs given as :class:`Side` s (results with their files' hashes).

    ``removed=False`` leaves out the old scenarios the new run does not have (a fresh run of
    a few files is compared with a log of the whole library).
    """
    before, after = _by_name(old), _by_name(new)
    names = [n for n in before if removed or n in after] + [n for n in after if n not in before]
    changes = [_change(n, before.get(n), after.get(n)) for n in names]
    changes.sort(key=lambda c: KINDS.index(c.change))
    return LogDiff(old_label, new_label, tuple(changes))


def log_sides(log: Log) -> list[Side]:
    """The sides of every entry of a log."""
    return [Side(e.result, e.sha256) for e in log.entries]


def result_sides(results: Iterable[ScenarioResult]) -> list[Side]:
    """The sides of live results (each file hashed as a log would)."""
    from harness_lab.logs.writer import sha256_of

    hashed = functools.cache(sha256_of)  # each file once
    return [Side(r, None if r.path is None else hashed(r.path)) for r in results]


def diff_logs(old: Log | str | os.PathLike[str],
              new: Log | str | os.PathLike[str] | Iterable[ScenarioResult]) -> LogDiff:
    """What changed from the ``old`` log to the ``new`` one (a log, its path, or the results
    of a fresh run), as a :class:`LogDiff`; raise LogError for a file that is not a log.

    Against a fresh run, the old scenarios it did not run are left out, not *removed*.
    """
    old_log = old if isinstance(old, Log) else read_log(old)
    if isinstance(new, Log | str | os.PathLike):
        new_log = new if isinstance(new, Log) else read_log(new)
        return diff_results(log_sides(old_log), log_sides(new_log),
                            old_label=str(old_log.path), new_label=str(new_log.path))
    return diff_results(log_sides(old_log), result_sides(new),  # type: ignore[arg-type]
                        old_label=str(old_log.path), new_label="this run", removed=False)
