"""`pushdown demo-hive`: the README's main job also applies the example to a throwaway
Hive Metastore and shows who can do what there, read back with get_privilege_set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main

ROOT = Path(__file__).resolve().parents[4]
pytestmark = pytest.mark.hive


def test_demo_hive_applies_the_example_and_shows_who_can_do_what(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "demo.yaml").write_text((ROOT / "examples" / "demo.yaml").read_text())
    result = CliRunner().invoke(main, ["demo-hive", "examples/demo.yaml"], catch_exceptions=False)
    out = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", result.output)
    assert result.exit_code == 0, out
    assert "backend demo: applied; read back: in sync" in out
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in out.splitlines() if line.startswith("  ")}
    # the DENY on salaries wins over the catalog-wide ALLOW for the analysts
    assert ("alice", "sales.crm.orders") in rows and ("alice", "sales.crm.salaries") not in rows
    assert rows[("bob", "sales.crm.customers")] == ["yes", "-", "-", "-", "-", "-"]
    assert rows[("dave", "sales.crm.orders")] == ["yes", "yes", "yes", "yes", "-", "-"]
    assert rows[("carol", "sales.crm.salaries")] == ["yes"] * 6  # the catalog's owner: ALL, and CREATE
    doc = (ROOT / "docs" / "demo.md").read_text()
    shown = doc.split("<!-- demo-hive-output -->")[1].split("```")[1].split("\n", 1)[1]
    assert out == shown


def test_a_bad_spec_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("catalogs: [1, 2\n")
    result = CliRunner().invoke(main, ["demo-hive", str(spec)], catch_exceptions=False)
    assert result.exit_code == 1 and "not valid YAML" in result.output
