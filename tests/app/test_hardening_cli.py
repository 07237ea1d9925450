"""The guards on the command line: no silent wipe, no store by accident, a plan writes nothing."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.app.commands.output import plan_warnings, shown_plan
from pushdown.reconcile.plan import Op, Plan
from pushdown.reconcile.scope import Scope

ROOT = Path(__file__).resolve().parents[2]
STATE = "pushdown-demo-state.json"


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "examples" / "demo.yaml", tmp_path / "demo.yaml")
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def files(where: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(where.iterdir()) if p.is_file()}


@pytest.mark.parametrize("text", ["", "# nothing\n", "  \n \n", "~\n"])
def test_an_empty_spec_revokes_nothing_unless_asked(cwd: Path, text: str) -> None:
    assert run("apply", "--spec", "demo.yaml")[0] == 0
    (cwd / "empty.yaml").write_text(text)
    before = files(cwd)
    for command in ("plan", "apply"):
        code, out, err = run(command, "--spec", "empty.yaml")
        assert code == 1 and out == ""
        assert err.startswith("error: empty.yaml: the spec is empty") and "--allow-empty-spec" in err
        assert "Traceback" not in err
        assert files(cwd) == before
    code, out, err = run("apply", "--spec", "empty.yaml", "--allow-empty-spec")
    assert code == 1 and "removes 25 of the 25 managed grant(s)" in err and "--allow-mass-removal" in err
    assert (cwd / STATE).read_text().strip() != "[]"  # the guard held: nothing was revoked
    code, out, _ = run("apply", "--allow-mass-removal")
    assert code == 0 and "0 to add, 25 to remove" in out
    assert (cwd / STATE).read_text().strip() == "[]"


def test_plan_with_a_spec_records_nothing(cwd: Path) -> None:
    assert run("apply", "--spec", "demo.yaml")[0] == 0
    (cwd / "less.yaml").write_text((cwd / "demo.yaml").read_text().replace("orders_writer", "w2"))
    (cwd / "none.yaml").write_text("users: [solo]\n")
    before = files(cwd)
    code, out, _ = run("plan", "--spec", "less.yaml")
    assert code == 0 and "not recorded (apply records them in pushdown.db)" in out
    code, out, _ = run("plan", "--spec", "none.yaml")
    assert code == 2 and "0 to add, 25 to remove" in out
    assert files(cwd) == before  # the store byte for byte, the backend's state too
    code, out, _ = run("apply")  # what the plans only showed is not carried out
    assert code == 0 and "nothing to do" in out
    assert files(cwd)[STATE] == before[STATE]


def test_a_plan_on_a_fresh_directory_creates_no_store(cwd: Path) -> None:
    code, out, _ = run("plan", "--spec", "demo.yaml")
    assert code == 2 and "25 to add" in out
    assert sorted(files(cwd)) == ["demo.yaml"]
    for command in (["plan"], ["verify"], ["apply"], ["explain", "bob", "load_table", "sales.crm.orders"]):
        code, out, err = run(*command)
        assert code == 1 and "no store at" in err and "nothing is recorded" in err, command
    assert sorted(files(cwd)) == ["demo.yaml"]
    assert run("apply", "--spec", "demo.yaml")[0] == 0  # recording creates the default store
    assert (cwd / "pushdown.db").exists()


def test_a_store_named_in_the_config_is_never_created_implicitly(cwd: Path) -> None:
    assert run("apply", "--spec", "demo.yaml")[0] == 0
    (cwd / "pushdown.toml").write_text(
        'store = "pushdwn.db"\n[backends.demo]\nkind = "recording"\nstate = "pushdown-demo-state.json"\n'
    )
    before = files(cwd)
    for command in (["plan", "--spec", "demo.yaml"], ["apply", "--spec", "demo.yaml"], ["apply"], ["verify"]):
        code, out, err = run(*command)
        assert code == 1 and out == "", command
        assert f"pushdown.toml: store {cwd / 'pushdwn.db'} does not exist" in err
        assert "pushdown init" in err
    assert files(cwd) == before
    code, out, _ = run("init")
    assert code == 0 and out == "store pushdwn.db: created (an empty model)\n"
    assert run("init") == (0, "store pushdwn.db: already exists; nothing to do\n", "")
    code, out, _ = run("apply", "--spec", "demo.yaml")
    assert code == 0 and "30 model change(s) recorded in pushdwn.db" in out


def test_bad_config_exits_1_with_the_file_key_and_value_and_writes_nothing(cwd: Path) -> None:
    (cwd / "pushdown.toml").write_text('[backends.m]\nkind = "recording"\nport = "abc"\n')
    before = files(cwd)
    code, out, err = run("apply", "--spec", "demo.yaml")
    assert (code, out) == (1, "")
    assert err == 'error: pushdown.toml: backends.m.port = "abc": a port is a whole number from 1 to 65535\n'
    assert files(cwd) == before


@dataclass(frozen=True)
class Hostile:
    text: str

    def in_scope(self, scope: Scope) -> bool:
        return True

    def __str__(self) -> str:
        return self.text


def test_a_name_with_a_newline_cannot_fake_a_line_in_the_plan() -> None:
    plan = Plan(
        "b",
        Scope.everything(),
        (Op("add", Hostile("SELECT ON `db`.`t\n  - DROP ON *.*` TO 'u'")), Op("remove", Hostile("x\u202ey"))),
        ("note about `a\nb`",),
    )
    lines = shown_plan(plan).split("\n")
    assert lines == [
        "backend b (scope: everything): 1 to add, 1 to remove",
        "  note: note about `a\\nb`",
        "  + SELECT ON `db`.`t\\n  - DROP ON *.*` TO 'u'",
        "  - x\\u202ey",
    ]
    warnings = plan_warnings(plan)
    assert len(warnings) == 2 and "U+000A" in warnings[0] and "bidirectional" in warnings[1]


def test_look_alike_names_in_a_spec_are_warned_about(cwd: Path) -> None:
    (cwd / "odd.yaml").write_text('users: ["p\\u0430ypal", "paypal", "ad\\u200bmin"]\n')
    code, _, err = run("plan", "--spec", "odd.yaml")
    assert code == 0
    assert "warning: user pаypal holds letters from more than one script (CYRILLIC, LATIN)" in err
    assert "warning: user ad\\u200bmin holds a zero-width character (U+200B)" in err
