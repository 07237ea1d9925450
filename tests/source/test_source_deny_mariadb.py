"""N10 on a real MariaDB: pushdown serve plays the Gravitino (in this process, behind a
proxy that adds what a Gravitino can hold and pushdown serve cannot), a follower takes
its model and a full sync enforces it on MariaDB. A role that ALLOWs SELECT_TABLE on the
catalog and DENIEs SELECT_VIEW there must not let its holder read the database's view:
the DENY is enforced (as DENY SELECT_TABLE, wider) and never dropped; a DENY pushdown
cannot hold at all (EXECUTE_FUNCTION) keeps the read from being used."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gravitino import Catalog
from gravitino.api.authorization.privileges import SelectTable, UseCatalog, UseSchema
from gravitino.api.authorization.securable_objects import SecurableObjects

from pushdown.app.service import AccessControl
from pushdown.app.settings import from_mapping
from pushdown.app.source.follow import Follower

from ..rest.conftest import client
from ..rest.inprocess import site
from ..rest.test_client_mariadb import DB, TABLES, prepare_server
from .conftest import Rig, proxy
from .test_follow import _on, _served_with

pytestmark = pytest.mark.mariadb
PASSWORD_ENV = "PD_SOURCE_DENY_TEST_PASSWORD"
VIEW = "v"


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from pushdown_lab.mariadb import ServerUnavailable, throwaway_mariadb
    from pushdown_mysql.tests.world import PUSHDOWN_PASSWORD, setup_pushdown_account

    try:
        with throwaway_mariadb() as s:
            setup_pushdown_account(s)
            os.environ[PASSWORD_ENV] = PUSHDOWN_PASSWORD
            prepare_server(s)  # database rst, tables t0..t3, accounts pd_ann and pd_bob
            conn = s.connect()
            with conn.cursor() as cur:
                cur.execute(f"CREATE VIEW `{DB}`.`{VIEW}` AS SELECT * FROM `{DB}`.`t0`")
            conn.close()
            yield s
    except ServerUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no MariaDB in CI: {exc}")
        pytest.skip(f"no MariaDB here: {exc}")


def reads(server: Any, user: str, table: str) -> bool:
    import pymysql
    from pushdown_mysql.tests.world import PASSWORD, PREFIX

    conn = server.connect(PREFIX + user, PASSWORD)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM `{DB}`.`{table}`")
        return True
    except pymysql.err.OperationalError as exc:
        if exc.args[0] in (1142, 1044):
            return False
        raise
    finally:
        conn.close()


def _revoke_all(server: Any) -> None:
    """Each test starts from no grant to the users' accounts (the database is shared)."""
    conn = server.connect()
    with conn.cursor() as cur:
        for user in ("pd_ann", "pd_bob"):
            cur.execute("REVOKE ALL PRIVILEGES, GRANT OPTION FROM %s@%s", (user, "%"))
    conn.close()


@pytest.fixture
def rig(server: Any, tmp_path: Path) -> Iterator[Rig]:
    """The Gravitino (catalog c enforced by mysql1: schema rst and its tables; role viewer
    with USE_CATALOG, USE_SCHEMA and SELECT_TABLE on c, held by bob) and a follower."""
    _revoke_all(server)
    (tmp_path / "g").mkdir()
    with site(tmp_path / "g") as g, proxy(g.uri) as p:
        c = client(g.uri, "admin", "test")
        c.add_user("bob")
        c.create_catalog("c", Catalog.Type.RELATIONAL, "jdbc-mysql", "", {"pushdown.backend": "mysql1"})
        with httpx.Client(
            base_url=f"{g.uri}/api/metalakes/test/catalogs/c", auth=httpx.BasicAuth("admin", "x")
        ) as h:
            assert h.post("/schemas", json={"name": DB}).status_code == 200
            for t in TABLES:
                assert h.post(f"/schemas/{DB}/tables", json={"name": t}).status_code == 200
        cat = SecurableObjects.of_catalog("c", [UseCatalog.allow(), UseSchema.allow(), SelectTable.allow()])
        c.create_role("viewer", {}, [cat])
        c.grant_roles_to_user(["viewer"], "bob")
        raw = {
            "store": str(tmp_path / "follow.db"),
            "backends": {
                "mysql1": {
                    "kind": "mysql",
                    "host": server.host,
                    "port": server.port,
                    "user": "pushdown",
                    "password": {"env": PASSWORD_ENV},
                }
            },
            "source": {
                "kind": "gravitino",
                "uri": p.uri,
                "metalake": "test",
                "user": "admin",
                "catalog_property": "pushdown.backend",
            },
        }
        config = from_mapping(raw, tmp_path, "pushdown.toml", explicit_store=False)
        ac = AccessControl.open(config, push=False, create_store=True)
        try:
            yield Rig(g, p, config, ac, c)
        finally:
            ac.close()


def test_n10_a_deny_of_select_view_keeps_the_view_unread_on_mariadb(server: Any, rig: Rig) -> None:
    _served_with(rig, "viewer", [_on("CATALOG", "c", "select_view", "deny")])
    polled = Follower(rig.config).poll(rig.ac)
    assert polled.ok, polled.error
    [synced] = rig.ac.sync(full=True)
    assert synced.ok, synced.error
    assert not reads(server, "bob", VIEW), "the DENY of SELECT_VIEW was dropped: bob reads the view"
    assert not any(reads(server, "bob", t) for t in TABLES)  # enforced wider, as the note says
    assert any("select_view" in n and "wider" in n for n in polled.notes)


def test_without_the_deny_the_role_reads_the_catalog_on_mariadb(server: Any, rig: Rig) -> None:
    """The control: the same role without the DENY reads every table (and the view)."""
    assert Follower(rig.config).poll(rig.ac).ok
    [synced] = rig.ac.sync(full=True)
    assert synced.ok, synced.error
    assert all(reads(server, "bob", t) for t in TABLES)
    assert reads(server, "bob", VIEW)  # SELECT on the whole database: the view too


def test_a_deny_pushdown_cannot_hold_grants_nothing_on_mariadb(server: Any, rig: Rig) -> None:
    _served_with(rig, "viewer", [_on("CATALOG", "c", "execute_function", "deny")])
    polled = Follower(rig.config).poll(rig.ac)
    assert not polled.ok and polled.kind == "cannot be enforced exactly", polled
    rig.ac.sync(full=True)
    assert not reads(server, "bob", VIEW) and not any(reads(server, "bob", t) for t in TABLES)
