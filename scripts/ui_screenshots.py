#!/usr/bin/env python3
"""Regenerate the screenshots in docs/ui/ (shown by docs/ui.md): the demo estate
(examples/demo.yaml on the recording backend, with one grant left unpushed so the read
back shows drift) served by the REST app with the page mounted, each view opened in
Debian's headless chromium through Selenium, signed in as the metalake's owner.

    python scripts/ui_screenshots.py            # writes docs/ui/*.png
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tests.page.browser import available, chromium, sign_in  # noqa: E402
from tests.page.site import demo_core, serve  # noqa: E402

OUT = ROOT / "docs" / "ui"
USERS, OBJECTS = "alice,bob,carol,dave", "table sales.crm.orders,table sales.crm.salaries"
VIEWS = {
    "object": "/ui/object?name=" + quote("table sales.crm.salaries"),
    "object-drift": "/ui/object?name=" + quote("table sales.crm.customers"),
    "principal": "/ui/principal?name=alice",
    "matrix": f"/ui/matrix?users={quote(USERS)}&objects={quote(OBJECTS)}",
    "backends": "/ui/backends?plan=1",
    "audit": "/ui/audit?principal=bob",
    "explain": "/ui/explain?user=alice&op=load_table&target=sales.crm.salaries",
}


def main() -> int:
    why = available()
    if why is not None:
        print(f"ui_screenshots: {why}", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pushdown-ui-") as tmp:
        ac = demo_core(Path(tmp))
        try:
            with serve(ac) as site:
                driver = chromium(1280, 820)
                try:
                    sign_in(driver, site.uri, "admin")
                    for name, path in VIEWS.items():
                        driver.get(site.uri + path)
                        if driver.find_elements(By.ID, "enforcement-box"):
                            WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "enforcement"))
                        driver.save_screenshot(str(OUT / f"{name}.png"))
                        print(f"docs/ui/{name}.png")
                finally:
                    driver.quit()
        finally:
            ac.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
