"""Rewrite (or, with --check, check) each backend's authorization-surface table in
docs/<kind>.md from the backend class's SURFACE (pushdown.reconcile.surface)."""

from __future__ import annotations

import sys
from pathlib import Path

from pushdown.host.plugins import Hooks
from pushdown.reconcile.surface import BEGIN, replace_in

ROOT = Path(__file__).resolve().parent.parent


def stale_docs(write: bool) -> list[str]:
    stale = []
    for kind, factory in Hooks.load().backends.factories().items():
        entries = getattr(factory, "SURFACE", ())
        doc = ROOT / "docs" / f"{kind}.md"
        if not entries or not doc.exists() or BEGIN not in doc.read_text():
            continue
        text = doc.read_text()
        new = replace_in(text, entries)
        if new != text:
            stale.append(str(doc.relative_to(ROOT)))
            if write:
                doc.write_text(new)
    return stale


if __name__ == "__main__":
    check = "--check" in sys.argv[1:]
    for name in stale_docs(write=not check):
        print(("stale: " if check else "rewrote: ") + name)
    sys.exit(1 if check and stale_docs(write=False) else 0)
