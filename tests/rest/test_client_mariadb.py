"""The proof: a change made through the official client reaches real MariaDB grants, read
back equal to the evaluator, with the workers inside ``pushdown serve`` woken by the change
itself (their journal poll is set to 5 minutes here, so nothing else could carry it)."""

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
from gravitino.api.metadata_object import MetadataObject
from gravitino.api.metadata_objects import MetadataObjects

from pushdown.decide.evaluator import Evaluator
from pushdown.journal.store import Store
from pushdown.model.state import Model

from .conftest import admin_client, auth_as, client, init_store, serving, wait_for

pytestmark = pytest.mark.mariadb

DB = "rst"
TABLES = ("t0", "t1", "t2", "t3")
USERS = ("ann", "bob")
PASSWORD_ENV = "PD_REST_TEST_PASSWORD"


DAEMON = '[daemon]\ninterval = "5m"\npoll = "5m"\nbackoff_min = "200ms"\nbackoff_max = "2s"\n'


def mysql_config(tmp_path: Path, server: Any, catalog: str = "c", more: str = "") -> Path:
    """A ``pushdown.toml`` in ``tmp_path``: store ``pd.db``, ``admin`` a service admin,
    backend ``mysql1`` on ``server`` enforcing ``catalog``; ``more`` appended."""
    config = tmp_path / "pushdown.toml"
    config.write_text(
        'store = "pd.db"\n[access]\nservice_admins = ["admin"]\n'
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{server.host}"\nport = {server.port}\n'
        f'user = "pushdown"\npassword = {{ env = "{PASSWORD_ENV}" }}\ncatalogs = ["{catalog}"]\n' + more
    )
    return config


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from pushdown_lab.mariadb import ServerUnavailable, throwaway_mariadb
    from pushdown_mysql.tests.world import PUSHDOWN_PASSWORD, setup_pushdown_account

    try:
        with throwaway_mariadb() as s:
            setup_pushdown_account(s)
            os.environ[PASSWORD_ENV] = PUSHDOWN_PASSWORD
            yield s
    except ServerUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no MariaDB in CI: {exc}")
        pytest.skip(f"no MariaDB here: {exc}")


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def prepare_server(server: Any) -> None:
    """The database, its tables and the users' accounts, made by hand as a DBA would."""
    from pushdown_mysql.account import least_privileges
    from pushdown_mysql.tests.world import PASSWORD, PREFIX, PUSHDOWN

    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {q(DB)}")
        for t in TABLES:
            cur.execute(f"CREATE TABLE {q(DB)}.{q(t)} (id INT)")
        for sql, args in least_privileges(PUSHDOWN, "%", [DB])[-1:]:
            cur.execute(sql, args)
        for u in USERS:
            cur.execute("CREATE USER %s@%s IDENTIFIED BY %s", (PREFIX + u, "%", PASSWORD))
        cur.execute("FLUSH PRIVILEGES")
    conn.close()


def server_selects(server: Any) -> set[tuple[str, str]]:
    """(account, table) pairs MariaDB's grant tables give SELECT on, table- or database-level."""
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT User, Table_name FROM mysql.tables_priv "
                "WHERE Db = %s AND FIND_IN_SET('Select', Table_priv)",
                (DB,),
            )
            pairs = {(str(u), str(t)) for u, t in cur.fetchall()}
            cur.execute("SELECT User FROM mysql.db WHERE Db = %s AND Select_priv = 'Y'", (DB,))
            whole = {(str(u), t) for (u,) in cur.fetchall() for t in TABLES}
    finally:
        conn.close()
    return {(u, t) for u, t in pairs | whole if u.startswith("pd_")}


def model_of(db: Path) -> Model:
    store = Store(db)
    try:
        return store.load()
    finally:
        store.close()


def model_selects(model: Model) -> set[tuple[str, str]]:
    ev = Evaluator(model)
    return {
        ("pd_" + u, obj.names[-1])
        for obj in model.objects
        if obj.type.value == "table"
        for u in model.users
        if u in USERS and ev.authorize(u, "load_table", obj, explain=False).allowed
    }


def enforced(server: Any, db: Path, want: set[tuple[str, str]]) -> bool:
    """MariaDB holds exactly what the evaluator decides, and that is ``want``."""
    model = model_selects(model_of(db))
    return model == want and server_selects(server) == model


def test_a_change_through_the_official_client_reaches_mariadb_grants(server: Any, tmp_path: Path) -> None:
    prepare_server(server)
    config = mysql_config(tmp_path, server, "c", more=DAEMON)
    init_store(config)
    db = tmp_path / "pd.db"
    with serving(config, tmp_path / "serve.log") as serve:
        uri = serve.ready()
        admin_client(uri, "admin").create_metalake("test", "the MariaDB lab", {})
        c = client(uri, "admin")
        for u in USERS:
            c.add_user(u)
        c.create_catalog("c", Catalog.Type.RELATIONAL, "jdbc-mysql", "MariaDB", {})
        with httpx.Client(base_url=f"{uri}/api/metalakes/test/catalogs/c", headers=_basic("admin")) as h:
            assert h.post("/schemas", json={"name": DB}).status_code == 200
            for t in TABLES:
                assert (
                    h.post(f"/schemas/{DB}/tables", json={"name": t, "columns": [{"name": "id"}]}).status_code
                    == 200
                )
        catalog = SecurableObjects.of_catalog("c", [UseCatalog.allow(), UseSchema.allow()])
        c.create_role(
            "reader",
            {},
            [
                catalog,
                SecurableObjects.of_schema(catalog, DB, [SelectTable.allow()]),
                SecurableObjects.of_table(
                    SecurableObjects.of_schema(catalog, DB, []), "t3", [SelectTable.deny()]
                ),
            ],
        )
        assert server_selects(server) == set()
        c.grant_roles_to_user(["reader"], "ann")
        granted = {("pd_ann", t) for t in ("t0", "t1", "t2")}
        wait_for(lambda: enforced(server, db, granted), 60, "the grant reaches MariaDB")

        from pushdown_mysql.tests.world import World

        world = World(server)
        world.model, world.databases = model_of(db), {DB}
        probe = world.probe()  # log in as each user: the server does what the evaluator says
        assert probe.mismatches == [] and probe.checks > 0

        schema = MetadataObjects.of(["c", DB], MetadataObject.Type.SCHEMA)
        c.revoke_privileges_from_role("reader", schema, [SelectTable.allow()])
        c.grant_privileges_to_role(
            "reader", MetadataObjects.of(["c", DB, "t1"], MetadataObject.Type.TABLE), [SelectTable.allow()]
        )
        wait_for(lambda: enforced(server, db, {("pd_ann", "t1")}), 60, "the narrowing reaches MariaDB")
        c.grant_roles_to_user(["reader"], "bob")
        c.revoke_roles_from_user(["reader"], "ann")
        wait_for(lambda: enforced(server, db, {("pd_bob", "t1")}), 60, "the swap reaches MariaDB")
        assert serve.stop() == 0


