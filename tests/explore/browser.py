"""A headless Debian chromium driven by selenium for the page tests (no browser download).

Locally the tests skip, with the reason, when chromium, chromium-driver or selenium is
missing; under CI (``CI=true``, where ``.ci/run`` installs them) a missing browser fails.
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def find_browser() -> tuple[str | None, str | None, str]:
    """(browser path, driver path, why not) for the headless tests."""
    browser = next((shutil.which(n) for n in CHROMIUM if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return browser, driver, "selenium is not installed (pip install 'rasplab[browser]')"
    if browser is None:
        return None, driver, "no chromium on PATH (apt-get install chromium chromium-driver)"
    if driver is None:
        return browser, None, "no chromedriver on PATH (apt-get install chromium-driver)"
    return browser, driver, ""


@pytest.fixture(scope="session")
def browser():
    """A headless chromium WebDriver (console messages kept for the tests)."""
    path, driver_path, why = find_browser()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser tests, but {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = path
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.add_argument("--disable-dev-shm-usage")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


def open_page(driver, path) -> list[dict]:
    """Load the page file; return the console messages logged while it loaded."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop messages of earlier pages
    driver.get(f"file://{path}")
    WebDriverWait(driver, 10).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'")
    )
    return driver.get_log("browser")
