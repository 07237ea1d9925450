"""Every backend's authorization surface is accounted for: each entry has a treatment
and a test that exists, and the docs publish exactly the table the code holds."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pushdown.host.plugins import Hooks
from pushdown.reconcile.surface import BEGIN, END, SurfaceEntry, Treatment, markdown, problems

ROOT = Path(__file__).resolve().parents[2]
#: backends whose servers' surface must be listed in full (a new backend joins this list)
SURVEYED = ("mysql", "hive", "ranger", "unitycatalog")


def _surfaces() -> dict[str, tuple[SurfaceEntry, ...]]:
    return {k: getattr(f, "SURFACE", ()) for k, f in Hooks.load().backends.factories().items()}


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            names.add(node.name)
    return names


@pytest.mark.parametrize("kind", SURVEYED)
def test_every_surface_entry_has_a_treatment_and_a_test(kind: str) -> None:
    entries = _surfaces()[kind]
    assert entries, f"backend {kind} lists no authorization surface"
    assert problems(entries) == []
    missing = []
    for e in entries:
        for node in e.tests:
            path, _, name = node.partition("::")
            file = ROOT / path
            if not file.is_file() or name.split("[")[0] not in _test_names(file):
                missing.append(f"{e.key}: {node}")
    assert missing == [], "surface entries name tests that do not exist"


@pytest.mark.parametrize("kind", SURVEYED)
def test_the_docs_publish_the_surface_table(kind: str) -> None:
    doc = (ROOT / "docs" / f"{kind}.md").read_text()
    assert BEGIN in doc and END in doc, f"docs/{kind}.md has no surface table markers"
    published = doc[doc.index(BEGIN) + len(BEGIN) : doc.index(END)].strip()
    assert published == markdown(_surfaces()[kind]).strip(), "run: python scripts/surface_docs.py"


def test_problems_names_each_gap() -> None:
    bad = (
        SurfaceEntry("a", "grant table", "x", Treatment.HANDLED, "", ()),
        SurfaceEntry("a", "grant table", "y", (), "dropped", ("t::test_x",)),
    )
    found = problems(bad)
    assert "a: says nothing of how it is treated" in found
    assert "a: no test says which treatment holds" in found
    assert "a: listed twice" in found
    assert "a: no treatment" in found
