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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

WIDTH = 1400


def _driver(height: int) -> object:
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
        out = work / "report.html"
        driver = _driver(1000)
        try:
            driver.get(out.as_uri())  # type: ignore[attr-defined]
            time.sleep(0.3)
            driver.save_screenshot(str(HERE / "viewer_top.png"))  # type: ignore[attr-defined]
            row = driver.find_element(  # type: ignore[attr-defined]
                By.CSS_SELECTOR, 'tr.run[data-k-name="wrong-counts-fails"]')
            row.click()
            driver.execute_script(  # type: ignore[attr-defined]
                "arguments[0].scrollIntoView({block: 'start'}); window.scrollBy(0, -110);", row)
            time.sleep(0.3)
            driver.save_screenshot(str(HERE / "viewer_drill_down.png"))  # type: ignore[attr-defined]
            table = driver.find_element(By.ID, "outcome-table")  # type: ignore[attr-defined]
            driver.execute_script(  # type: ignore[attr-defined]
                "arguments[0].scrollIntoView({block: 'start'});", table)
            time.sleep(0.3)
            driver.save_screenshot(str(HERE / "viewer_outcome_table.png"))  # type: ignore[attr-defined]
        finally:
            driver.quit()  # type: ignore[attr-defined]
    for name in ("viewer_top", "viewer_drill_down", "viewer_outcome_table"):
        print(f"wrote docs/report/{name}.png")


if __name__ == "__main__":
    main()
