"""The proof on the Hive Metastore: changes made through the official client reach the
run's real metastore, each user's privilege set there equal to the evaluator's decision
(``World.probe`` of the Hive plugin's tests), carried by the workers inside
``pushdown serve`` that the change wakes (their journal poll is 5 minutes here)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gravitino import Catalog
from gravitino.api.authorization.privileges import ModifyTable, SelectTable, UseCatalog, UseSchema
from gravitino.api.authorization.securable_objects import SecurableObjects

from pushdown.journal.store import Store

from .conftest import admin_client, auth_as, client, init_store, serving, wait_for

pytestmark = pytest.mark.hive

PREFIX = "resthive_"
SALES = PREFIX + "sales"
TABLES = ("orders", "secret")
USERS = ("alice", "bob")


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[Any]:
    """The Hive tests' world over this test's database; dropped afterwards, with the
    metastore roles pushdown made for it."""
    from pushdown_hive.tests.world import World

    w = World(hive_metastore, prefix=PREFIX)
    try:
        yield w
    finally:
        w.cleanup()


def exact(world: Any, db: Path) -> list[str]:
    """The metastore's answers against the evaluator's, over the store's current model."""
    store = Store(db)
    world.model = store.load()
    store.close()
    probe = world.probe()
    assert probe.checks > 0
    return list(probe.mismatches)


def holds(world: Any, user: str, table: str, privilege: str) -> bool:
    """What the metastore answers for one user; asked again when the embedded Derby store
    fails the read while the workers write (``Internal error processing``), never guessed."""
    from pushdown_hive.client import HiveObject, HiveRefused

    for attempt in range(20):
        try:
            held = world.client.get_privilege_set(HiveObject.of_table(SALES, table), user, []).all
            return privilege in {p.upper() for p in held}
        except HiveRefused as exc:
            if "Internal error" not in str(exc) or attempt == 19:
                raise
            time.sleep(0.1)  # a pause between asks, not a wait for an outcome
    raise AssertionError("unreachable")


def test_a_change_through_the_official_client_reaches_hive_metastore_grants(
    world: Any, tmp_path: Path
) -> None:
    world.client.create_database(SALES)
    for table in TABLES:
        world.client.create_table(SALES, table, owner="etl")
    hms = world.hms
    config = tmp_path / "pushdown.toml"
    config.write_text(
        'store = "pd.db"\n[access]\nservice_admins = ["admin"]\n'
        f'[backends.hive1]\nkind = "hive"\nhost = "{hms.host}"\nport = {hms.port}\n'
        f'grantor = "{world.grantor}"\nrole_prefix = "{world.role_prefix}"\ncatalogs = ["c"]\n'
        '[daemon]\ninterval = "5m"\npoll = "5m"\nbackoff_min = "200ms"\nbackoff_max = "2s"\n'
    )
    init_store(config)
    db = tmp_path / "pd.db"
    with serving(config, tmp_path / "serve.log") as serve:
        uri = serve.ready()
        admin_client(uri, "admin").create_metalake("test", "the Hive lab", {})
        c = client(uri, "admin")
        for user in USERS:
            c.add_user(user)
        c.create_catalog("c", Catalog.Type.RELATIONAL, "hive", "the metastore", {})
        auth = {"Authorization": auth_as("admin").get_token_data().decode()}
        with httpx.Client(base_url=f"{uri}/api/metalakes/test/catalogs/c", headers=auth) as h:
            assert h.post("/schemas", json={"name": SALES}).status_code == 200
            for table in TABLES:
                assert h.post(f"/schemas/{SALES}/tables", json={"name": table}).status_code == 200
        catalog = SecurableObjects.of_catalog("c", [UseCatalog.allow()])
        sales = SecurableObjects.of_schema(catalog, SALES, [UseSchema.allow(), SelectTable.allow()])
        secret = SecurableObjects.of_table(sales, "secret", [SelectTable.deny()])
        c.create_role("reader", {}, [catalog, sales, secret])
        c.grant_roles_to_user(["reader"], "alice")
        wait_for(lambda: holds(world, "alice", "orders", "SELECT"), 60, "alice's grant reaches the metastore")
        assert exact(world, db) == []
        assert not holds(world, "alice", "secret", "SELECT")  # the DENY wins there
        orders = SecurableObjects.of_table(sales, "orders", [ModifyTable.allow()])
        c.create_role(
            "writer", {}, [catalog, SecurableObjects.of_schema(catalog, SALES, [UseSchema.allow()]), orders]
        )
        c.grant_roles_to_user(["writer"], "bob")
        c.revoke_roles_from_user(["reader"], "alice")
        wait_for(
            lambda: not holds(world, "alice", "orders", "SELECT"), 60, "the revoke reaches the metastore"
        )
        wait_for(lambda: exact(world, db) == [], 60, "the metastore equals the evaluator")
        assert holds(world, "bob", "orders", "UPDATE") or holds(world, "bob", "orders", "ALL")
        assert serve.stop() == 0
