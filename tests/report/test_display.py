"""Jupyter shows records, results and sweeps as the report does, without their classes
knowing HTML: importing harness_lab inside IPython registers the views by class name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

from harness_lab.report.display import VIEWS, register_display
from harness_lab.runner import run_paths
from tests.report.test_frames import four_runs
from tests.runner.test_results import GOOD


def test_without_ipython_nothing_is_registered() -> None:
    assert register_display(None) is (sys.modules.get("IPython") is not None
                                      and sys.modules["IPython"].get_ipython() is not None)


def test_a_registered_shell_shows_a_record_as_the_report_view() -> None:
    shell = InteractiveShell.instance()
    assert register_display(shell) is True
    record = four_runs()[1][2]
    data, _ = shell.display_formatter.format(record)
    assert "text/html" in data
    assert '<svg class="timeline"' in data["text/html"]
    assert "DEADLINE_EXCEEDED" in data["text/html"]


def test_a_registered_shell_shows_a_result_set_as_a_table_of_verdicts(tmp_path: Path
                                                                      ) -> None:
    (tmp_path / "a.yaml").write_text(GOOD, encoding="utf-8")
    shell = InteractiveShell.instance()
    register_display(shell)
    data, _ = shell.display_formatter.format(run_paths([tmp_path]))
    assert ">1 ok<" in data["text/html"]


def test_every_view_names_a_class_and_a_function_that_exist() -> None:
    import importlib

    notebook = importlib.import_module("harness_lab.report.notebook")
    for (module, cls), view in VIEWS.items():
        assert hasattr(importlib.import_module(module), cls), (module, cls)
        assert callable(getattr(notebook, view))


def test_importing_harness_lab_inside_ipython_registers_the_views() -> None:
    code = ("from IPython.core.interactiveshell import InteractiveShell\n"
            "shell = InteractiveShell.instance()\n"
            "import harness_lab\n"
            "from harness_lab.record import RunRecord\n"
            "html = shell.display_formatter.formatters['text/html']\n"
            "print(html.lookup_by_type(RunRecord).__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "record_html"
