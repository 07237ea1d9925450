"""Convergence, the login-and-try proof, and the fence, against the real server."""

from __future__ import annotations

import pytest

from pushdown.host.plugins import Hooks
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin, do, held

pytestmark = pytest.mark.mariadb


def sales(world: World) -> None:
    """Three users, a group, DENY, gates and owners over two databases."""
    for user in ("ann", "bob", "cid", "dee"):
        world.user(user)
    do(world.model, ch.add_group(world.model, "analysts", ["bob", "cid"]))
    world.schema("crm", owner="dee")
    world.schema("hr")
    world.table("crm", "orders")
    world.table("crm", "secret")
    world.table("hr", "pay", owner="ann")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("schema c.crm", "USE_SCHEMA", "ALLOW"),
            ("schema c.crm", "SELECT_TABLE", "ALLOW"),
        ],
    )
    world.role(
        "writer",
        [
            ("table c.crm.orders", "MODIFY_TABLE", "ALLOW"),
            ("schema c.crm", "CREATE_TABLE", "ALLOW"),
            ("table c.crm.secret", "SELECT_TABLE", "DENY"),
        ],
    )
    do(world.model, ch.grant_role(world.model, "reader", Principal.group("analysts")))
    do(world.model, ch.grant_role(world.model, "writer", Principal.user("cid")))
    world.role(
        "gates",
        [("catalog c", "USE_CATALOG", "ALLOW"), ("catalog c", "USE_SCHEMA", "ALLOW")],
        to=["ann", "dee"],
    )


def test_plugin_registers_through_the_entry_point() -> None:
    assert Hooks.load().backends.kinds()["mysql"] == "pushdown_mysql.plugin"


def test_apply_converges_and_every_login_matches_the_evaluator(world: World, backend: MySQLBackend) -> None:
    sales(world)
    plan, applied = reconcile(backend, world.model, Scope.everything())
    assert applied and plan.adds > 0
    assert planner.plan(backend, world.model, Scope.everything()).empty
    probe = world.probe()
    assert probe.mismatches == []
    assert probe.checks > 50


def test_no_global_privileges_and_escaped_database_patterns(world: World, backend: MySQLBackend) -> None:
    sales(world)
    world.schema("a_b", owner="dee")
    world.schema("axb")
    world.table("axb", "t")
    reconcile(backend, world.model, Scope.everything())
    with admin(world.server) as cur:
        cur.execute(
            "SELECT COUNT(*) FROM mysql.user WHERE User LIKE 'pd\\_%%' AND "
            "(Select_priv = 'Y' OR Create_priv = 'Y' OR Drop_priv = 'Y')"
        )
        assert cur.fetchone() == (0,)
        cur.execute("SELECT Db FROM mysql.db WHERE User = 'pd_dee'")
        assert ("a\\_b",) in set(cur.fetchall())
    assert world.probe().mismatches == []


def test_a_table_created_later_gets_its_grant_at_the_next_sync_unless_denied(
    world: World, backend: MySQLBackend
) -> None:
    sales(world)
    reconcile(backend, world.model, Scope.everything())
    world.table("crm", "later")
    world.table("crm", "hidden")
    world.role("deny_hidden", [("table c.crm.hidden", "SELECT_TABLE", "DENY")])
    do(world.model, ch.grant_role(world.model, "deny_hidden", Principal.group("analysts")))
    plan, _ = reconcile(backend, world.model, Scope.of([ObjectRef.of("table", "c.crm.later")]))
    assert any("`later`" in str(op) for op in plan.ops)
    reconcile(backend, world.model, Scope.everything())
    assert not any("hidden" in str(f) and "pd_bob" in str(f) for f in held(backend))
    assert world.probe().mismatches == []


def test_scoped_sync_widens_a_group_to_its_members(world: World, backend: MySQLBackend) -> None:
    sales(world)
    reconcile(backend, world.model, Scope.everything())
    do(world.model, ch.revoke_role(world.model, "reader", Principal.group("analysts")))
    plan, _ = reconcile(backend, world.model, Scope.of(principals=[Principal.group("analysts")]))
    assert {str(op.fact.account) for op in plan.ops} == {"'pd_bob'@'%'", "'pd_cid'@'%'"}
    assert planner.plan(backend, world.model, Scope.everything()).empty
    assert world.probe().mismatches == []


