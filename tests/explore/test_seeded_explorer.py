"""The explorer column of docs/defects.md, recomputed: a file of its own, so that the
suite's workers explore while another one checks the other columns (tests/test_defects.py)."""

from __future__ import annotations

import pytest

from harness_lab.defects import Defect
from harness_lab.explore.seeded import measure
from harness_lab.scenarios.loader import LoadedScenario
from tests.test_defects import documented, library

__all__ = ["library"]


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("defect", list(Defect), ids=str)
def test_the_explorer_cell_is_what_is_measured(defect: Defect,
                                               library: list[LoadedScenario]) -> None:
    row = measure(defect, library, detectors=("explorer",))
    assert row.cells["explorer"] == documented()[defect.value]["explorer"]


