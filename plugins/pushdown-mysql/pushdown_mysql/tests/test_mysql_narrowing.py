"""A statement the server refuses does not stop the rest of the narrowing."""

from __future__ import annotations

import pytest

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin, do, held

pytestmark = pytest.mark.mariadb


def test_a_refused_revoke_does_not_keep_another_users_access(world: World, backend: MySQLBackend) -> None:
    for user in ("ann", "bob"):
        world.user(user)
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.orders", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann", "bob"],
    )
    reconcile(backend, world.model, Scope.everything())
    with admin(world.server) as cur:  # a hand-made grant on a database pushdown does not govern
        cur.execute("CREATE DATABASE IF NOT EXISTS `aaa_ungoverned`")
        cur.execute("GRANT SELECT ON `aaa_ungoverned`.* TO 'pd_ann'@'%'")
    try:
        do(world.model, ch.revoke_role(world.model, "reader", Principal.user("bob")))
        plan, applied = reconcile(backend, world.model, Scope.everything(), retries=0)
        assert applied and [str(op) for op in plan.ops] == ["- SELECT ON `crm`.`orders` TO 'pd_bob'@'%'"]
        assert any("aaa_ungoverned" in f and "REVOKE" in f for f in plan.findings)  # what a person must do
        assert planner.plan(backend, world.model, Scope.everything()).drift  # verify keeps reporting it
        now = {str(f) for f in held(backend)}
        assert not any("pd_bob" in f for f in now)  # bob's revocation went through all the same
        assert "SELECT ON `crm`.`orders` TO 'pd_ann'@'%'" in now
        assert world.probe().mismatches == []  # logins agree with the evaluator
    finally:
        with admin(world.server) as cur:
            cur.execute("DROP DATABASE IF EXISTS `aaa_ungoverned`")
            cur.execute("REVOKE ALL PRIVILEGES ON `aaa_ungoverned`.* FROM 'pd_ann'@'%'")


def test_m3_an_already_gone_error_on_a_revoke_naming_several_accounts_revokes_the_others(
    world: World, backend: MySQLBackend
) -> None:
    """``REVOKE … FROM ann, bob, carl`` after ann lost the grant by hand: the server refuses
    the statement (MariaDB stops at ann; MySQL 8 undoes it whole), so bob and carl still
    hold it. The statement must not count as done: each account is revoked on its own."""
    for user in ("ann", "bob", "carl"):
        world.user(user)
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.orders", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann", "bob", "carl"],
    )
    reconcile(backend, world.model, Scope.everything())
    do(world.model, ch.delete_role(world.model, "reader"))

    def ann_loses_it_meanwhile(plan: Plan) -> None:
        assert len(plan.ops) == 3
        with admin(world.server) as cur:
            cur.execute("REVOKE SELECT ON `crm`.`orders` FROM 'pd_ann'@'%'")

    _, applied = reconcile(backend, world.model, Scope.everything(), retries=0, expect=ann_loses_it_meanwhile)
    assert applied
    assert not any("pd_" in str(f) for f in held(backend))
    assert world.probe().mismatches == []


def test_a_second_catalog_naming_the_backend_does_not_hold_back_a_revoke(
    world: World, backend: MySQLBackend
) -> None:
    """A configuration error (two catalogs name one server) used to stop every sync, and a
    revoke the model asked for with it. Now the server keeps only what every catalog
    decides (narrower) and the plan reports why."""
    for user in ("ann", "bob"):
        world.user(user)
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.orders", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann", "bob"],
    )
    reconcile(backend, world.model, Scope.everything())
    do(
        world.model,
        ch.create_object(world.model, ObjectRef.of("catalog", ("d",)), properties={"backend": "mysql1"}),
    )
    events = ch.revoke_role(world.model, "reader", Principal.user("bob"))
    do(world.model, events)
    plan, _ = reconcile(backend, world.model, Scope.union([scope_of(e) for e in events]), retries=0)
    assert not any("pd_bob" in str(f) for f in held(backend))
    assert any("but c, d name backend mysql1" in f for f in plan.findings), plan.findings
    assert planner.plan(backend, world.model, Scope.everything()).ops == ()
