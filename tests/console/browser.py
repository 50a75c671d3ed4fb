"""Headless Chromium driven by selenium, for the console's browser tests: every page load is
checked for JavaScript errors, and screenshots go to $KILN_CONSOLE_ARTIFACTS."""
import os
import shutil
import time

import pytest

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:  # the check below says what is missing
    webdriver = None

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
ARTIFACTS = os.environ.get("KILN_CONSOLE_ARTIFACTS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "console-artifacts")


def require_browser():
    """Skips when the browser or selenium is missing, except in CI (deploy/setup.sh installs
    them there), where that fails."""
    if webdriver is not None and CHROMIUM and DRIVER:
        return
    message = "chromium, chromium-driver and python3-selenium are needed (deploy/setup.sh)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


class Browser:
    """One headless Chromium window of 1400x900."""

    def __init__(self):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                    "--disable-gpu", "--window-size=1400,900"):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(DRIVER), options=options)
        self.driver.set_page_load_timeout(60)
        os.makedirs(ARTIFACTS, exist_ok=True)

    def open(self, url):
        self.driver.get(url)

    def leave(self):
        """Leaves the page (about:blank), so that its refreshes stop before its server does."""
        self.driver.get("about:blank")

    def all(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait(self, what, timeout=30.0, message=""):
        """The first true value of what() within timeout seconds, else an assertion error."""
        deadline = time.time() + timeout
        while True:
            try:
                value = what()
            except Exception:  # an element replaced under us: look again
                value = None
            if value:
                return value
            if time.time() > deadline:
                self.shot("timeout")
                raise AssertionError("timed out waiting: " + message)
            time.sleep(0.1)

    def wait_for(self, selector, timeout=30.0):
        """The elements matching selector, once there is at least one."""
        return self.wait(lambda: self.all(selector), timeout, selector)

    def shot(self, name):
        """Saves a screenshot as <artifacts>/<name>.png."""
        path = os.path.join(ARTIFACTS, name + ".png")
        self.driver.save_screenshot(path)
        return path

    def errors(self):
        """The browser console's errors since the last look, but for the answers the test
        provoked on purpose (Chromium logs each HTTP error status: see `allow`)."""
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"
                and not (e.get("source") == "network"
                         and any("status of %d" % code in e["message"] for code in self.allowed))]

    allowed = ()  # HTTP statuses a test expects (a 401 before the token form is filled)

    def allow(self, *codes):
        """Lets the network errors of these HTTP statuses pass errors()."""
        self.allowed = codes

    def close(self):
        self.driver.quit()
