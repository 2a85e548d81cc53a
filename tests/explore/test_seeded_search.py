"""The property search column of docs/defects.md, recomputed: a file of its own, so that the
suite's workers search while another one checks the other columns (tests/test_defects.py)."""

from __future__ import annotations

import pytest

from harness_lab.defects import Defect
from harness_lab.explore.seeded import measure
from tests.test_defects import documented


@pytest.mark.slow
@pytest.mark.parametrize("defect", list(Defect), ids=str)
def test_the_search_cell_is_what_is_measured(defect: Defect) -> None:
    row = measure(defect, [], detectors=("search",))
    assert row.cells["search"] == documented()[defect.value]["search"]
