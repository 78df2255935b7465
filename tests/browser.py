"""A real browser for the tests: Debian's headless Chromium driven by Selenium.

``.ci/run`` installs ``chromium`` and ``chromium-driver`` when they are missing, so
in CI (``CI`` set) a missing browser fails the tests that need it; elsewhere they
are skipped with the reason. Each test module starts one browser
(:func:`browser_session`, a module-scoped fixture) and every page is opened from a
``file://`` URL, as a person opening a saved page would: no server, no network.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # Chromium refuses to run as root with its sandbox
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


def missing() -> str | None:
    """Why no browser can be started here, or ``None`` when one can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            return f"{path} is missing (apt-get install {package}; .ci/run installs it)"
    return None


class Browser:
    """One headless Chromium; :meth:`open` loads a page, :meth:`errors` reads its console."""

    def __init__(self, profile: Path) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # An explicit driver: Selenium Manager never looks for (or downloads) one.
        self.driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
        self.size(1280, 1000)

    def size(self, width: int, height: int) -> None:
        """Make the viewport ``width`` × ``height`` CSS pixels (a phone: 390 × 844)."""
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    def open(self, path: Path, fragment: str = "") -> None:
        """Load the page at ``path`` (its console is emptied first)."""
        self.errors()
        self.driver.get(path.resolve().as_uri() + fragment)

    def errors(self) -> list[str]:
        """The errors and warnings the console got since the last call."""
        return [
            entry["message"]
            for entry in self.driver.get_log("browser")
            if entry["level"] in ("SEVERE", "WARNING")
        ]

    def run(self, script: str, *args: Any) -> Any:
        """The value of a script run in the page (``return …``)."""
        return self.driver.execute_script(script, *args)

    def keys(self, *keys: str) -> None:
        """Press ``keys`` on the page's body, as a person at the keyboard would."""
        from selenium.webdriver.common.action_chains import ActionChains

        self.run("document.activeElement && document.activeElement.blur()")
        chain = ActionChains(self.driver)
        for key in keys:
            chain = chain.send_keys(key)
        chain.perform()

    def screenshot(self, path: Path) -> None:
        """Save what the viewport shows as a PNG."""
        self.driver.save_screenshot(str(path))

    def close(self) -> None:
        """Stop the browser and its driver."""
        self.driver.quit()


def browser_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """A browser for a whole test module (use as a module-scoped fixture's body)."""
    reason = missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"no browser in CI: {reason}")
        pytest.skip(f"no browser: {reason}")
    profile = tmp_path_factory.mktemp("chromium-profile")
    browser = Browser(profile)
    try:
        yield browser
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
