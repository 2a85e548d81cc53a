"""Which detector catches which seeded defect: the library, invariants, explorer, search, live.

Each seeded defect (:class:`~harness_lab.defects.Defect`) is put into every scenario of the
library (:func:`seed`), and each detector is asked whether it notices:

- ``library``: a scenario of the library fails (:func:`library_failures`);
- ``invariants``: a run of the seeded library breaks an invariant (:func:`broken_invariants`);
- ``explorer``: the fault explorer flags a variant it does not flag without the defect
  (:func:`explorer_findings`);
- ``search``: the property search finds a failing scenario (:func:`search_finds`);
- ``conform``: ``conform --serve`` with the defect seeded into every serve fails a scenario
  (:func:`conform_failures`).

:func:`markdown_table` renders the measured table of ``docs/defects.md``;
``benchmarks/defect_table.py`` prints it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness_lab.defects import FAMILIES, Defect
from harness_lab.scenarios.loader import LoadedScenario

if TYPE_CHECKING:
    from harness_lab.record import RunRecord
    from harness_lab.runner.run import ScenarioResult

__all__ = ["DETECTORS", "DefectRow", "broken_invariants", "conform_failures",
           "explorer_adds", "explorer_findings", "library_failures", "load_library",
           "markdown_table", "measure", "search_finds", "seed", "yes"]

DETECTORS = ("library", "invariants", "explorer", "search", "conform")
"""The detectors of the table, in its column order."""

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"
"""The scenario library shipped beside the package."""


def load_library(paths: Iterable[str | Path] = (LIBRARY,)) -> list[LoadedScenario]:
    """Every scenario (each matrix variant) under ``paths`` that loads."""
    from harness_lab.runner.run import plan_paths

    return [p.loaded for p in plan_paths(paths) if p.loaded is not None]


def seed(loaded: Sequence[LoadedScenario], defects: Iterable[Defect | str]
         ) -> list[LoadedScenario]:
    """Each scenario of ``loaded`` with ``defects`` added to its configuration's defects."""
    wanted = [Defect(d) for d in defects]
    out = []
    for item in loaded:
        sc = item.scenario
        have = list(sc.config.defects)
        config = sc.config.model_copy(update={
            "defects": have + [d for d in wanted if d not in have]})
        out.append(LoadedScenario(sc.model_copy(update={"config": config}), item.path))
    return out


def _results(loaded: Sequence[LoadedScenario], defect: Defect | str) -> list[ScenarioResult]:
    from harness_lab.runner.run import run_scenario

    return [run_scenario(item) for item in seed(loaded, [defect])]


def library_failures(loaded: Sequence[LoadedScenario], defect: Defect | str) -> list[str]:
    """The names of the scenarios of ``loaded`` that fail with ``defect`` seeded."""
    return _failing(_results(loaded, defect))


def _failing(results: Iterable[ScenarioResult]) -> list[str]:
    """The names of the scenarios whose results failed."""
    return [r.scenario for r in results if not r.ok]


def broken_invariants(loaded: Sequence[LoadedScenario], defect: Defect | str) -> list[str]:
    """The invariants broken by some run (any turn) of ``loaded`` with ``defect`` seeded,
    but a run the store refused (a ``store_failure``): the checks report the row it did not
    store, defect or none."""
    return _broken(_results(loaded, defect))


def _broken(results: Iterable[ScenarioResult]) -> list[str]:
    """The invariants the results' runs (every turn) break, a run the store refused aside."""
    from harness_lab.invariants import check

    broken: set[str] = set()
    for r in results:
        if r.record is None or not _refused(r.record):
            broken |= {v.invariant for v in r.violations}
        for turn in r.turns:
            if not _refused(turn):
                broken |= {v.invariant for v in check(turn)}
    return sorted(broken)


def _refused(record: RunRecord) -> bool:
    """Whether the store refused the run: it stored no row, and its error says why."""
    return record.stored_row is None and "StoreError" in (record.error or "")


def explorer_findings(loaded: Sequence[LoadedScenario], defect: Defect | str | None, *,
                      workers: int | None = None) -> set[str]:
    """The names of the variants the explorer flags over ``loaded`` with ``defect`` seeded
    (None: with none); compare with the unseeded set to see what the defect adds."""
    from harness_lab.explore.boundaries import ExplorationError, record_base
    from harness_lab.explore.library import LibraryPlan, run_library
    from harness_lab.explore.variants import enumerate_variants

    plan = LibraryPlan()
    for item in seed(loaded, [] if defect is None else [defect]):
        try:
            base = record_base(item)
        except ExplorationError:
            continue
        plan.bases.append(base)
        plan.variants.append(enumerate_variants(base, None))
    plan.files = len(plan.bases)
    return {f.variant.name for f in run_library(plan, workers=workers).result.flagged}


