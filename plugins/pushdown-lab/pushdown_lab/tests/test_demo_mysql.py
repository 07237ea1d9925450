"""`pushdown demo`: the README's main job (docs/demo.md), against a real throwaway MariaDB."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.host.hookspecs import hookimpl
from pushdown.host.plugins import Hooks

ROOT = Path(__file__).resolve().parents[4]
pytestmark = pytest.mark.mariadb


def run_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "demo.yaml").write_text((ROOT / "examples" / "demo.yaml").read_text())
    result = CliRunner().invoke(main, ["demo", "examples/demo.yaml"], catch_exceptions=False)
    return result.exit_code, re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", result.output)


def test_demo_applies_the_example_and_shows_who_can_do_what(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = run_demo(tmp_path, monkeypatch)
    assert code == 0, out
    assert "backend demo: applied; read back: in sync" in out
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in out.splitlines() if line.startswith("  ")}
    # the DENY on salaries wins over the catalog-wide ALLOW for the analysts
    assert ("alice", "sales.crm.orders") in rows and ("alice", "sales.crm.salaries") not in rows
    assert rows[("bob", "sales.crm.customers")] == ["yes", "-", "-", "-", "-", "-", "-"]
    assert rows[("dave", "sales.crm.orders")] == ["yes", "yes", "yes", "yes", "yes", "-", "-"]
    # the catalog's owner; CREATE on `crm`.* is wider than create_table: not granted (a note)
    assert rows[("carol", "sales.crm.salaries")] == ["yes"] * 6 + ["-"]
    assert "note: user carol may create tables in sales.crm, but CREATE on `crm`.* would also" in out
    assert " ON *.* " not in out  # only the note mentions *.*, never a grant
    doc = (ROOT / "docs" / "demo.md").read_text()
    shown = doc.split("<!-- demo-output -->")[1].split("```")[1].split("\n", 1)[1]
    assert out == shown


class ExtraCommand:
    @hookimpl
    def pushdown_register_commands(self, cli: click.Group) -> None:
        @cli.command(name="hello")
        def hello() -> None:
            click.echo("hello from a plugin")


def test_plugins_add_commands() -> None:
    group = click.Group()
    Hooks.load(extra=[ExtraCommand()]).register_commands(group)
    assert {"hello", "demo"} <= set(group.commands)
    assert CliRunner().invoke(group, ["hello"]).output == "hello from a plugin\n"
