"""Rewrite (or, with --check, check) docs/dialects.md and docs/hive.md's legacy-metastore
table from the dialects' data (pushdown.dialects)."""

from __future__ import annotations

import sys
from pathlib import Path

from pushdown.dialects.tables import document, replace_hive_table

ROOT = Path(__file__).resolve().parent.parent


def stale_docs(write: bool) -> list[str]:
    stale = []
    wanted = {
        ROOT / "docs" / "dialects.md": lambda old: document(),
        ROOT / "docs" / "hive.md": replace_hive_table,
    }
    for path, render in wanted.items():
        old = path.read_text() if path.exists() else ""
        new = render(old)
        if new != old:
            stale.append(str(path.relative_to(ROOT)))
            if write:
                path.write_text(new)
    return stale


if __name__ == "__main__":
    check = "--check" in sys.argv[1:]
    for name in stale_docs(write=not check):
        print(("stale: " if check else "rewrote ") + name)
