"""``pushdown demo-unitycatalog``: the example applied to the stand-in, every user asking
the server as itself, a second plan empty, and clear errors on a bad spec."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pushdown.app.cli import main

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "demo.yaml"


def test_the_unitycatalog_demo_applies_the_example_and_the_second_plan_is_empty() -> None:
    out = CliRunner().invoke(main, ["demo-unitycatalog", str(EXAMPLE)])
    assert out.exit_code == 0, out.output
    assert "  alice: schema sales.crm, table sales.crm.customers, table sales.crm.orders\n" in out.stdout
    assert "  dave: schema sales.crm, table sales.crm.orders\n" in out.stdout
    assert "second plan: backend uc (scope: everything): nothing to do" in out.stdout


def test_a_bad_spec_is_a_clear_error(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("users: 5\n")
    out = CliRunner().invoke(main, ["demo-unitycatalog", str(spec)])
    assert out.exit_code == 1 and "problem(s) in the spec" in out.stderr
    assert "Traceback" not in out.output
