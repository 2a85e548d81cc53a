"""Render every plot of the library to docs/plots/*.png, for docs/plots.md.

Run from the repository root:  python docs/plots/make_gallery.py
It runs the shipped scenario library, a small sweep, the load model and the fault explorer,
so it takes a minute or so; every image is rewritten.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from harness_lab import Components, Harness
from harness_lab.explore import explore
from harness_lab.fakes import (
    Evidence,
    ScriptedModel,
    ScriptedRepair,
    ScriptedResponder,
    ScriptedRetriever,
    ScriptedRouter,
    ScriptedSemanticGuard,
    ScriptedTool,
    call_tool,
    draft,
    progress,
)
from harness_lab.report import outcome_bars, run_timeline
from harness_lab.report.plots import exploration_heatmap, load_curve_plot, sweep_share
from harness_lab.runner import run_paths
from harness_lab.sweep.engine import Sweep
from harness_lab.sweep.load import run_load

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
FIVE = ["outcomes/conclusion-guards-pass.yaml", "outcomes/semantic-unsupported.yaml",
        "faults/client-disconnect-at-s.yaml", "late/after-deadline.yaml",
        "faults/budget-tool-calls.yaml"]


def tour_components() -> Components:
    """The lifecycle tour's components: two tools, then a conclusion the guards pass."""
    inv = "run-000001-inv-"
    model = ScriptedModel([
        call_tool("logs", {"service": "checkout"}, latency_s=1.0),
        call_tool("metrics", {"service": "checkout"}, latency_s=1.0,
                  progress=progress("GAINED", facts=[("db timeouts in the logs", [inv + "1"])])),
        draft("The db connection pool is exhausted", latency_s=1.0,
              evidence=[(inv + "1", "timeouts"), (inv + "2", "pool at 100%")],
              progress=progress("GAINED")),
    ])
    return Components(
        router=ScriptedRouter("DIAGNOSIS", latency_s=0.2), model=model,
        guard=ScriptedSemanticGuard("SUPPORTED", latency_s=0.5), repair=ScriptedRepair([]),
        responder=ScriptedResponder(), retriever=ScriptedRetriever(),
        tools=[ScriptedTool("logs", default=Evidence(({"line": "db timeout"},), latency_s=2.0)),
               ScriptedTool("metrics", default=Evidence(({"pool_in_use": 1.0},),
                                                        latency_s=1.0))])


def save(ax: object, name: str) -> None:
    """Write the figure of ``ax`` to docs/plots/<name>.png and say so."""
    path = OUT / f"{name}.png"
    ax.savefig(path, dpi=100)  # type: ignore[attr-defined]
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> int:
    """Render the gallery."""
    scenarios = ROOT / "scenarios"
    library = run_paths([scenarios])
    five = run_paths([scenarios / f for f in FIVE])
    save(outcome_bars(five), "outcome_bars_five")
    save(outcome_bars(library, by="directory"), "outcome_bars_library_by_directory")
    save(outcome_bars(library, by="case", normalize=True), "outcome_bars_library_by_case")
    save(outcome_bars(library, by="tags"), "outcome_bars_library_by_tag")
    record = Harness(tour_components()).run("Why is checkout slow?")
    cancelled = Harness(tour_components()).run("Why is checkout slow?", disconnect_at=1.5)
    save(run_timeline([record, cancelled], labels=["completed", "client disconnects at 1.5 s"]),
         "timeline_tour")
    [repaired] = run_paths([scenarios / "paths" / "diagnosis-evidence-repaired.yaml"])
    save(run_timeline([repaired]), "timeline_one_run")
    save(run_timeline(five), "timeline_five")
    save(run_timeline(library), "timeline_library")
    sweep_file = scenarios / "sweeps" / "deadline-sweep.yaml"
    result = Sweep.from_file(str(sweep_file), samples=200, seed=7, workers=1).run()
    save(sweep_share(result, "config.deadline_s", "TIMED_OUT", "run_state"), "sweep_share")
    save(outcome_bars(result.frame, by="config.deadline_s", normalize=True), "outcome_bars_sweep")
    data = yaml.safe_load(sweep_file.read_text(encoding="utf-8"))
    points = [run_load(data, rate, capacity={"model": 2, "tool": 2}, duration_s=120, seed=1,
                       overrides={"config.deadline_s": 20}) for rate in (0.1, 0.3, 0.6, 1.0)]
    save(load_curve_plot(points, deadline_s=20), "load_curve")
    exploration = explore(scenarios / "outcomes" / "conclusion-guards-pass.yaml")
    save(exploration_heatmap(exploration), "explore_heatmap")
    return 0


if __name__ == "__main__":
    sys.exit(main())