def test_fence_leaves_other_accounts_alone_and_strips_extras_from_managed_ones(
    world: World, backend: MySQLBackend
) -> None:
    sales(world)
    with admin(world.server) as cur:
        cur.execute("CREATE USER IF NOT EXISTS 'alice'@'%' IDENTIFIED BY 'x'")
        cur.execute("GRANT SELECT ON `crm`.* TO 'alice'@'%'")
        cur.execute("GRANT DROP ON `crm`.`orders` TO 'pd_bob'@'%'")  # hand-made, on a managed account
        cur.execute("GRANT SELECT ON `c%`.* TO 'pd_bob'@'%'")  # a wildcard pushdown may not touch
        cur.execute("CREATE ROLE IF NOT EXISTS `hand made`")
        cur.execute("GRANT `hand made` TO 'pd_ann'@'%' WITH ADMIN OPTION")
    try:
        plan, _ = reconcile(backend, world.model, Scope.everything())  # goes on past what it may not revoke
        assert "- DROP ON `crm`.`orders` TO 'pd_bob'@'%'" in [str(op) for op in plan.ops]
        assert not any("`c%`" in str(op) or "hand made" in str(op) for op in plan.ops)
        assert any("REVOKE SELECT ON `c%`.* FROM 'pd_bob'@'%'" in f for f in plan.findings)
        assert any("REVOKE `hand made` FROM 'pd_ann'@'%'" in f for f in plan.findings)
        assert planner.plan(
            backend, world.model, Scope.everything()
        ).drift  # still reported until a person acts
        with admin(world.server) as cur:
            cur.execute("REVOKE SELECT ON `c%`.* FROM 'pd_bob'@'%'")
            cur.execute("GRANT `hand made` TO 'pushdown'@'%' WITH ADMIN OPTION")
        plan, _ = reconcile(backend, world.model, Scope.everything())  # now it may: a role with admin
        removed = {str(op.fact) for op in plan.ops if op.action == "remove"}
        now = {str(f) for f in held(backend)}
        assert "DROP ON `crm`.`orders` TO 'pd_bob'@'%'" not in now
        assert "ROLE `hand made` TO 'pd_ann'@'%'" in removed
        assert not planner.plan(backend, world.model, Scope.everything()).drift
        with admin(world.server) as cur:
            cur.execute("SHOW GRANTS FOR 'alice'@'%'")
            assert any("`crm`.*" in row[0] for row in cur.fetchall())
        assert world.probe().mismatches == []
    finally:
        with admin(world.server) as cur:
            cur.execute("DROP USER IF EXISTS 'alice'@'%'")
            cur.execute("DROP ROLE IF EXISTS `hand made`")


def test_a_user_without_an_account_is_skipped_with_a_note(world: World, backend: MySQLBackend) -> None:
    sales(world)
    world.user("eve", account=False)
    do(world.model, ch.grant_role(world.model, "reader", Principal.user("eve")))
    plan, _ = reconcile(backend, world.model, Scope.everything())
    assert any("eve" in note and "does not exist" in note for note in plan.notes)
    assert world.probe().mismatches == []


def test_a_no_op_sync_sends_a_constant_handful_of_queries_and_no_writes(
    world: World, backend: MySQLBackend
) -> None:
    sales(world)
    reconcile(backend, world.model, Scope.everything())
    counts = []
    for extra in range(2):
        for i in range(extra * 20):
            world.table("crm", f"more{i}")
        reconcile(backend, world.model, Scope.everything())
        q0, w0 = backend.connection.queries, backend.connection.writes
        plan, applied = reconcile(backend, world.model, Scope.everything())
        assert plan.empty and not applied
        counts.append((backend.connection.queries - q0, backend.connection.writes - w0))
    assert counts[0] == counts[1]
    assert counts[0][0] <= 10 and counts[0][1] == 0  # eight grant tables, the inventory, the settings
