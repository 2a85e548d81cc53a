"""The report viewer driven in a real browser: headless Chromium through selenium.

The page is the report ``harness-lab report`` writes of a small library whose verdicts are
known from the files (``tests/report/test_viewer.py``). Skipped, with the reason, when
selenium, chromium or chromedriver is missing (``apt-get install chromium
chromium-driver``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness_lab.cli import main
from tests.report.test_viewer import VERDICTS, write_library

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WIDTH = 1400

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs chromium and chromedriver (apt-get install chromium chromium-driver)")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_library(tmp_path_factory.mktemp("library"))
    out = root / "report.html"
    assert main(["report", str(root), "--out", str(out)]) == 1  # the library fails on purpose
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     f"--window-size={WIDTH},1000", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser: Any, report: Path) -> Any:
    browser.get("about:blank")  # a fresh load, whatever address the last test left
    browser.get(report.as_uri())
    browser.get_log("browser")  # start each test with an empty console
    return browser


def shown_names(driver: Any) -> set[str]:
    rows = driver.find_elements(By.CSS_SELECTOR, "#runs tr.run")
    return {row.get_attribute("data-k-name") for row in rows if row.is_displayed()}


def row_of(driver: Any, name: str) -> Any:
    return driver.find_element(By.CSS_SELECTOR, f'#runs tr.run[data-k-name="{name}"]')


def test_the_page_loads_without_a_script_error(browser: Any, report: Path) -> None:
    browser.get(report.as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert browser.find_element(By.ID, "shown").text == "7 of 7 scenario(s) shown"


def test_filtering_to_failed_runs_shows_exactly_the_failed_rows(page: Any) -> None:
    Select(page.find_element(By.CSS_SELECTOR, 'select[data-filter="verdict"]')).select_by_value(
        "FAILED")
    assert shown_names(page) == {n for n, v in VERDICTS.items() if v == "FAILED"}
    assert page.find_element(By.ID, "shown").text == "3 of 7 scenario(s) shown"
    assert [e for e in page.get_log("browser") if e["level"] == "SEVERE"] == []


def test_the_error_total_in_the_header_filters_to_the_errored_file(page: Any) -> None:
    page.find_element(By.CSS_SELECTOR, 'button.total[data-verdict="ERROR"]').click()
    assert shown_names(page) == {"unknown-key"}


def test_a_drill_down_opens_and_shows_the_trace_and_the_sse_events(page: Any) -> None:
    row = row_of(page, "deadline-timeout-ok")
    detail = page.find_element(By.CSS_SELECTOR, f'tr.detail[data-for="{row.get_attribute("id")}"]')
    assert not detail.is_displayed()
    row.click()
    assert detail.is_displayed()
    assert row.get_attribute("aria-expanded") == "true"
    trace = detail.find_element(By.CSS_SELECTOR, "table.hl-trace")
    assert trace.is_displayed()
    types = [td.text for td in trace.find_elements(By.CSS_SELECTOR, "tbody tr td:nth-child(4)")]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    assert "DEADLINE_EXCEEDED" in detail.find_element(By.CSS_SELECTOR, "table.hl-sse").text
    assert detail.find_element(By.CSS_SELECTOR, "svg.timeline").is_displayed()
    row.click()
    assert not detail.is_displayed()


def test_a_drill_down_part_scrolled_to_stops_below_the_sticky_filters_and_header(
        page: Any) -> None:
    row = row_of(page, "deadline-timeout-ok")
    row.click()
    detail = page.find_element(By.CSS_SELECTOR, f'tr.detail[data-for="{row.get_attribute("id")}"]')
    trace = detail.find_element(By.XPATH, ".//table[contains(@class, 'hl-trace')]/ancestor::details"
                                          "/summary")
    page.set_window_size(WIDTH, 700)
    page.execute_script("arguments[0].scrollIntoView({block: 'start'})", trace)
    header = page.find_element(By.CSS_SELECTOR, "table.runs > thead th")
    bottom = page.execute_script("return arguments[0].getBoundingClientRect().bottom", header)
    top = page.execute_script("return arguments[0].getBoundingClientRect().top", trace)
    page.set_window_size(WIDTH, 1000)
    assert bottom > 0 and top >= bottom - 1, "the trace's heading is under the sticky header"

def test_search_narrows_the_rows_to_those_holding_every_word(page: Any) -> None:
    search = page.find_element(By.ID, "search")
    search.send_keys("variants")
    assert shown_names(page) == {"cancel-notice[failure]", "cancel-notice[silent]"}
    search.clear()
    search.send_keys("fallback demo")
    assert shown_names(page) == {"missing-context-ok"}
    page.find_element(By.ID, "reset").click()
    assert len(shown_names(page)) == len(VERDICTS)


def test_filters_combine_directory_and_tag(page: Any) -> None:
    Select(page.find_element(By.CSS_SELECTOR, 'select[data-filter="dir"]')).select_by_value(
        "timeouts")
    assert shown_names(page) == {"deadline-timeout-ok", "wrong-counts-fails",
                                 "cancel-notice[failure]", "cancel-notice[silent]"}
    Select(page.find_element(By.CSS_SELECTOR, 'select[data-filter="tags"]')).select_by_value(
        "demo")
    assert shown_names(page) == {"deadline-timeout-ok"}


def test_the_fallback_type_filter_keeps_the_runs_of_that_type(page: Any) -> None:
    Select(page.find_element(By.CSS_SELECTOR, 'select[data-filter="fallback"]')
           ).select_by_value("MISSING_REQUIRED_CONTEXT")
    assert shown_names(page) == {"missing-context-ok", "wrong-case-fails"}


def test_sorting_by_scenario_orders_the_rows_by_name_and_back(page: Any) -> None:
    header = page.find_element(By.CSS_SELECTOR, 'th[data-sort="name"]')
    header.click()
    names = [r.get_attribute("data-k-name")
             for r in page.find_elements(By.CSS_SELECTOR, "#runs tr.run")]
    assert names == sorted(VERDICTS)
    header.click()
    names = [r.get_attribute("data-k-name")
             for r in page.find_elements(By.CSS_SELECTOR, "#runs tr.run")]
    assert names == sorted(VERDICTS, reverse=True)


def test_a_scenario_of_the_outcome_table_opens_its_row(page: Any) -> None:
    page.find_element(By.CSS_SELECTOR, 'a.repro[title="does not end as this row says"]').click()
    row = row_of(page, "wrong-case-fails")
    assert row.get_attribute("aria-expanded") == "true"


def test_the_page_fits_a_1400_pixel_window_with_every_drill_down_open(page: Any) -> None:
    page.find_element(By.ID, "expand").click()
    inner = page.execute_script("return window.innerWidth")
    assert inner == WIDTH
    assert page.execute_script("return document.documentElement.scrollWidth") <= inner
    right = page.execute_script(
        "return document.getElementById('runs').getBoundingClientRect().right")
    assert right <= inner


def test_the_filters_live_in_the_address_so_a_view_can_be_sent(page: Any, report: Path) -> None:
    Select(page.find_element(By.CSS_SELECTOR, 'select[data-filter="verdict"]')).select_by_value(
        "FAILED")
    assert page.current_url.endswith("#verdict=FAILED")
    page.get("about:blank")
    page.get(report.as_uri() + "#verdict=FAILED&q=five%20tool")
    assert shown_names(page) == {"wrong-counts-fails"}
    assert page.find_element(By.ID, "search").get_attribute("value") == "five tool"
    assert [e for e in page.get_log("browser") if e["level"] == "SEVERE"] == []


def test_slash_focuses_the_search_and_escape_clears_it(page: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    page.find_element(By.TAG_NAME, "body").send_keys("/")
    search = page.switch_to.active_element
    assert search.get_attribute("id") == "search"
    search.send_keys("variants")
    assert len(shown_names(page)) == 2
    search.send_keys(Keys.ESCAPE)
    assert len(shown_names(page)) == len(VERDICTS)


def test_the_shipped_library_report_fits_the_window_and_logs_no_error(
        browser: Any, tmp_path: Path) -> None:
    library = Path(__file__).resolve().parents[2] / "scenarios"
    out = tmp_path / "library.html"
    assert main(["report", str(library), "--out", str(out)]) in (0, 1)
    browser.get("about:blank")
    browser.get(out.as_uri())
    browser.find_element(By.ID, "expand").click()  # every drill-down open
    inner = browser.execute_script("return window.innerWidth")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= inner
    rows = browser.find_elements(By.CSS_SELECTOR, "#runs tr.run")
    assert len(rows) > 100
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
