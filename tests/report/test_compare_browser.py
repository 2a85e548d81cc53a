"""The "compared with" view driven in headless Chromium through selenium.

The page is what ``harness-lab report NEW --compare OLD`` writes for two logs of the small
library of ``test_viewer.py``: between them ``deadline-timeout-ok``'s expectation changed
(it fails now), ``unknown-key.yaml`` was removed and ``added-later`` added. Skipped, with the
reason, when selenium, chromium or chromedriver is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness_lab.cli import main
from tests.report.test_compare import CHANGED, two_runs

pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

from tests.report.test_viewer_browser import (  # noqa: E402, F401 (browser is a fixture)
    CHROMEDRIVER,
    CHROMIUM,
    browser,
    shown_names,
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs chromium and chromedriver (apt-get install chromium chromium-driver)")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = two_runs(tmp_path_factory.mktemp("compare"), add_and_remove=True)
    out = runs.root.parent / "compared.html"
    assert main(["report", str(runs.new), "--compare", str(runs.old), "--out", str(out)]) == 1
    return out


@pytest.fixture
def page(browser: Any, report: Path) -> Any:  # noqa: F811 (the imported fixture)
    browser.get("about:blank")
    browser.get(report.as_uri())
    browser.get_log("browser")
    return browser


def severe(driver: Any) -> list[Any]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def change_filter(driver: Any) -> Select:
    return Select(driver.find_element(By.CSS_SELECTOR, 'select[data-filter="change"]'))


def badged(driver: Any, *labels: str) -> set[str]:
    """The shown rows whose change badge reads one of ``labels``."""
    names = set()
    for row in driver.find_elements(By.CSS_SELECTOR, "#runs tr.run"):
        badges = row.find_elements(By.CSS_SELECTOR, ".hl-change")
        if row.is_displayed() and badges and badges[0].text in labels:
            names.add(row.get_attribute("data-k-name"))
    return names


def test_the_compared_page_loads_without_a_script_error(browser: Any, report: Path) -> None:  # noqa: F811
    browser.get(report.as_uri())
    assert severe(browser) == []
    assert browser.find_element(By.ID, "compared").is_displayed()
    assert browser.find_element(By.ID, "shown").text == "7 of 7 scenario(s) shown"


def test_exactly_the_scenario_whose_expectation_changed_shows_as_regressed(page: Any) -> None:
    assert badged(page, "regressed", "new failure") == {CHANGED}
    change_filter(page).select_by_value("regression")
    assert shown_names(page) == {CHANGED}
    assert severe(page) == []


def test_the_change_filter_shows_exactly_the_changed_rows(page: Any) -> None:
    change_filter(page).select_by_value("any")
    assert shown_names(page) == {CHANGED, "added-later"}
    assert page.find_element(By.ID, "shown").text == "2 of 7 scenario(s) shown"
    change_filter(page).select_by_value("unchanged")
    assert shown_names(page) == {"missing-context-ok", "wrong-case-fails", "wrong-counts-fails",
                                 "cancel-notice[failure]", "cancel-notice[silent]"}
    assert severe(page) == []


def test_a_count_in_the_header_filters_to_its_kind(page: Any) -> None:
    page.find_element(By.CSS_SELECTOR, 'button.change-total[data-change="added"]').click()
    assert shown_names(page) == {"added-later"}
    assert change_filter(page).first_selected_option.get_attribute("value") == "added"
    assert "active" in page.find_element(
        By.CSS_SELECTOR, 'button.change-total[data-change="added"]').get_attribute("class")


def test_the_removed_count_goes_to_the_removed_scenarios(page: Any) -> None:
    page.find_element(By.CSS_SELECTOR, 'button.change-total[data-change="removed"]').click()
    section = page.find_element(By.ID, "removed")
    assert section.is_displayed()
    top = page.execute_script("return arguments[0].getBoundingClientRect().top;", section)
    assert abs(top) < 5  # scrolled to it
    names = [td.text for td in section.find_elements(By.CSS_SELECTOR, "tbody td:first-child")]
    assert names == ["unknown-key"]


def test_the_change_filter_lives_in_the_address(page: Any, report: Path) -> None:
    change_filter(page).select_by_value("regression")
    assert page.current_url.endswith("#change=regression")
    page.get("about:blank")
    page.get(report.as_uri() + "#change=any")
    assert shown_names(page) == {CHANGED, "added-later"}
    assert severe(page) == []


def test_the_drill_down_shows_the_differences_the_diff_reports(page: Any) -> None:
    row = page.find_element(By.CSS_SELECTOR, f'#runs tr.run[data-k-name="{CHANGED}"]')
    row.click()
    detail = page.find_element(By.CSS_SELECTOR,
                               f'tr.detail[data-for="{row.get_attribute("id")}"]')
    section = detail.find_element(By.CSS_SELECTOR, "details.hl-compared")
    assert section.is_displayed()
    aspects = [th.text for th in section.find_elements(By.CSS_SELECTOR, ".hl-differences th")]
    assert aspects == ["verdict", "scenario file"]
    text = section.text
    assert "verdict ok -> FAILED" in text and "tool_calls" in text
    assert "was ok" in text.replace("\n", " ")


def test_the_compared_page_fits_a_1400_pixel_window(page: Any) -> None:
    page.find_element(By.ID, "expand").click()
    width = page.execute_script("return document.documentElement.scrollWidth;")
    assert width <= 1400
