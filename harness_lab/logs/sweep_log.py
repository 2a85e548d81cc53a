"""The run log of a sweep: the records it keeps (``--keep-every``) and its failing samples.

A sweep keeps each kept sample as ``RunRecord.to_dict()`` (what ``--records-out`` writes) and
each failing sample as a summary; the log holds one run line per kept record, named
``SCENARIO@gGRID-sSAMPLE`` and judged by the invariants, and one per failing sample without
a kept record (its error and broken invariants, no record).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_lab.logs.options import RunLog, run_log

__all__ = ["log_sweep", "record_from_dict", "sweep_log", "sweep_results"]


def record_from_dict(d: Mapping[str, Any]) -> Any:
    """The RunRecord of ``RunRecord.to_dict()`` data (the codec's, as a log's)."""
    from harness_lab.logs.codec import record_from_data

    return record_from_data(d)


def _name(scenario: str, grid: Any, sample: Any) -> str:
    return f"{scenario}@g{grid}-s{sample}"


def sweep_results(scenario: str, path: str, kept: Sequence[Mapping[str, Any]],
                  failures: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Scenario results of a sweep's kept records and failing samples, in that order."""
    from harness_lab.logs.codec import record_result
    from harness_lab.runner.run import ScenarioResult
    from harness_lab.sweep.sample import grid_sample_of

    results: list[ScenarioResult] = []
    seen: set[tuple[Any, Any]] = set()
    for d in kept:
        record = record_from_dict(d) if "trace" in d else None  # None: the sample crashed
        found = None if record is None else grid_sample_of(record.run_id)
        grid, sample = (d.get("grid"), d.get("sample")) if found is None else found
        seen.add((grid, sample))
        name = _name(scenario, grid, sample)
        results.append(ScenarioResult(name, path, error=str(d.get("error"))) if record is None
                       else record_result(name, path, record, error=record.error))
    for f in failures:
        if (f["grid"], f["sample"]) in seen:
            continue
        results.append(ScenarioResult(
            _name(scenario, f["grid"], f["sample"]), path,
            unexpected=tuple(f.get("violations") or ()),
            error=f.get("error") or None,
            extra={"run_state": f.get("run_state"), "release_outcome": f.get("release_outcome"),
                   "seed": f.get("seed")}))
    return results


def sweep_log(args: argparse.Namespace) -> RunLog | int | None:
    """The sweep's log hook, checked before the sweep runs (2: a usage error, printed)."""
    return run_log("sweep", args)


def log_sweep(log: RunLog | None, args: argparse.Namespace, result: Any) -> Path | None:
    """Log what the sweep kept and its failures; say where (nothing kept: no log)."""
    if log is None:
        return None
    for item in sweep_results(result.scenario or Path(args.file).stem, str(args.file),
                              result.kept, result.failures):
        log.add(item)
    return log.close(sys.stderr)
