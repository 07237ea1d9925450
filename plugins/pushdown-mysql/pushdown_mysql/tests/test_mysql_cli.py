"""The CLI and the library hook against the real server: config, secrets, drift, catch-up."""

from __future__ import annotations

from pathlib import Path

import pymysql
import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.app.service import AccessControl
from pushdown.app.service.spec import load_spec_text
from pushdown.journal.store import Store
from pushdown.reconcile.backend import BackendContext
from pushdown_mysql.backend import MySQLBackend

from .world import PUSHDOWN, PUSHDOWN_PASSWORD, World, admin, held

pytestmark = pytest.mark.mariadb

SPEC = """
users: [ann, bob]
catalogs:
  c:
    backend: mysql1
    schemas:
      crm:
        tables: [orders, secret]
roles:
  reader:
    grants:
      - {on: catalog c, allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE]}
      - {on: table c.crm.secret, deny: [SELECT_TABLE]}
    to: [user ann, user bob]
"""


@pytest.fixture
def world(world: World) -> World:
    for user in ("ann", "bob"):
        world.user(user)
    world.schema("crm")
    world.table("crm", "orders")
    world.table("crm", "secret")
    return world


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_plan_apply_verify_through_a_config_file(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PD_TEST_MYSQL_PASSWORD", PUSHDOWN_PASSWORD)
    (tmp_path / "pushdown.toml").write_text(
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{world.server.host}"\nport = {world.server.port}\n'
        f'user = "{PUSHDOWN}"\npassword = {{ env = "PD_TEST_MYSQL_PASSWORD" }}\n'
    )
    (tmp_path / "spec.yaml").write_text(SPEC)
    code, out, err = run("plan", "--spec", "spec.yaml")
    assert code == 2, err
    assert "+ SELECT ON `crm`.`orders` TO 'pd_ann'@'%'" in out
    assert "`secret`" not in out  # the DENY wins
    assert PUSHDOWN_PASSWORD not in out + err
    assert run("apply", "--spec", "spec.yaml")[0] == 0  # a plan records nothing; apply does
    assert run("verify")[0] == 0
    with admin(world.server) as cur:  # drift: somebody grants by hand on a managed account
        cur.execute("GRANT SELECT ON `crm`.`secret` TO 'pd_bob'@'%'")
    code, out, _ = run("verify")
    assert code == 2 and "- SELECT ON `crm`.`secret` TO 'pd_bob'@'%'" in out
    assert run("apply")[0] == 0
    assert run("verify")[0] == 0
    world.model = load_spec_text(SPEC)  # log in as each user: the server does what the spec says
    probe = world.probe()
    assert probe.mismatches == [] and probe.checks > 0


def test_a_server_that_is_down_lags_and_catches_up_from_the_journal(world: World) -> None:
    def backend(port: int) -> MySQLBackend:
        settings = {"host": world.server.host, "port": port, "user": PUSHDOWN, "connect_timeout": 1}
        return MySQLBackend(BackendContext("mysql1", settings, secret=lambda key: PUSHDOWN_PASSWORD))

    down = backend(1)  # nothing listens on port 1
    ac = AccessControl(Store(), {"mysql1": down})
    ac.load_model(world.model)
    ac.create_role("reader")
    ac.grant_privileges("reader", "catalog c", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
    result = ac.grant_role("reader", "user ann")
    assert "lost the connection" in result.lagging["mysql1"]
    assert "reader" in ac.model.user_roles["ann"]  # committed all the same
    assert ac.store.cursor("mysql1") == 0
    ac.backends["mysql1"] = backend(world.server.port)  # the server is back
    [synced] = ac.sync()
    assert synced.ok and synced.applied
    assert ac.store.cursor("mysql1") == ac.store.last_seq()
    world.model = ac.model
    probe = world.probe()
    assert probe.mismatches == [] and probe.checks > 0
    ac.close()
    down.close()


@pytest.mark.parametrize("how", ["drop", "another backend"])
def test_a_catalog_that_leaves_the_backend_takes_its_grants_with_it(world: World, how: str) -> None:
    settings = {"host": world.server.host, "port": world.server.port, "user": PUSHDOWN}
    backend = MySQLBackend(BackendContext("mysql1", settings, secret=lambda key: PUSHDOWN_PASSWORD))
    ac = AccessControl(Store(), {"mysql1": backend})
    ac.load_model(world.model)
    ac.create_role("reader")
    ac.grant_privileges("reader", "metalake", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
    assert ac.grant_role("reader", "user ann").lagging == {}
    assert any("pd_ann" in str(g) for g in held(backend))
    if how == "drop":
        result = ac.drop_object("catalog c")
    else:
        target = load_spec_text(SPEC.replace("backend: mysql1", "backend: elsewhere"))
        target.roles["reader"] = set(ac.model.roles["reader"])
        target.user_roles["ann"] = {"reader"}
        result = ac.load_model(target)
    if how == "drop":
        assert result.lagging == {}
    else:  # a catalog that names no configured backend is an error, not silence
        assert set(result.lagging) == {"elsewhere"} and "not configured" in result.lagging["elsewhere"]
    [synced] = [r for r in result.synced if r.backend == "mysql1"]
    assert synced.plan is not None and not synced.plan.scope.full  # a scoped sync, not a full one
    assert held(backend) == set()  # the metalake grant no longer reaches this server
    ac.close()


BYPASSES = [
    "GRANT SELECT (`id`) ON `crm`.`secret` TO 'pd_bob'@'%'",  # a column grant: pushdown revokes it
    "GRANT SELECT ON `crm`.`secret` TO PUBLIC",
    "CREATE USER 'pd_ann'@'localhost' IDENTIFIED BY 'other'",
    "GRANT SELECT ON `c%`.* TO 'pd_bob'@'%'",
    "GRANT INSERT ON *.* TO 'pd_bob'@'%'",
    "CREATE ROLE `hand made`",
    "GRANT `hand made` TO 'pd_ann'@'%'",
]


def undo(world: World) -> None:
    """Every statement of ``UNDO``, each on its own: one that fails (the test stopped before
    its bypass was made) must not leave the rest behind for later tests."""
    with admin(world.server) as cur:
        for sql in UNDO:
            try:
                cur.execute(sql)
            except pymysql.Error:
                pass


UNDO = [
    "REVOKE SELECT ON `crm`.`secret` FROM PUBLIC",
    "DROP USER IF EXISTS 'pd_ann'@'localhost'",
    "REVOKE SELECT ON `c%`.* FROM 'pd_bob'@'%'",
    "REVOKE INSERT ON *.* FROM 'pd_bob'@'%'",
    "DROP ROLE IF EXISTS `hand made`",
]


def test_access_paths_that_bypass_the_model_are_drift_named_in_verify(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PD_TEST_MYSQL_PASSWORD", PUSHDOWN_PASSWORD)
    (tmp_path / "pushdown.toml").write_text(
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{world.server.host}"\nport = {world.server.port}\n'
        f'user = "{PUSHDOWN}"\npassword = {{ env = "PD_TEST_MYSQL_PASSWORD" }}\n'
    )
    (tmp_path / "spec.yaml").write_text(SPEC)
    assert run("apply", "--spec", "spec.yaml")[0] == 0
    assert run("verify")[0] == 0
    try:
        with admin(world.server) as cur:
            for sql in BYPASSES:
                cur.execute(sql)
        code, out, err = run("verify")
        assert code == 2, err
        assert "- SELECT (`id`) ON `crm`.`secret` TO 'pd_bob'@'%'" in out
        assert "- SELECT ON `crm`.`secret` TO PUBLIC" in out  # pushdown governs crm: it revokes it
        assert "finding: 'pd_ann'@'localhost' shadows the managed account 'pd_ann'@'%'" in out
        assert (
            "finding: 'pd_bob'@'%' holds SELECT on `c%`.* (a wildcard grant: it reaches every database "
            "whose name matches, whatever the model decides); pushdown's account 'pushdown'@'%' may not "
            "revoke it (it would need SELECT, GRANT OPTION on `c%`.*); revoke it by hand: "
            "REVOKE SELECT ON `c%`.* FROM 'pd_bob'@'%'"
        ) in out
        assert "finding: 'pd_bob'@'%' holds INSERT on *.* (a global grant" in out
        assert "REVOKE INSERT ON *.* FROM 'pd_bob'@'%'" in out
        assert "finding: 'pd_ann'@'%' holds role `hand made`" in out
        assert "REVOKE `hand made` FROM 'pd_ann'@'%'" in out
        assert "1045" not in out + err and "1698" not in out + err
        code, out, err = run("apply")  # revokes what it may, reports the rest (exit 2), fails nothing
        assert code == 2, err
        assert "4 finding(s) above remain for a person to act on" in out
        assert "- SELECT (`id`) ON `crm`.`secret` TO 'pd_bob'@'%'" in out and "finding: " in out
        code, out, _ = run("verify")
        assert code == 2 and "(scope: everything): nothing to do; 4 finding(s) to act on" in out
    finally:
        undo(world)
    assert run("verify")[0] == 0
    world.model = load_spec_text(SPEC)
    probe = world.probe()
    assert probe.mismatches == [] and probe.checks > 0


def test_a_table_created_by_hand_reaches_its_users_at_apply_pending(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PD_TEST_MYSQL_PASSWORD", PUSHDOWN_PASSWORD)
    (tmp_path / "pushdown.toml").write_text(
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{world.server.host}"\nport = {world.server.port}\n'
        f'user = "{PUSHDOWN}"\npassword = {{ env = "PD_TEST_MYSQL_PASSWORD" }}\n'
    )
    (tmp_path / "spec.yaml").write_text(SPEC)
    assert run("apply", "--spec", "spec.yaml")[0] == 0  # the DENY on secret forces table-level grants
    with admin(world.server) as cur:
        cur.execute("CREATE TABLE `crm`.`later` (id INT)")
    code, out, err = run("plan", "--pending")
    assert code == 2, err
    assert "(scope: schema c.crm): 2 to add" in out
    code, out, err = run("apply", "--pending")
    assert code == 0, err
    assert "+ SELECT ON `crm`.`later` TO 'pd_ann'@'%'" in out
    assert "+ SELECT ON `crm`.`later` TO 'pd_bob'@'%'" in out
    assert run("apply", "--pending")[1] == "backend mysql1: nothing to do\n"  # the summary was kept
    assert run("verify")[0] == 0
    world.model = load_spec_text(SPEC)
    probe = world.probe()
    assert probe.mismatches == [] and probe.checks > 0


def test_the_library_hook_discovers_a_new_table_with_one_small_query(world: World) -> None:
    backend = MySQLBackend(
        BackendContext(
            "mysql1",
            {"host": world.server.host, "port": world.server.port, "user": PUSHDOWN},
            secret=lambda key: PUSHDOWN_PASSWORD,
        )
    )
    ac = AccessControl(Store(), {"mysql1": backend})
    assert ac.load_model(load_spec_text(SPEC)).lagging == {}  # applied, and the summary kept
    q0 = backend.connection.queries
    [idle] = ac.sync()
    assert idle.plan is None and backend.connection.queries - q0 == 1  # the summary, nothing else
    with admin(world.server) as cur:
        cur.execute("CREATE TABLE `crm`.`later` (id INT)")
    q0 = backend.connection.queries
    [synced] = ac.sync()
    assert synced.ok and synced.applied and synced.plan is not None
    assert synced.plan.scope.describe() == "schema c.crm"
    assert {str(op) for op in synced.plan.ops} == {
        "+ SELECT ON `crm`.`later` TO 'pd_ann'@'%'",
        "+ SELECT ON `crm`.`later` TO 'pd_bob'@'%'",
    }
    assert backend.connection.queries - q0 <= 1 + 7 + 7  # summary, one narrowed read, one read back
    world.model = ac.model
    probe = world.probe()
    assert probe.mismatches == [] and probe.checks > 0
    ac.close()
