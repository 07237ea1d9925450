"""The model source on the run's real Hive Metastore: a metalake made through the official
client on pushdown serve (the Gravitino here) is pulled into a following store and synced;
the metastore then answers every user's privilege set exactly as the evaluator decides
over the source's model (``World.probe``), a second plan is empty, and a role granted
through the client afterwards arrives with the next poll and sync."""

from __future__ import annotations

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

pytestmark = pytest.mark.hive

PREFIX = "srchive_"
SALES = PREFIX + "sales"


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[Any]:
    from pushdown_hive.tests.world import World

    w = World(hive_metastore, prefix=PREFIX)
    try:
        yield w
    finally:
        w.cleanup()


def exact(world: Any, ac: AccessControl) -> None:
    world.model = ac.model
    probe = world.probe()
    assert probe.checks > 0 and probe.mismatches == []


def test_a_gravitino_metalake_is_enforced_exactly_on_the_hive_metastore(world: Any, tmp_path: Path) -> None:
    from pushdown_hive.client import HiveObject

    world.client.create_database(SALES)
    for table in ("orders", "secret"):
        world.client.create_table(SALES, table, owner="etl")
    (tmp_path / "g").mkdir()
    with site(tmp_path / "g") as g:
        c = client(g.uri, "admin")
        for user in ("alice", "bob"):
            c.add_user(user)
        c.create_catalog("c", Catalog.Type.RELATIONAL, "hive", "", {"pushdown.backend": "hive1"})
        with httpx.Client(
            base_url=f"{g.uri}/api/metalakes/test/catalogs/c", auth=httpx.BasicAuth("admin", "x")
        ) as h:
            assert h.post("/schemas", json={"name": SALES}).status_code == 200
            for table in ("orders", "secret"):
                assert h.post(f"/schemas/{SALES}/tables", json={"name": table}).status_code == 200
        catalog = SecurableObjects.of_catalog("c", [UseCatalog.allow()])
        schema = SecurableObjects.of_schema(catalog, SALES, [UseSchema.allow(), SelectTable.allow()])
        secret = SecurableObjects.of_table(SecurableObjects.of_schema(catalog, SALES, []), "secret", [])
        c.create_role("reader", {}, [catalog, schema])
        c.grant_privileges_to_role("reader", secret, [SelectTable.deny()])
        c.grant_roles_to_user(["reader"], "alice")

        hms = world.hms
        raw = {
            "store": str(tmp_path / "pd.db"),
            "backends": {
                "hive1": {
                    "kind": "hive",
                    "host": hms.host,
                    "port": hms.port,
                    "grantor": world.grantor,
                    "role_prefix": world.role_prefix,
                }
            },
            "source": {
                "kind": "gravitino",
                "uri": g.uri,
                "metalake": "test",
                "user": "admin",
                "catalog_property": "pushdown.backend",
            },
        }
        config = from_mapping(raw, tmp_path, "pushdown.toml", explicit_store=False)
        ac = AccessControl.open(config, push=False, create_store=True)
        try:
            follower = Follower(config)
            assert follower.poll(ac).ok
            assert all(r.ok for r in ac.sync(full=True))
            exact(world, ac)
            orders, hidden = HiveObject.of_table(SALES, "orders"), HiveObject.of_table(SALES, "secret")
            assert "SELECT" in world.client.get_privilege_set(orders, "alice", []).all
            assert "SELECT" not in world.client.get_privilege_set(hidden, "alice", []).all
            again = ac.sync(full=True, dry_run=True)
            # a second plan is empty: nothing to apply, and nothing found in this test's
            # database (the session's metastore may hold other tests' hand-made state,
            # which a full read reports as findings elsewhere)
            assert all(r.ok and r.plan is not None and r.plan.empty for r in again), again
            assert not [f for r in again if r.plan is not None for f in r.plan.findings if SALES in f]

            c.grant_roles_to_user(["reader"], "bob")
            result = follower.poll(ac)
            assert result.ok and result.summary == {"role granted": 1}
            assert all(r.ok for r in ac.sync())  # the journal's pending scope
            exact(world, ac)
            assert "SELECT" in world.client.get_privilege_set(orders, "bob", []).all
        finally:
            ac.close()
