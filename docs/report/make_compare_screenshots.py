"""Screenshot the report's "compared with" view for docs/report.md (headless Chromium,
selenium).

Run from the repository root (needs ``chromium``, ``chromium-driver`` and ``selenium``):

    .venv/bin/python docs/report/make_compare_screenshots.py

It logs a run of the small library of the browser tests, then changes it as a pull request
might (one expectation made stricter, one fixed, one scenario's deadline shortened, one file
removed and one added), logs a second run, writes ``harness-lab report NEW --compare OLD``
and takes two 1400-pixel-wide screenshots: the top of the page, and the regressions with one
drill-down open.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def change_library(lib: Path) -> None:
    """The changes between the two runs."""
    from tests.report.test_compare import ADDED

    deadline = lib / "timeouts" / "deadline.yaml"
    deadline.write_text(deadline.read_text(encoding="utf-8") + "expect: {tool_calls: 3}\n",
                        encoding="utf-8")
    _edit(lib / "timeouts" / "wrong-counts.yaml", "tool_calls: 5", "tool_calls: 1")
    _edit(lib / "fallbacks" / "wrong-case.yaml", "tools: {logs: {}}",
          "tools: {logs: {}}\nlatency: {router: 0.2, model: 1.0}\nconfig: {deadline_s: 0.5}")
    (lib / "broken" / "unknown-key.yaml").unlink()
    (lib / "fallbacks" / "added.yaml").write_text(ADDED, encoding="utf-8")


def _log(directory: str) -> str:
    (path,) = Path(directory).glob("*.jsonl")
    return str(path)


def main() -> None:
    """Write the compared report and its screenshots to docs/report/*.png."""
    from make_screenshots import browsing, scroll_to, shoot
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from harness_lab.cli import main as cli
    from tests.report.test_viewer import write_library

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.chdir(work)  # so the page shows the short paths a user would type
        write_library(work / "lib")
        cli(["run", "lib", "--log-dir", "before"])
        change_library(work / "lib")
        cli(["run", "lib", "--log-dir", "after"])
        old, new = _log("before"), _log("after")
        cli(["report", new, "--compare", old, "--out", "compared.html"])
        with browsing(work / "compared.html") as driver:
            shoot(driver, "compare_top")
            Select(driver.find_element(By.CSS_SELECTOR, 'select[data-filter="change"]')
                   ).select_by_value("regression")
            driver.find_element(By.CSS_SELECTOR, 'tr.run[data-k-name="wrong-case-fails"]').click()
            scroll_to(driver, driver.find_element(By.ID, "filters"))
            shoot(driver, "compare_drill_down")


if __name__ == "__main__":
    main()
