"""``pushdown plan --spec`` refuses what ``pushdown apply --spec`` refuses: the binding
check (``pushdown.reconcile.bindings``) runs on the spec's changes in both, with the same
exit code and the same message, and the plan writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main

CONFIG = """\
[backends.rec]
kind = "recording"
catalogs = ["sales"]
"""

#: catalog "other" names backend rec, whose configuration names only "sales"
SPEC = """\
metalake: demo
users: [carol]
catalogs:
  sales:
    owner: carol
  other:
    backend: rec
    owner: carol
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pushdown.toml").write_text(CONFIG)
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def test_plan_reports_the_binding_refusal_apply_reports(cwd: Path) -> None:
    plan_code, plan_out, plan_err = run("plan", "--spec", "spec.yaml")
    assert not (cwd / "pushdown.db").exists()  # a plan records nothing
    apply_code, _, apply_err = run("apply", "--spec", "spec.yaml")
    refusal = "backend rec enforces exactly the catalogs its configuration names"
    assert apply_code == 1 and refusal in apply_err
    assert plan_code == 1, plan_out
    assert refusal in plan_err
    assert [line for line in plan_err.splitlines() if line.startswith("error:")] == [
        line for line in apply_err.splitlines() if line.startswith("error:")
    ]


def test_a_spec_the_bindings_allow_plans_as_before(cwd: Path) -> None:
    (cwd / "spec.yaml").write_text(SPEC.split("  other:")[0])
    code, out, _ = run("plan", "--spec", "spec.yaml")
    assert code in (0, 2), out
    assert run("apply", "--spec", "spec.yaml")[0] == 0