def _basic(user: str) -> dict[str, str]:
    token = auth_as(user).get_token_data().decode()
    return {"Authorization": token}


def test_e1_a_creator_naming_the_backend_gets_no_grant_on_mariadb(server: Any, tmp_path: Path) -> None:
    """Issue 24, E1 on the real server: a CREATE_CATALOG holder registers a catalog naming
    the configured backend; refused (400), and MariaDB gives him nothing while ann keeps
    the payroll table the model gives her."""
    from pushdown_mysql.account import least_privileges
    from pushdown_mysql.tests.world import PASSWORD, PREFIX, PUSHDOWN

    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE pay")
        cur.execute("CREATE TABLE pay.salaries (id INT)")
        for sql, args in least_privileges(PUSHDOWN, "%", [DB, "pay"])[-1:]:
            cur.execute(sql, args)
        for u in ("ann", "mallory"):
            cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (PREFIX + u, "%", PASSWORD))
        cur.execute("FLUSH PRIVILEGES")
    conn.close()

    def selects() -> set[tuple[str, str]]:
        conn = server.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(
                    "SELECT User, Db, Table_name FROM mysql.tables_priv "
                    "WHERE FIND_IN_SET('Select', Table_priv)"
                )
                rows = {(str(u), f"{d}.{t}") for u, d, t in cur.fetchall()}
                cur.execute("SELECT User, Db FROM mysql.db WHERE Select_priv = 'Y'")
                rows |= {(str(u), f"{d}.*") for u, d in cur.fetchall()}
        finally:
            conn.close()
        return {r for r in rows if r[0].startswith(PREFIX)}

    ann_reads = {("pd_ann", "pay.salaries"), ("pd_ann", "pay.*")}  # table- or database-level
    config = mysql_config(tmp_path, server, "payroll", more=DAEMON)
    init_store(config)
    with serving(config, tmp_path / "serve.log") as serve:
        uri = serve.ready()
        admin_client(uri, "admin").create_metalake("test", "E1", {})
        with httpx.Client(base_url=f"{uri}/api/metalakes/test", headers=_basic("admin")) as h:
            for u in ("ann", "mallory"):
                assert h.post("/users", json={"name": u}).status_code == 200
            cat = {"name": "payroll", "type": "relational", "provider": "jdbc-mysql", "properties": {}}
            assert h.post("/catalogs", json=cat).status_code == 200
            assert h.post("/catalogs/payroll/schemas", json={"name": "pay"}).status_code == 200
            table = {"name": "salaries", "columns": [{"name": "id"}]}
            assert h.post("/catalogs/payroll/schemas/pay/tables", json=table).status_code == 200
            for role, objects, user in (
                (
                    "readers",
                    [
                        {
                            "fullName": "payroll",
                            "type": "catalog",
                            "privileges": [
                                {"name": "use_catalog", "condition": "allow"},
                                {"name": "use_schema", "condition": "allow"},
                                {"name": "select_table", "condition": "allow"},
                            ],
                        }
                    ],
                    "ann",
                ),
                (
                    "creators",
                    [
                        {
                            "fullName": "test",
                            "type": "metalake",
                            "privileges": [{"name": "create_catalog", "condition": "allow"}],
                        }
                    ],
                    "mallory",
                ),
            ):
                assert h.post("/roles", json={"name": role, "securableObjects": objects}).status_code == 200
                assert (
                    h.put(f"/permissions/users/{user}/grant", json={"roleNames": [role]}).status_code == 200
                )
        wait_for(lambda: bool(ann_reads & selects()), 60, "ann's grant reaches MariaDB")
        with httpx.Client(base_url=f"{uri}/api/metalakes/test", headers=_basic("mallory")) as h:
            bound = {
                "name": "mine",
                "type": "relational",
                "provider": "jdbc-mysql",
                "properties": {"backend": "mysql1"},
            }
            r = h.post("/catalogs", json=bound)
            assert r.status_code == 400 and "configuration" in r.json()["message"], r.text
            assert (
                h.post("/catalogs", json={**bound, "properties": {}}).status_code == 200
            )  # bound to nothing
        with httpx.Client(base_url=f"{uri}/api/metalakes/test", headers=_basic("admin")) as h:
            assert (
                h.post("/users", json={"name": "zed"}).status_code == 200
            )  # one more change wakes the workers
        wait_for(lambda: bool(ann_reads & selects()), 60, "ann keeps hers")
        assert not {r for r in selects() if r[0] == "pd_mallory"}
        assert serve.stop() == 0
