"""Tables of kinds the inventory does not list (MariaDB's system-versioned tables and
sequences: ``information_schema.TABLES.TABLE_TYPE`` is ``SYSTEM VERSIONED`` / ``SEQUENCE``,
not ``BASE TABLE``): a grant the model gives on one must reach it, as on any table."""

from __future__ import annotations

import pytest

from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import CATALOG, World, admin, do, held

pytestmark = pytest.mark.mariadb

KINDS = {
    "versioned": "CREATE TABLE `crm`.`{t}` (id INT) WITH SYSTEM VERSIONING",
    "sequence": "CREATE SEQUENCE `crm`.`{t}`",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_table_grant_reaches_a_versioned_table_or_a_sequence(
    world: World, backend: MySQLBackend, kind: str
) -> None:
    world.user("ann")
    world.schema("crm")
    with admin(world.server) as cur:
        cur.execute(KINDS[kind].format(t="h"))
    do(world.model, ch.create_object(world.model, ObjectRef.of("table", (CATALOG, "crm", "h"))))
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.h", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann"],
    )
    plan, _ = reconcile(backend, world.model, Scope.everything())
    assert "SELECT ON `crm`.`h` TO 'pd_ann'@'%'" in {str(f) for f in held(backend)}, plan.notes
    with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        cur.execute("SELECT * FROM `crm`.`h`")  # the grant reaches it at login
        with pytest.raises(Exception, match="1142"):  # and no more than SELECT
            cur.execute("DROP TABLE `crm`.`h`" if kind == "versioned" else "DROP SEQUENCE `crm`.`h`")
    assert backend.on_server(world.model, ObjectRef.of("table", (CATALOG, "crm", "h")))


def test_the_discovery_summary_counts_versioned_tables_and_sequences(
    world: World, backend: MySQLBackend
) -> None:
    """A sequence or system-versioned table created by hand widens the next scoped sync to its
    database, as a base table does."""
    world.schema("crm")
    _, before = backend.discover(world.model, None)
    for kind, sql in sorted(KINDS.items()):
        with admin(world.server) as cur:
            cur.execute(sql.format(t=f"by_hand_{kind}"))
        scope, after = backend.discover(world.model, before)
        assert after != before and scope.resolve(world.model).regions, kind
        before = after
