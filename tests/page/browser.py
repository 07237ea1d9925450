"""Debian's chromium, headless, driven by Selenium through Debian's chromedriver: both
named explicitly, so Selenium's manager never looks for (or downloads) a browser."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def available() -> str | None:
    """Why the browser cannot run here (None: it can)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is missing (apt-get install chromium chromium-driver; scripts/setup.sh does)"
    return None


def chromium(width: int = 1280, height: int = 900) -> webdriver.Chrome:
    os.environ.setdefault("SE_AVOID_STATS", "true")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium's manager may not fetch anything
    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
        "--disable-extensions",
        "--no-first-run",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(
        executable_path=str(CHROMEDRIVER) if CHROMEDRIVER.exists() else shutil.which("chromedriver")
    )
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    return driver


def sign_in(driver: webdriver.Chrome, uri: str, user: str) -> None:
    """The page's own sign-in form (simple authentication: a user name)."""
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{uri}/ui/login")
    driver.find_element(By.ID, "user").send_keys(user)
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    from selenium.webdriver.support.ui import WebDriverWait

    # signed in: the header names the caller
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "header .me"))
