"""The fault explorer: every variant of a base scenario, run, judged against SPEC §4.

>>> result = explore("scenarios/outcomes/conclusion-guards-pass.yaml")   # doctest: +SKIP
>>> result.variant_count, result.elapsed_s, len(result.failures)         # doctest: +SKIP

Variants run on an in-memory run store (the same semantics as the SQL store, much faster);
``workers > 1`` spreads them over processes, as :func:`~harness_lab.explore.library.
run_library` does for a library.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_lab.atomic import write_atomically
from harness_lab.explore.boundaries import BaseRun, record_base
from harness_lab.explore.oracle import (
    CRASH,
    Observed,
    Prescription,
    closest_row,
    judge,
    legal_rows,
    prescribe,
    row_expectation,
)
from harness_lab.explore.variants import Variant, enumerate_variants
from harness_lab.explore.worker import run_variant
from harness_lab.outcome_table import OUTCOME_BY_CASE
from harness_lab.scenarios.loader import LoadedScenario, load_file
from harness_lab.scenarios.spec import Scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FRAME_COLUMNS", "ExplorationResult", "Finding", "explore", "judged",
           "run_variant"]

FRAME_COLUMNS = ("variant", "point", "fault", "case", "expected", "run_state", "release_outcome",
                 "fallback_type", "db_status", "contradicts_spec", "violations", "error",
                 "note", "flagged")
"""The columns of :attr:`ExplorationResult.frame`, in order."""

Source = str | Path | LoadedScenario | Scenario | Sequence[LoadedScenario]


@dataclass(frozen=True)
class Finding:
    """One judged variant: the variant, what was prescribed, what was observed, and why."""

    variant: Variant
    prescription: Prescription
    observed: Observed
    contradiction: str | None
    policy_fallback: bool

    @property
    def flagged(self) -> bool:
        """Contradicts SPEC §4 or breaks an invariant."""
        return self.contradiction is not None or bool(self.observed.violations)

    @property
    def inconclusive(self) -> bool:
        """The variant's own fault never fired, or the run left no record: not judged.

        Its broken invariants (if any) still flag it; the prescription is not applied.
        """
        return self.observed.error is not None

    def row(self) -> dict[str, Any]:
        """This finding as one frame row (:data:`FRAME_COLUMNS`)."""
        o = self.observed
        return {
            "variant": self.variant.name, "point": self.variant.point,
            "fault": self.variant.fault_label, "case": self.prescription.case,
            "expected": self.prescription.text, "run_state": o.run_state,
            "release_outcome": o.release_outcome, "fallback_type": o.fallback_type,
            "db_status": o.db_status, "contradicts_spec": self.contradiction is not None,
            "violations": ",".join(o.violations), "error": o.error or "",
            "note": o.note or "", "flagged": self.flagged,
        }

    def reproducer(self) -> str:
        """Scenario YAML that ``harness-lab run`` fails on, as this variant failed here."""
        p, o = self.prescription, self.observed
        note = (f"The fault explorer prescribed {p.text} ({p.rule}); it observed {o.text}"
                + (f", breaking {', '.join(o.violations)}" if o.violations else "") + ".")
        if p.case == CRASH:
            return self.variant.to_yaml({"crashed": True, "db_status": "RUNNING"}, note=note)
        if p.row is not None:
            if p.row.case in OUTCOME_BY_CASE:
                return self.variant.to_yaml(case=p.row.case, note=note)
            return self.variant.to_yaml(row_expectation(p.row), note=note)
        if self.contradiction is not None:
            closest = closest_row(o, legal_rows(self.policy_fallback))
            return self.variant.to_yaml(row_expectation(closest), note=note)
        return self.variant.to_yaml(note=note)


@dataclass
class ExplorationResult:
    """Every judged variant of one exploration, as a DataFrame and as findings."""

    findings: list[Finding]
    bases: list[BaseRun]
    elapsed_s: float
    workers: int = 1
    _frame: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def variant_count(self) -> int:
        """How many variants were run."""
        return len(self.findings)

    @property
    def frame(self) -> pd.DataFrame:
        """One row per variant (:data:`FRAME_COLUMNS`); point and fault in lifecycle order."""
        if self._frame is None:
            import pandas as pd

            df = pd.DataFrame([f.row() for f in self.findings], columns=list(FRAME_COLUMNS))
            for col in ("point", "fault"):
                df[col] = pd.Categorical(df[col], categories=list(dict.fromkeys(df[col])))
            self._frame = df.astype({"contradicts_spec": bool, "flagged": bool})
        return self._frame

    @property
    def failures(self) -> pd.DataFrame:
        """The flagged rows of :attr:`frame`."""
        df = self.frame
        return df[df["flagged"]]

    @property
    def flagged(self) -> list[Finding]:
        """The flagged findings."""
        return [f for f in self.findings if f.flagged]

    @property
    def inconclusive(self) -> list[Finding]:
        """The findings whose variant could not be judged (see :attr:`Finding.inconclusive`)."""
        return [f for f in self.findings if f.inconclusive]

    def to_scenarios(self, directory: str | Path) -> list[Path]:
        """Write each flagged variant as a runnable scenario YAML; return the paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for finding in self.flagged:
            path = out / f"{_slug(finding.variant.name)}.yaml"
            write_atomically(path, finding.reproducer())
            paths.append(path)
        return paths

    def summary(self) -> str:
        """``189 variants, 0 flagged, 0 inconclusive, 0.20 s``."""
        return (f"{self.variant_count} variants, {len(self.flagged)} flagged, "
                f"{len(self.inconclusive)} inconclusive, {self.elapsed_s:.2f} s")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")