def explorer_adds(loaded: Sequence[LoadedScenario], defect: Defect | str,
                  before: set[str] | None = None, *, first: Collection[str] = ()) -> bool:
    """Whether the explorer, over ``loaded`` with ``defect`` seeded, flags a variant it does
    not flag with none seeded: :func:`explorer_findings`'s answer without exploring the whole
    library twice. Each file is explored on its own (a file's variants are judged against
    its own base, as in a whole run), the scenarios named in ``first`` (those the defect is
    known to show in) before the others, and the exploration stops at the first such
    variant. ``before`` is what the explorer flags with none seeded; None: a file is explored
    unseeded too, only when its seeded exploration flags anything."""
    ordered = sorted(loaded, key=lambda item: item.scenario.name not in first)
    for item, seeded in zip(ordered, seed(ordered, [defect]), strict=True):
        flagged = _flagged(seeded)
        if flagged and flagged - (before if before is not None else _flagged(item)):
            return True
    return False


def _flagged(item: LoadedScenario) -> set[str]:
    """The names of the variants of one file the explorer flags (none when its base cannot
    be explored)."""
    from harness_lab.explore.boundaries import ExplorationError, record_base
    from harness_lab.explore.library import LibraryPlan, run_library
    from harness_lab.explore.variants import enumerate_variants

    try:
        base = record_base(item)
    except ExplorationError:
        return set()
    plan = LibraryPlan(bases=[base], variants=[enumerate_variants(base, None)], files=1)
    return {f.variant.name for f in run_library(plan, workers=1).result.flagged}


def search_finds(defect: Defect | str, max_examples: int = 1000) -> list[str]:
    """What the property search's minimal scenario breaks with ``defect`` seeded (empty:
    nothing found within ``max_examples`` derandomized examples)."""
    from harness_lab.explore.property_search import search

    return search(max_examples=max_examples, defects=[str(defect)]).broken


def conform_failures(loaded: Sequence[LoadedScenario], defect: Defect | str, *,
                     time_scale: float = 0.05) -> list[str]:
    """The names of the scenarios ``conform --serve`` fails with ``defect`` seeded into every
    serve (the scenarios themselves unseeded, so they are played live)."""
    from harness_lab.live.adapter import Adapter
    from harness_lab.live.conform_suite import run_suite

    report = run_suite(list(loaded), url=None, adapter=Adapter(), time_scale=time_scale,
                       defects=(Defect(defect),))
    return [r.scenario for r in report.results if r.verdict == "fail"]


@dataclass(frozen=True)
class DefectRow:
    """One defect's row of the table: what each detector saw (a cell's text per detector)."""

    defect: Defect
    cells: dict[str, str]

    @property
    def family(self) -> str:
        """The rule family the defect breaks."""
        return FAMILIES[self.defect]


def yes(found: object) -> str:
    """A cell's text: ``yes`` when the detector found something, else ``no``."""
    return "yes" if found else "no"


def measure(defect: Defect, loaded: Sequence[LoadedScenario], *,
            detectors: Sequence[str] = DETECTORS, unseeded: set[str] | None = None,
            live_at_most: int = 3) -> DefectRow:
    """``defect``'s row over ``loaded``: ``invariants`` names what broke, the others say
    yes or no. ``unseeded`` is what the explorer flags without a defect (None: each file
    the seeded explorer flags anything in is explored unseeded too). ``conform`` plays live
    the first ``live_at_most`` scenarios that fail in the simulation and can be played live,
    one at a time until one fails (the whole library live per defect takes too long):
    ``n/a`` when every scenario that shows the defect is simulated only, ``no`` when none
    shows it."""
    cells: dict[str, str] = {}
    played = {"library", "invariants", "explorer", "conform"} & set(detectors)
    results = _results(loaded, defect) if played else []  # the seeded library, played once
    failing = _failing(results)
    if "library" in detectors:
        cells["library"] = yes(failing)
    if "invariants" in detectors:
        cells["invariants"] = ", ".join(_broken(results)) or "no"
    if "explorer" in detectors:
        cells["explorer"] = yes(explorer_adds(loaded, defect, unseeded, first=failing))
    if "search" in detectors:
        cells["search"] = yes(search_finds(defect))
    if "conform" in detectors:
        from harness_lab.live.conform import not_applicable

        shown = [item for item in loaded if item.scenario.name in failing]
        chosen = [item for item in shown
                  if not not_applicable(item.scenario, configurable=True)][:live_at_most]
        cells["conform"] = ("n/a" if shown and not chosen
                            else yes(any(conform_failures([item], defect)
                                         for item in chosen)))
    return DefectRow(defect, cells)


def markdown_table(rows: Sequence[DefectRow]) -> str:
    """The rows as a Markdown table: defect, family, then one column per detector."""
    lines = ["| defect | rule family | " + " | ".join(DETECTORS) + " |",
             "|---|---|" + "---|" * len(DETECTORS)]
    for row in rows:
        cells = " | ".join(row.cells.get(d, "") for d in DETECTORS)
        lines.append(f"| `{row.defect.value}` | {row.family} | {cells} |")
    return "\n".join(lines)
