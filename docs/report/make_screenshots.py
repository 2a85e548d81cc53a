"""Screenshot the report viewer for docs/report.md, in headless Chromium through selenium.

Run from the repository root (needs ``chromium``, ``chromium-driver`` and ``selenium``):

    .venv/bin/python docs/report/make_screenshots.py

It writes the report of the shipped library plus the small library of the browser tests
(``demo-failures``, whose scenarios fail on purpose, so the failures show), then takes three
1400-pixel-wide screenshots: the top of the page, a failed scenario's drill-down, and the
outcome table.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

WIDTH = 1400


def _driver(height: int) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     f"--window-size={WIDTH},{height}"):
        options.add_argument(argument)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        options.binary_location = chromium
    driver = shutil.which("chromedriver")
    service = Service(driver) if driver else Service()
    return webdriver.Chrome(service=service, options=options)


@contextmanager
def browsing(page: Path, height: int = 1000) -> Iterator[Any]:
    """A headless Chromium ``WIDTH`` by ``height`` pixels showing ``page``; quit on leaving."""
    driver = _driver(height)
    try:
        driver.get(page.as_uri())
        yield driver
    finally:
        driver.quit()


def scroll_to(driver: Any, element: Any, below: int = 0) -> None:
    """Scroll so that ``element`` stands at the top of the window, ``below`` pixels down."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'}); "
                          "window.scrollBy(0, -arguments[1]);", element, below)


def shoot(driver: Any, name: str) -> None:
    """Let the page settle, then save the window as docs/report/NAME.png."""
    time.sleep(0.3)
    driver.save_screenshot(str(HERE / f"{name}.png"))
    print(f"wrote docs/report/{name}.png")


def main() -> None:
    """Write the report and its screenshots to docs/report/*.png."""
    from selenium.webdriver.common.by import By

    from harness_lab.cli import main as cli
    from tests.report.test_viewer import write_library

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("scenarios", "cassettes"):  # recorded scenarios name ../../cassettes
            (work / name).symlink_to(ROOT / name, target_is_directory=True)
        write_library(work / "demo-failures")
        os.chdir(work)  # so the header shows the short paths a user would type
        cli(["report", "scenarios", "demo-failures", "--out", "report.html"])
        with browsing(work / "report.html") as driver:
            shoot(driver, "viewer_top")
            row = driver.find_element(By.CSS_SELECTOR, 'tr.run[data-k-name="wrong-counts-fails"]')
            row.click()
            scroll_to(driver, row, below=110)
            shoot(driver, "viewer_drill_down")
            scroll_to(driver, driver.find_element(By.ID, "outcome-table"))
            shoot(driver, "viewer_outcome_table")


if __name__ == "__main__":
    main()