def _loaded(source: Source) -> list[LoadedScenario]:
    if isinstance(source, LoadedScenario):
        return [source]
    if isinstance(source, Scenario):
        return [LoadedScenario(source, "<memory>")]
    if isinstance(source, str | Path):
        return load_file(source)
    return list(source)


def explore(source: Source, *, faults: Collection[str] | None = None,
            workers: int = 1) -> ExplorationResult:
    """Explore every variant of the base scenario(s) in ``source``.

    ``source`` is a scenario file (each of its matrix variants is a base), a LoadedScenario
    or a Scenario. ``faults`` limits the fault kinds (default: all of FAULT_KINDS).
    """
    from harness_lab.explore.library import LibraryPlan, run_library

    start = time.perf_counter()
    plan = LibraryPlan()
    for loaded in _loaded(source):
        plan.bases.append(record_base(loaded))
        plan.variants.append(enumerate_variants(plan.bases[-1], faults))
    plan.elapsed_s = time.perf_counter() - start
    return run_library(plan, workers=workers).result


_REPORTED = {"read_session": {"stored_axes_distinct"}, "insert_running": {"stored_axes_distinct"},
             "complete": {"stored_axes_distinct", "fallback_is_not_failure"}}
"""The invariants that report a base's own store fault (a store that refuses an operation):
no row of the run is stored, and a refused completion releases FAILED a run that had
succeeded. Its variants break them for the same reason, expected as the base expects them."""


def judged(base: BaseRun, variants: Sequence[Variant], observed: Sequence[Observed]
           ) -> list[Finding]:
    """Each variant of ``base`` judged: what SPEC §4 prescribes (from the fault and the base
    run only) against what was ``observed``."""
    policy = base.scenario.config.policy.timeout_progress_fallback
    refuses = next((f.operation for f in base.scenario.faults if f.kind == "store_failure"),
                   None)
    expected = set(base.scenario.expect.violations) | _REPORTED.get(refuses or "", set())
    findings = []
    for v, o in zip(variants, observed, strict=True):
        if expected & set(o.violations):
            o = replace(o, violations=tuple(n for n in o.violations if n not in expected))
        p = prescribe(v.fault, base)
        verdict = None if o.error else judge(p, o, timeout_progress_fallback=policy,
                                             store_refuses=refuses)
        findings.append(Finding(v, p, o, verdict, policy))
    return findings

