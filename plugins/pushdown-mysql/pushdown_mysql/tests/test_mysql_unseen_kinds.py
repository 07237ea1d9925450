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


@pytest.mark.xfail(
    strict=True,
    reason="drift: the inventory lists only TABLE_TYPE 'BASE TABLE' and 'VIEW', so a table grant "
    "the model gives on a system-versioned table or a sequence is never written",
)
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
