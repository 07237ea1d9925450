"""Saved plans: `plan --out`, then `apply FILE` applies exactly that plan or refuses it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.test_cli import cwd, run  # noqa: F401 - the fixture is used by name

STATE = "pushdown-demo-state.json"


def test_a_saved_plan_applies_exactly_once(cwd: Path) -> None:  # noqa: F811
    code, out, _ = run("plan", "--spec", "demo.yaml", "--out", "plan.json")
    assert code == 2 and "plan saved to plan.json" in out
    saved = json.loads((cwd / "plan.json").read_text())
    assert saved["format"] == "pushdown-plan/1" and saved["spec"] == "demo.yaml"
    assert len(saved["plans"][0]["ops"]) == 25
    code, out, _ = run("apply", "plan.json")
    assert code == 0 and "applied 25 operation(s); read back: in sync" in out
    code, _, err = run("apply", "plan.json")  # the model moved: the same file is stale now
    assert code == 1 and "stale" in err and "nothing was applied" in err


def test_a_plan_saved_before_the_spec_changed_is_refused(cwd: Path) -> None:  # noqa: F811
    assert run("plan", "--spec", "demo.yaml", "--out", "plan.json")[0] == 2
    spec = cwd / "demo.yaml"
    spec.write_text(spec.read_text().replace("orders_writer", "w2"))
    code, _, err = run("apply", "plan.json")
    assert code == 1 and "spec demo.yaml changed" in err
    assert not (cwd / STATE).exists()  # nothing applied


def test_a_plan_is_refused_when_the_server_moved(cwd: Path) -> None:  # noqa: F811
    assert run("apply", "--spec", "demo.yaml")[0] == 0
    (cwd / "demo.yaml").write_text((cwd / "demo.yaml").read_text().replace("orders_writer", "w2"))
    assert run("apply", "--spec", "demo.yaml")[0] == 0
    assert run("plan", "--out", "plan.json")[0] == 0  # nothing to do: an empty plan is saved
    state = cwd / STATE
    held = json.loads(state.read_text())
    state.write_text(json.dumps(held[1:]))  # somebody revokes a grant by hand
    code, _, err = run("apply", "plan.json")
    assert code == 1 and "stale for backend demo" in err
    assert json.loads(state.read_text()) == held[1:]  # nothing was applied


def test_a_plan_file_takes_no_other_selection(cwd: Path) -> None:  # noqa: F811
    assert run("plan", "--spec", "demo.yaml", "--out", "plan.json")[0] == 2
    code, _, err = run("apply", "plan.json", "--pending")
    assert code == 1 and "give no --spec, --backend or --pending" in err
    (cwd / "bad.json").write_text("{}")
    code, _, err = run("apply", "bad.json")
    assert code == 1 and "not a pushdown plan file" in err and "Traceback" not in err
