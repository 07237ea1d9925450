"""A DENY (or an owner) on a table the model knows but the server does not hold yet keeps
a database-level grant from being taken for exact: the table would be reachable the
moment it is created. Views count as tables."""

from __future__ import annotations

import pytest

from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin, do, held

pytestmark = pytest.mark.mariadb


def reader(world: World) -> None:
    world.user("ann")
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("schema c.crm", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann"],
    )


def test_a_deny_on_a_table_not_yet_created_keeps_table_grants(world: World, backend: MySQLBackend) -> None:
    reader(world)
    secret = ObjectRef.of("table", ("c", "crm", "secret"))
    do(world.model, ch.create_object(world.model, secret))  # registered, not on the server
    world.grant("reader", "table c.crm.secret", "SELECT_TABLE", "DENY")
    reconcile(backend, world.model, Scope.everything())
    now = {str(f) for f in held(backend)}
    assert "SELECT ON `crm`.* TO 'pd_ann'@'%'" not in now  # not exact: secret would be reachable
    assert "SELECT ON `crm`.`orders` TO 'pd_ann'@'%'" in now
    with admin(world.server) as cur:
        cur.execute("CREATE TABLE `crm`.`secret` (id INT)")
    assert world.probe().mismatches == []  # ann cannot read the new table


def test_a_deny_on_a_view_is_kept(world: World, backend: MySQLBackend) -> None:
    reader(world)
    with admin(world.server) as cur:
        cur.execute("CREATE VIEW `crm`.`v` AS SELECT id FROM `crm`.`orders`")
    world.grant("reader", "table c.crm.v", "SELECT_TABLE", "DENY")
    reconcile(backend, world.model, Scope.everything())
    now = {str(f) for f in held(backend)}
    assert "SELECT ON `crm`.* TO 'pd_ann'@'%'" not in now
    assert "SELECT ON `crm`.`orders` TO 'pd_ann'@'%'" in now
