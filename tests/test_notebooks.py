"""The notebooks run from a clean kernel, show every plot, and print no warning.

Each notebook is executed once (a module-scoped fixture) and its outputs examined: no error,
no output committed, one image per plotting cell, progress bars as widgets, nothing on
stderr and no figure printed as text in place of its image.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK_DIR = Path(__file__).parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

IMAGES = {
    "lifecycle_tour": 1,  # the completed and the disconnected run's timeline
    "outcome_distributions": 3,  # TIMED_OUT share and outcomes by deadline, the load curve
    "scenario_regression": 2,  # outcomes by directory, the failing run's timeline
}
"""Image outputs each notebook must show: one per plotting cell."""

WIDGETS = {"outcome_distributions", "scenario_regression"}
"""Notebooks whose cells show a progress bar, which must render as a widget."""

WIDGET = "application/vnd.jupyter.widget-view+json"


def test_the_notebooks_are_found() -> None:
    assert {p.stem for p in NOTEBOOKS} == set(IMAGES)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_notebook_output_is_committed(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in nb.cells if c.cell_type == "code")


@pytest.fixture(scope="module", params=[pytest.param(p, id=p.stem, marks=pytest.mark.notebook)
                                        for p in NOTEBOOKS])
def executed(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    """A notebook executed from a clean kernel: its name and every code cell's outputs."""
    path: Path = request.param
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return path.stem, [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]


def test_a_notebook_executes_without_error(executed: tuple[str, list[dict[str, Any]]]) -> None:
    _, outputs = executed
    assert [o for o in outputs if o["output_type"] == "error"] == []


def test_every_plotting_cell_shows_its_image(executed: tuple[str, list[dict[str, Any]]]) -> None:
    name, outputs = executed
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == IMAGES[name]
    texts = [o["data"].get("text/plain", "") for o in outputs if "data" in o]
    assert not [t for t in texts if t.startswith("<Figure size")], "a figure printed as text"


def test_a_notebook_prints_nothing_on_stderr(executed: tuple[str, list[dict[str, Any]]]) -> None:
    _, outputs = executed
    stderr = [o["text"] for o in outputs if o["output_type"] == "stream"
              and o["name"] == "stderr"]
    assert stderr == []
    printed = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
    assert "TqdmWarning" not in printed and "Warning" not in printed


def test_progress_bars_render_as_widgets(executed: tuple[str, list[dict[str, Any]]]) -> None:
    name, outputs = executed
    widgets = [o for o in outputs if WIDGET in o.get("data", {})]
    assert bool(widgets) == (name in WIDGETS)
