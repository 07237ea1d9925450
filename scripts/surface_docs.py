"""Rewrite (or, with --check, check) each backend's authorization-surface table in
docs/<kind>.md from the backend class's SURFACE (pushdown.reconcile.surface), and the
Gravitino source's in docs/gravitino.md (pushdown.app.source.surface)."""

from __future__ import annotations

import sys
from pathlib import Path

from pushdown.app.source.surface import SURFACE as SOURCE_SURFACE
from pushdown.host.plugins import Hooks
from pushdown.reconcile.surface import BEGIN, SurfaceEntry, replace_in

ROOT = Path(__file__).resolve().parent.parent


def _surfaces() -> dict[str, tuple[SurfaceEntry, ...]]:
    """Each backend's SURFACE, and the Gravitino source's (docs/gravitino.md)."""
    found = {k: getattr(f, "SURFACE", ()) for k, f in Hooks.load().backends.factories().items()}
    return {**found, "gravitino": SOURCE_SURFACE}


def stale_docs(write: bool) -> list[str]:
    stale = []
    for kind, entries in _surfaces().items():
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
