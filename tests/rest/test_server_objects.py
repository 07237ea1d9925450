"""A caller's registration never claims what a server holds already: a database or table on
the bound backend's server that nobody registered is refused to a caller who would become
its owner (409 over REST, :class:`ExistsOnServer` in the library), so the backend never
grants him an owner's rights on data that existed before. The metalake's owner, a service
admin and the administrator's entry points (a spec, the CLI) register it as before. Against
the lab's real MariaDB and Hive Metastore."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pushdown.app.service import AccessControl
from pushdown.errors import BindingRefused, ExistsOnServer
from pushdown.model.principals import Principal
from pushdown.model.privileges import Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.securables import SecurableType as T
from pushdown.model.state import Model

from .asgi import Door
from .test_client_mariadb import (
    DB,
    mysql_config,
    prepare_server,
    q,
    server,  # noqa: F401 - the module's throwaway MariaDB
)

PAYROLL = "payroll"
CATALOG = ObjectRef(T.CATALOG, ("c",))
BASE = "/api/metalakes/test/catalogs/c"


def _estate(door: Door) -> None:
    """admin: the metalake's owner, with catalog c and schema c.rst registered; bob: may
    create schemas in c and tables in c.rst (a role), owns nothing."""
    assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
    ac = door.ac.acting("admin")
    ac.add_user("bob")
    ac.create_object(CATALOG)
    ac.create_object(ObjectRef(T.SCHEMA, ("c", DB)))
    ac.create_role("maker")
    ac.grant_privileges("maker", CATALOG, [Privilege.USE_CATALOG, Privilege.USE_SCHEMA])
    ac.grant_privileges("maker", CATALOG, [Privilege.CREATE_SCHEMA, Privilege.CREATE_TABLE])
    ac.grant_role("maker", Principal.user("bob"))


# -- MariaDB ------------------------------------------------------------------------------


@pytest.fixture
def mariadb_door(server: Any, tmp_path: Path) -> Iterator[Door]:  # noqa: F811
    from pushdown_mysql.account import govern_database
    from pushdown_mysql.tests.world import PUSHDOWN

    prepare_server(server)
    conn = server.connect()
    with conn.cursor() as cur:  # a database with data, made by hand, never registered
        cur.execute(f"CREATE DATABASE {q(PAYROLL)}")
        cur.execute(f"CREATE TABLE {q(PAYROLL)}.`salaries` (id INT)")
        cur.execute(*govern_database(PUSHDOWN, "%", PAYROLL))
    conn.close()
    config = mysql_config(tmp_path, server)
    ac = AccessControl.open(str(config), create_store=True, push=True)
    door = Door(ac)
    try:
        _estate(door)
        yield door
    finally:
        door.loop.close()
        ac.close()
        conn = server.connect()
        with conn.cursor() as cur:
            for db in (PAYROLL, DB):
                cur.execute(f"DROP DATABASE IF EXISTS {q(db)}")
            for user in ("ann", "bob"):
                cur.execute("DROP USER IF EXISTS %s@%s", ("pd_" + user, "%"))
        conn.close()


def _bob_on_payroll(mariadb: Any) -> list[tuple[Any, ...]]:
    conn = mariadb.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT User, Db FROM mysql.db WHERE User = 'pd_bob' AND Db = %s", (PAYROLL,))
            rows = list(cur.fetchall())
            cur.execute(
                "SELECT User, Db FROM mysql.tables_priv WHERE User = 'pd_bob' AND Db = %s", (PAYROLL,)
            )
            return rows + list(cur.fetchall())
    finally:
        conn.close()


@pytest.mark.mariadb
def test_rest_registration_of_an_unregistered_database_is_a_conflict(
    mariadb_door: Door,
    server: Any,  # noqa: F811
) -> None:
    door = mariadb_door
    answer = door.request("POST", f"{BASE}/schemas", "bob", {"name": PAYROLL})
    assert answer.status == 409, answer.body
    assert answer.json()["type"] == "SchemaAlreadyExistsException"
    assert "already exists on the server" in answer.json()["message"]
    assert ObjectRef(T.SCHEMA, ("c", PAYROLL)) not in door.ac.model.objects
    # a table on the server, in a schema the caller may create tables in: the same
    table = door.request("POST", f"{BASE}/schemas/{DB}/tables", "bob", {"name": "t0", "columns": []})
    assert table.status == 409, table.body
    assert table.json()["type"] == "TableAlreadyExistsException"
    # a name the server does not hold is registered, and owned, as before
    assert door.request("POST", f"{BASE}/schemas", "bob", {"name": "fresh"}).status == 200
    assert door.request("POST", f"{BASE}/schemas/{DB}/tables", "bob", {"name": "t9"}).status == 200
    door.ac.sync()
    assert _bob_on_payroll(server) == []


@pytest.mark.mariadb
def test_library_refuses_the_caller_and_the_administrator_declares_it(
    mariadb_door: Door,
    server: Any,  # noqa: F811
) -> None:
    ac = mariadb_door.ac
    payroll = ObjectRef(T.SCHEMA, ("c", PAYROLL))
    with pytest.raises(ExistsOnServer, match="already exists on the server of backend mysql1"):
        ac.acting("bob").create_object(payroll)
    ac.acting("bob").create_object(ObjectRef(T.SCHEMA, ("c", "mine")))
    with pytest.raises(ExistsOnServer):  # renaming a registered schema onto it: the same
        ac.acting("bob").rename_object(ObjectRef(T.SCHEMA, ("c", "mine")), PAYROLL)
    assert payroll not in ac.model.objects
    assert _bob_on_payroll(server) == []
    # the metalake's owner (over REST too) and the administrator's entry points register it
    assert mariadb_door.request("POST", f"{BASE}/schemas", "admin", {"name": PAYROLL}).status == 200
    ac.as_admin().create_object(ObjectRef(T.TABLE, ("c", PAYROLL, "salaries")), creator="bob")
    assert ac.model.owners[ObjectRef(T.TABLE, ("c", PAYROLL, "salaries"))] == "bob"


SPEC = f"""\
metalake: test
service_admins: [admin]
users: [admin, bob]
catalogs:
  c:
    owner: admin
    schemas:
      {PAYROLL}:
        owner: bob
        tables: [salaries]
