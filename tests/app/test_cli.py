"""The command line: exit codes, the plan it prints, explain, plugins, secrets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "demo.yaml"


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLE, tmp_path / "demo.yaml")
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / "demo.yaml")
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_plan_apply_plan_verify(cwd: Path) -> None:
    code, out, _ = run("plan", "--spec", "demo.yaml")
    assert code == 2
    assert "backend demo (scope: everything): 25 to add, 0 to remove" in out
    assert "  + bob: load_table table sales.crm.orders" in out
    assert "bob: load_table table sales.crm.salaries" not in out  # denied by no_salaries
    assert not (cwd / "pushdown.db").exists()  # a plan records nothing, not even a new store
    code, out, _ = run("apply", "--spec", "demo.yaml")
    assert code == 0 and "applied 25 operation(s); read back: in sync" in out
    assert run("plan") == (0, "backend demo (scope: everything): nothing to do\n", "")
    code, out, _ = run("verify")
    assert code == 0 and "enforce exactly what the model decides" in out


def test_drift_in_the_backend_is_found_by_verify_and_repaired_by_apply(cwd: Path) -> None:
    run("apply", "--spec", "demo.yaml")
    state = cwd / "pushdown-demo-state.json"
    rows = json.loads(state.read_text())
    rows.remove(["alice", "load_table", "table sales.crm.orders"])  # someone revoked by hand
    rows.append(["alice", "load_table", "table sales.crm.salaries"])  # and granted by hand
    state.write_text(json.dumps(rows))
    code, out, _ = run("verify")
    assert code == 2 and "1 to add, 1 to remove" in out
    assert run("apply")[0] == 0
    assert run("verify")[0] == 0


def test_a_bad_spec_exits_1_and_writes_nothing(cwd: Path) -> None:
    run("apply", "--spec", "demo.yaml")
    db_before = (cwd / "pushdown.db").read_bytes()
    (cwd / "bad.yaml").write_text("users: [a]\nroles:\n  r:\n    to: [user b]\n")
    code, _, err = run("plan", "--spec", "bad.yaml")
    assert code == 1
    assert "error: bad.yaml:4:10: unknown user 'b'; add it first" in err
    assert "nothing was written" in err
    assert run("plan")[0] == 0  # the model is the one loaded before
    assert len((cwd / "pushdown.db").read_bytes()) == len(db_before)


def test_explain_allowed_denied_and_unknown(cwd: Path) -> None:
    run("apply", "--spec", "demo.yaml")
    code, out, _ = run("explain", "dave", "alter_table", "sales.crm.orders")
    assert code == 0
    assert out.startswith("dave alter_table table sales.crm.orders: ALLOWED")
    assert (
        "MODIFY_TABLE allowed: ALLOW on table sales.crm.orders by role orders_writer (held directly)" in out
    )
    code, out, _ = run("explain", "alice", "load_table", "sales.crm.salaries")
    assert code == 3
    assert "SELECT_TABLE denied: DENY on table sales.crm.salaries by role no_salaries" in out
    code, _, err = run("explain", "alice", "fly", "sales")
    assert code == 1 and "unknown operation 'fly'" in err
    code, out, _ = run("explain", "--list")
    assert code == 0 and "load_table" in out and "run_job" in out


def test_explain_from_a_spec_reads_nothing_from_the_store(cwd: Path) -> None:
    code, out, _ = run("explain", "--spec", "demo.yaml", "carol", "drop_table", "sales.crm.salaries")
    assert code == 0 and "carol owns catalog sales" in out
    assert not (cwd / "pushdown.db").exists()


def test_plugins_lists_the_builtin_backend(cwd: Path) -> None:
    code, out, _ = run("plugins")
    assert code == 0
    assert "recording  (from pushdown.host.recording)" in out
    assert "demo: kind=recording" in out


def test_a_password_in_the_config_file_is_refused_without_echoing_it(cwd: Path) -> None:
    (cwd / "pushdown.toml").write_text('[backends.db]\nkind = "recording"\npassword = "hunter2"\n')
    code, out, err = run("plan")
    assert code == 1
    assert "password must not be written in the file" in err
    assert "hunter2" not in out + err


def test_a_secret_from_the_environment_is_never_shown(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", "s3cr3t-value")
    (cwd / "pushdown.toml").write_text(
        '[backends.db]\nkind = "recording"\npassword = { env = "DB_PASSWORD" }\n'
    )
    code, out, err = run("plugins")
    assert code == 0 and "<from env>" in out
    assert "s3cr3t-value" not in out + err


def test_an_unknown_backend_kind_is_a_clear_error(cwd: Path) -> None:
    (cwd / "pushdown.toml").write_text('[backends.x]\nkind = "oracle"\n')
    code, _, err = run("plan")
    assert code == 1 and "backend x: unknown kind 'oracle'; installed kinds:" in err


def test_long_applies_show_progress(cwd: Path) -> None:
    tables = ", ".join(f"t{i}" for i in range(60))
    (cwd / "big.yaml").write_text(
        "users: [a, b]\ncatalogs:\n  c:\n    backend: demo\n    schemas:\n"
        f"      s:\n        tables: [{tables}]\n"
        "roles:\n  r:\n    grants:\n      - {on: catalog c, allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE]}\n"
        "    to: [user a, user b]\n"
    )
    code, out, err = run("apply", "--spec", "big.yaml")
    assert code == 0
    assert "applying to demo" in err
    assert "applied 124 operation(s)" in out


def test_readme_example_output_is_real(cwd: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- example-output -->")[1].split("```")[1]
    shown = block.split("\n", 1)[1]
    code, out, _ = run("plan", "--spec", "examples/demo.yaml")
    assert code == 2
    assert out == shown


def test_the_library_example_runs(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = (ROOT / "docs" / "library.md").read_text()
    code = doc.split("# Library")[1].split("```python")[1].split("```")[0]
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/library.md", "exec"), namespace)  # our own docs
    result = namespace["result"]
    assert result.lagging == {}  # type: ignore[attr-defined]
    assert capsys.readouterr().out.startswith("alice load_table table sales.crm.orders: ALLOWED")
    assert json.loads((cwd / "pushdown-demo-state.json").read_text())  # pushed to the demo backend


def test_a_catalog_naming_no_configured_backend_is_a_configuration_error(cwd: Path) -> None:
    (cwd / "pushdown.toml").write_text('[backends.demo]\nkind = "recording"\n')
    (cwd / "other.yaml").write_text(
        "users: [a]\ncatalogs:\n  lost:\n    backend: mysql9\n    schemas:\n      s:\n        tables: [t]\n"
        "  kept:\n    backend: demo\n"
        "roles:\n  r:\n    grants:\n"
        "      - {on: catalog lost, allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE]}\n"
        "    to: [user a]\n"
    )
    spec = ["--spec", "other.yaml"]
    for command in (["plan", *spec], ["apply", *spec], ["apply"], ["verify"]):
        code, _, err = run(*command)
        assert code == 1, command
        assert "catalog(s) lost name backend 'mysql9', which is not configured (configured: demo)" in err
    assert run("apply", "--pending")[0] == 1
    code, out, _ = run("explain", "a", "load_table", "lost.s.t")  # the model still allows it…
    assert code == 0 and "ALLOWED" in out  # …which is why enforcing it nowhere must be an error


def test_a_grant_on_an_object_nobody_registered_is_kept_and_warned_about(cwd: Path) -> None:
    """The model keeps a DENY on a table that is not registered (a table closed ahead of
    time), and the spec's author is told, since a typo looks the same."""
    text = (cwd / "demo.yaml").read_text().replace("table sales.crm.salaries", "table sales.crm.Salaries")
    (cwd / "typo.yaml").write_text(text)
    code, _, err = run("plan", "--spec", "typo.yaml")
    assert code == 2
    assert (
        "warning: role no_salaries: DENY SELECT_TABLE on table sales.crm.Salaries, which is not registered"
        in err
    )
    assert "DENY MODIFY_TABLE on table sales.crm.Salaries" in err
    assert "sales.crm.salaries" not in err  # the registered table is not named
    assert run("plan", "--spec", "demo.yaml")[2] == ""  # a spec naming only registered objects: no warning
