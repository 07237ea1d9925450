"""A backend's authorization surface: every field and principal form of its server's own
authorization model, and what pushdown does with each.

The measure of "never wider" is the server's schema, not the cases we thought of. Each
backend class lists its server's surface in ``Backend.SURFACE``: one
:class:`SurfaceEntry` per grant table, principal form, modifier, policy field or plugin
setting that can change a decision, each with its :class:`Treatment` and the tests that
prove it. ``tests/reconcile/test_surface.py`` fails on an entry with no treatment, no
test, or a test that does not exist; the docs' tables are rendered from the same data by
:func:`markdown` (``python scripts/surface_docs.py``), so they cannot drift.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class Treatment(enum.Enum):
    """What pushdown does with one entry of a server's authorization surface."""

    HANDLED = "handled exactly"  # read, compiled and written: the server decides as the model
    GOVERNED = "governed"  # pushdown revokes it where it reaches a managed principal or object
    REPORTED = "reported"  # a finding in plan/verify (drift, exit 2): pushdown may not remove it
    NARROWED = "narrowed"  # pushdown withdraws what it pushes so the result cannot be wider
    REFUSED = "refused"  # (a model source) a read carrying it is not used: the model stays as it was
    UNSEEN = "unseen: a documented limit"  # pushdown cannot read it with its privileges; the doc says so


@dataclass(frozen=True)
class SurfaceEntry:
    """One field or principal form of a backend's authorization model.

    ``key`` is stable (the adversary's draws and the docs name it); ``area`` groups
    entries (grant table, principal form, modifier, policy field, setting…); ``what`` is
    the server's own name for it; ``how`` says in one sentence what pushdown does;
    ``tests`` are pytest node ids (``path::test_name``, path from the repository root)
    of tests that fail if the treatment breaks.
    """

    key: str
    area: str
    what: str
    treatment: Treatment | tuple[Treatment, ...]
    how: str
    tests: tuple[str, ...] = ()

    def treatments(self) -> tuple[Treatment, ...]:
        t = self.treatment
        return t if isinstance(t, tuple) else (t,)


def problems(entries: Sequence[SurfaceEntry]) -> list[str]:
    """What is wrong with a surface table, one sentence each (empty when complete)."""
    out: list[str] = []
    seen: set[str] = set()
    for e in entries:
        if e.key in seen:
            out.append(f"{e.key}: listed twice")
        seen.add(e.key)
        if not e.treatments() or not all(isinstance(t, Treatment) for t in e.treatments()):
            out.append(f"{e.key}: no treatment")
        if not e.how.strip():
            out.append(f"{e.key}: says nothing of how it is treated")
        if not e.tests:
            out.append(f"{e.key}: no test says which treatment holds")
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(entries: Iterable[SurfaceEntry]) -> str:
    """The table published in the backend's doc (between ``<!-- surface -->`` markers)."""
    rows = [
        "| area | the server's field or form | treatment | what pushdown does | test |",
        "|---|---|---|---|---|",
    ]
    for e in entries:
        treatment = " + ".join(t.value for t in e.treatments())
        tests = ", ".join(f"`{t.rsplit('::', 1)[-1]}`" for t in e.tests)
        rows.append(f"| {_cell(e.area)} | {_cell(e.what)} | {treatment} | {_cell(e.how)} | {tests} |")
    return "\n".join(rows) + "\n"


BEGIN = "<!-- surface:begin (generated from the backend SURFACE by scripts/surface_docs.py) -->"
END = "<!-- surface:end -->"


def replace_in(doc: str, entries: Iterable[SurfaceEntry]) -> str:
    """``doc`` with the text between the surface markers replaced by the rendered table."""
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return doc[:start] + "\n" + markdown(entries) + doc[end:]