roles:
  in_c:
    grants:
      - on: catalog c
        allow: [USE_CATALOG]
    to: [user bob]
"""


@pytest.mark.mariadb
def test_a_spec_declaring_the_owner_of_a_server_object_is_the_administrators_own(
    mariadb_door: Door,
    server: Any,  # noqa: F811
) -> None:
    """``pushdown apply --spec``: the administrator declares bob the owner of the existing
    database, and the backend gives bob what an owner gets there (nothing is refused)."""
    from pushdown.app.service.spec import load_spec_text

    ac = mariadb_door.ac
    ac.as_admin("spec").load_model(load_spec_text(SPEC))
    assert ac.model.owners[ObjectRef(T.SCHEMA, ("c", PAYROLL))] == "bob"
    ac.sync()
    assert _bob_on_payroll(server) != []


# -- Hive Metastore -------------------------------------------------------------------------

HIVE_PREFIX = "srvobj_"


@pytest.fixture
def hive_door(local_hive_metastore: Any, tmp_path: Path) -> Iterator[Door]:
    from pushdown_hive.tests.world import World

    world = World(local_hive_metastore, prefix=HIVE_PREFIX)
    hms = world.hms
    world.client.create_database(HIVE_PREFIX + PAYROLL)
    world.client.create_table(HIVE_PREFIX + PAYROLL, "salaries", owner="etl")
    hive = (
        f'[backends.hive1]\nkind = "hive"\nhost = "{hms.host}"\nport = {hms.port}\n'
        f'grantor = "{world.grantor}"\nrole_prefix = "{world.role_prefix}"\ncatalogs = ["c"]\n'
    )
    try:
        with _door(tmp_path, hive) as door:
            yield door
    finally:
        world.cleanup()


@pytest.mark.hive
def test_hive_registration_of_an_unregistered_database_is_a_conflict(hive_door: Door) -> None:
    door = hive_door
    existing = HIVE_PREFIX + PAYROLL
    # the metastore keeps names in lower case: another spelling is the same database
    for name in (existing, existing.upper()):
        answer = door.request("POST", f"{BASE}/schemas", "bob", {"name": name})
        assert answer.status == 409, answer.body
        assert answer.json()["type"] == "SchemaAlreadyExistsException"
    with pytest.raises(ExistsOnServer):
        door.ac.acting("bob").create_object(ObjectRef(T.SCHEMA, ("c", existing)))
    fresh = HIVE_PREFIX + "fresh"
    assert door.request("POST", f"{BASE}/schemas", "bob", {"name": fresh}).status == 200
    # a table the metastore holds, in a schema the administrator registered: the same
    door.ac.as_admin().create_object(ObjectRef(T.SCHEMA, ("c", existing)))
    table = door.request("POST", f"{BASE}/schemas/{existing}/tables", "bob", {"name": "salaries"})
    assert table.status == 409, table.body
    assert door.request("POST", f"{BASE}/schemas/{existing}/tables", "bob", {"name": "other"}).status == 200


# -- Unity Catalog stand-in, the recording backend, Ranger ----------------------------------


def test_unity_catalog_answers_what_its_catalog_holds(uc_standin: Any) -> None:
    from pushdown_unitycatalog.tests.world import World

    world = World(uc_standin, Model(), "c", ["pd_bob"])
    world.schema("payroll")
    world.table("payroll", "salaries")
    backend = world.backend()
    model = Model()
    for name, held in (
        ("schema c.payroll", True),
        ("schema c.PAYROLL", True),  # the server keeps names in lower case
        ("table c.payroll.salaries", True),
        ("table c.payroll.other", False),
        ("schema c.fresh", False),
        ("table c.fresh.salaries", False),
        ("topic c.payroll.t", False),  # not the server's kind of object: nothing to claim
    ):
        assert backend.on_server(model, ObjectRef.parse(name)) is held, name


@contextmanager
def _door(tmp_path: Path, backends: str) -> Iterator[Door]:
    """A server over ``backends`` (configuration text): admin owns the metalake and catalog
    c; bob holds a role that may create schemas in c and tables in its schemas."""
    tmp_path.mkdir(exist_ok=True)
    config = tmp_path / "pushdown.toml"
    config.write_text('store = "pd.db"\n[access]\nservice_admins = ["admin"]\n' + backends)
    ac = AccessControl.open(str(config), create_store=True, push=False)
    door = Door(ac)
    try:
        assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        admin = ac.acting("admin")
        admin.add_user("bob")
        admin.create_object(CATALOG)
        admin.create_role("maker")
        admin.grant_privileges("maker", CATALOG, [Privilege.USE_CATALOG, Privilege.USE_SCHEMA])
        admin.grant_privileges("maker", CATALOG, [Privilege.CREATE_SCHEMA, Privilege.CREATE_TABLE])
        admin.grant_role("maker", Principal.user("bob"))
        yield door
    finally:
        door.loop.close()
        ac.close()


RECORDING = '[backends.rec]\nkind = "recording"\ncatalogs = ["c"]\nserver_objects = ["schema c.payroll"]\n'
RANGER = '[backends.rg]\nkind = "ranger"\nurl = "http://127.0.0.1:1"\nservice = "hive"\ncatalogs = ["c"]\n'


def test_the_recording_backend_stands_in_for_a_server_and_ranger_cannot_tell(tmp_path: Path) -> None:
    with _door(tmp_path, RECORDING) as door:
        assert door.request("POST", f"{BASE}/schemas", "bob", {"name": "payroll"}).status == 409
        assert door.request("POST", f"{BASE}/schemas", "bob", {"name": "other"}).status == 200
    from pushdown_ranger.backend import RangerBackend

    from pushdown.reconcile.backend import BackendContext

    ranger = RangerBackend(BackendContext("r", {"url": "http://127.0.0.1:1"}, catalogs=frozenset({"c"})))
    assert ranger.on_server(Model(), ObjectRef.parse("schema c.payroll")) is None  # names, not objects


def test_a_catalog_only_ranger_enforces_refuses_a_callers_schema_or_table(tmp_path: Path) -> None:
    """Ranger cannot tell whether the Hive database exists (its resources are names): with
    Ranger alone enforcing the catalog, a checked caller's schema or table is refused (bob
    would own data that may have existed before, and Ranger would grant him an owner's
    rights on it); the metalake's owner, an administrator's entry point, a caller who owns
    the schema already, and a caller once a backend that can tell is configured for the
    catalog too, register as before."""
    with _door(tmp_path / "alone", RANGER) as door:
        ac = door.ac
        seq = ac.store.last_seq()
        refused = door.request("POST", f"{BASE}/schemas", "bob", {"name": "payroll"})
        assert refused.status == 400, refused.body
        assert "can tell" in refused.json()["message"] and "rg" in refused.json()["message"]
        with pytest.raises(BindingRefused, match="no backend enforcing catalog 'c' can tell"):
            ac.acting("bob").create_object(ObjectRef(T.SCHEMA, ("c", "payroll")))
        assert ac.store.last_seq() == seq  # nothing written
        assert ObjectRef(T.SCHEMA, ("c", "payroll")) not in ac.model.objects
        # the metalake's owner gains nothing by registering: as before; so does the CLI
        assert door.request("POST", f"{BASE}/schemas", "admin", {"name": "payroll"}).status == 200
        ac.as_admin().create_object(ObjectRef(T.SCHEMA, ("c", "mine")), "bob")
        # a table in a schema bob does not own: refused too; in the one he owns he may drop it already
        with pytest.raises(BindingRefused):
            ac.acting("bob").create_object(ObjectRef(T.TABLE, ("c", "payroll", "salaries")))
        assert door.request("POST", f"{BASE}/schemas/payroll/tables", "bob", {"name": "x"}).status == 400
        assert door.request("POST", f"{BASE}/schemas/mine/tables", "bob", {"name": "x"}).status == 200
        # a Kafka topic alike (Ranger's Kafka service cannot tell either)
        ac.as_admin().grant_privileges("maker", CATALOG, [Privilege.CREATE_TOPIC])
        with pytest.raises(BindingRefused, match="this topic already"):
            ac.acting("bob").create_object(ObjectRef(T.TOPIC, ("c", "payroll", "events")))
        ac.acting("bob").create_object(ObjectRef(T.TOPIC, ("c", "mine", "events")))
    # the data's own server configured for the catalog too answers: bob's fresh schema goes
    with _door(tmp_path / "beside", RANGER + RECORDING) as door:
        assert door.request("POST", f"{BASE}/schemas", "bob", {"name": "payroll"}).status == 409
        assert door.request("POST", f"{BASE}/schemas", "bob", {"name": "fresh"}).status == 200
