"""Fixture scenarios of the explorer tests, and loading them with seeded defects."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from harness_lab.scenarios.loader import LoadedScenario, load_text

DATA = Path(__file__).parent / "data"
REPORT = DATA / "report-released.yaml"
SATURATED = DATA / "saturated-progress.yaml"
DRAFT_CONTRACT = DATA / "draft-contract-fallback.yaml"
LIBRARY_SUCCESS = Path(__file__).parents[2] / "scenarios" / "outcomes" / \
    "conclusion-guards-pass.yaml"


def with_defects(path: Path, defects: Sequence[str]) -> LoadedScenario:
    """The scenario of ``path`` with ``config.defects`` set to ``defects``."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.setdefault("config", {})["defects"] = list(defects)
    return load_text(yaml.safe_dump(data, sort_keys=False), str(path))[0]


def write_with_defects(path: Path, defects: Sequence[str], out: Path) -> Path:
    """Write the scenario of ``path`` with ``defects`` seeded to ``out``."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.setdefault("config", {})["defects"] = list(defects)
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out
