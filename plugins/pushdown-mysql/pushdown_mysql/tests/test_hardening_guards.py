"""The destructive-mistake guards against a real server: an empty spec, a store typo and a
plan revoke nothing; only an explicit --allow-empty-spec does."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main

from .world import PUSHDOWN, PUSHDOWN_PASSWORD, World, admin

pytestmark = pytest.mark.mariadb

SPEC = """
users: [ann, bob]
catalogs:
  c:
    backend: mysql1
    schemas:
      crm:
        tables: [orders, leads]
roles:
  reader:
    grants:
      - {on: catalog c, allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE]}
    to: [user ann, user bob]
"""


@pytest.fixture
def site(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for user in ("ann", "bob"):
        world.user(user)
    world.schema("crm")
    world.table("crm", "orders")
    world.table("crm", "leads")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PD_TEST_MYSQL_PASSWORD", PUSHDOWN_PASSWORD)
    (tmp_path / "backend.toml").write_text(
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{world.server.host}"\nport = {world.server.port}\n'
        f'user = "{PUSHDOWN}"\npassword = {{ env = "PD_TEST_MYSQL_PASSWORD" }}\n'
    )
    (tmp_path / "pushdown.toml").write_text(
        'store = "pushdown.db"\n' + (tmp_path / "backend.toml").read_text()
    )
    (tmp_path / "spec.yaml").write_text(SPEC)
    assert run("init")[0] == 0
    code, _, err = run("apply", "--spec", "spec.yaml")
    assert code == 0, err
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def managed_grants(world: World) -> list[tuple[str, ...]]:
    with admin(world.server) as cur:
        cur.execute("SELECT User, Db, '' FROM mysql.db WHERE User LIKE 'pd\\_%'")
        rows = list(cur.fetchall())
        cur.execute("SELECT User, Db, Table_name FROM mysql.tables_priv WHERE User LIKE 'pd\\_%'")
        return sorted(rows + list(cur.fetchall()))


@pytest.mark.parametrize("text", ["", "# all commented out\n", "\n   \n", "~\n", "{}\n"])
def test_an_empty_spec_revokes_nothing(site: Path, world: World, text: str) -> None:
    before, store = managed_grants(world), (site / "pushdown.db").read_bytes()
    assert len(before) == 2  # SELECT on `crm`.* for two accounts (database-level: exact)
    (site / "empty.yaml").write_text(text)
    code, out, err = run("apply", "--spec", "empty.yaml")
    assert code == 1 and "error: empty.yaml: the spec is empty" in err and out == ""
    assert managed_grants(world) == before
    assert (site / "pushdown.db").read_bytes() == store


def test_a_store_typo_revokes_nothing(site: Path, world: World) -> None:
    before = managed_grants(world)
    (site / "pushdown.toml").write_text('store = "pushdwn.db"\n' + (site / "backend.toml").read_text())
    for command in (["apply"], ["apply", "--spec", "spec.yaml"], ["plan"], ["verify"]):
        code, _, err = run(*command)
        assert code == 1 and "pushdwn.db does not exist" in err and "pushdown init" in err
    assert not (site / "pushdwn.db").exists()
    assert managed_grants(world) == before


def test_a_plan_changes_neither_the_store_nor_the_server(site: Path, world: World) -> None:
    before, store = managed_grants(world), (site / "pushdown.db").read_bytes()
    (site / "less.yaml").write_text(SPEC.replace("to: [user ann, user bob]", "to: [user ann]"))
    code, out, _ = run("plan", "--spec", "less.yaml")
    assert code == 2 and "0 to add, 1 to remove" in out and "'pd_bob'" in out
    assert (site / "pushdown.db").read_bytes() == store
    code, out, _ = run("apply")  # the plan was not recorded: apply has nothing to do
    assert code == 0 and "nothing to do" in out
    assert managed_grants(world) == before


def test_an_explicitly_allowed_empty_spec_revokes_everything_managed(site: Path, world: World) -> None:
    (site / "empty.yaml").write_text("# nobody\n")
    code, out, err = run("apply", "--spec", "empty.yaml", "--allow-empty-spec")
    assert code == 0, err
    assert "0 to add, 2 to remove" in out
    assert managed_grants(world) == []
