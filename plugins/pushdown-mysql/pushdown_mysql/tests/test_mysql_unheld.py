"""A DENY (or an owner) on a table the model knows but the server does not hold yet keeps
a database-level grant from being taken for exact: the table would be reachable the
moment it is created. Views count as tables."""

from __future__ import annotations

import pytest

from pushdown.model import changes as ch
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin, do, held


def scope_of_events(events: list[object]) -> Scope:
    return Scope.union([scope_of(e) for e in events])  # type: ignore[arg-type]


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


@pytest.mark.parametrize("name", ["secret", "Secret"])
def test_m1_a_deny_on_an_unregistered_table_not_on_the_server_keeps_table_grants(
    world: World, backend: MySQLBackend, name: str
) -> None:
    """The model accepts a DENY on a table nobody registered; the server does not hold it
    either. ``SELECT ON crm.*`` must not be taken for exact: the table would be readable
    the moment someone creates it (here: by hand, with no sync in between)."""
    reader(world)
    reconcile(backend, world.model, Scope.everything())
    assert "SELECT ON `crm`.* TO 'pd_ann'@'%'" in {str(f) for f in held(backend)}
    events = ch.grant_privileges(
        world.model, "reader", ObjectRef.of("table", ("c", "crm", name)), ["SELECT_TABLE"], Condition.DENY
    )
    do(world.model, events)
    plan, _ = reconcile(backend, world.model, scope_of_events(events))  # the scoped sync of the DENY
    now = {str(f) for f in held(backend)}
    assert "SELECT ON `crm`.* TO 'pd_ann'@'%'" not in now
    assert "SELECT ON `crm`.`orders` TO 'pd_ann'@'%'" in now
    assert any(f"crm.{name}" in n and "narrower" in n for n in plan.notes), plan.notes
    assert planner.plan(backend, world.model, Scope.everything()).empty
    with admin(world.server) as cur:
        cur.execute(f"CREATE TABLE `crm`.`{name}` (id INT)")
    assert world.probe().mismatches == []  # ann cannot read the new table


def test_m1_an_unregistered_deny_from_a_full_sync_holds_when_the_table_appears(
    world: World, backend: MySQLBackend
) -> None:
    reader(world)
    world.grant("reader", "table c.crm.later", "SELECT_TABLE", "DENY")
    reconcile(backend, world.model, Scope.everything())
    assert "SELECT ON `crm`.* TO 'pd_ann'@'%'" not in {str(f) for f in held(backend)}
    with admin(world.server) as cur:
        cur.execute("CREATE TABLE `crm`.`later` (id INT)")
    assert world.probe().mismatches == []  # before any sync: later refused
    with admin(world.server) as cur:
        cur.execute("CREATE TABLE `crm`.`other` (id INT)")
    reconcile(backend, world.model, Scope.everything())
    assert world.probe().mismatches == []
