"""Names under ``pushdown_map_principal``: two model users on one account, a removed
user's account, and names that mean something to the server."""

from __future__ import annotations

import pytest
from pushdown_lab.mariadb import LocalMariaDB

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile

from .world import World, admin, backend_for, do, held

pytestmark = pytest.mark.mariadb


def lower(p: Principal) -> str:
    return p.name.lower()


def realm(p: Principal) -> str:
    return f"{p.name}@CORP"


def reader_role(world: World) -> None:
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("schema c.crm", "SELECT_TABLE", "ALLOW"),
        ],
    )


def test_x1_a_scope_naming_one_user_still_sees_the_users_mapped_to_the_same_account(
    world: World, mariadb: LocalMariaDB
) -> None:
    """``bob`` and ``Bob`` both map to ``pd_bob``; Bob is denied. A sync scoped to bob
    (a role granted to him) must not grant pd_bob: Bob logs in there too."""
    backend = backend_for(mariadb, map_principal=lower)
    try:
        world.user("bob")  # the account pd_bob
        do(world.model, ch.add_user(world.model, "Bob"))
        reader_role(world)
        world.role("nosy", [("schema c.crm", "SELECT_TABLE", "DENY")], to=["Bob"])
        reconcile(backend, world.model, Scope.everything())
        events = ch.grant_role(world.model, "reader", Principal.user("bob"))
        do(world.model, events)
        plan, _ = reconcile(backend, world.model, Scope.union([scope_of(e) for e in events]))
        assert not any("pd_bob" in str(f) for f in held(backend))
        assert any("users Bob, bob all map to account 'pd_bob'@'%'" in n for n in plan.notes), plan.notes
        assert planner.plan(backend, world.model, Scope.everything()).empty
    finally:
        backend.close()


def test_a_removed_user_under_a_realm_mapping_loses_its_grants(world: World, mariadb: LocalMariaDB) -> None:
    backend = backend_for(mariadb, map_principal=realm)
    try:
        do(world.model, ch.add_user(world.model, "alice"))
        with admin(world.server) as cur:
            cur.execute("CREATE USER 'pd_alice@CORP'@'%' IDENTIFIED BY 'user-secret'")
        reader_role(world)
        do(world.model, ch.grant_role(world.model, "reader", Principal.user("alice")))
        reconcile(backend, world.model, Scope.everything())
        assert "SELECT ON `crm`.* TO 'pd_alice@CORP'@'%'" in {str(f) for f in held(backend)}
        events = ch.remove_user(world.model, "alice")
        do(world.model, events)
        reconcile(backend, world.model, Scope.union([scope_of(e) for e in events]))  # scoped
        assert not any("alice" in str(f) for f in held(backend))
    finally:
        backend.close()
        with admin(world.server) as cur:
            cur.execute("DROP USER IF EXISTS 'pd_alice@CORP'@'%'")


def test_a_failing_mapping_hook_does_not_hold_back_another_users_narrowing(
    world: World, mariadb: LocalMariaDB
) -> None:
    def flaky(p: Principal) -> str:
        if p.name == "weird":
            raise KeyError("no directory entry")
        return p.name

    backend = backend_for(mariadb, map_principal=flaky)
    try:
        for user in ("ann", "bob", "weird"):
            world.user(user)
        reader_role(world)
        for user in ("ann", "bob"):
            do(world.model, ch.grant_role(world.model, "reader", Principal.user(user)))
        reconcile(backend, world.model, Scope.everything())
        do(world.model, ch.revoke_role(world.model, "reader", Principal.user("bob")))
        do(world.model, ch.grant_role(world.model, "reader", Principal.user("weird")))
        plan, _ = reconcile(backend, world.model, Scope.everything())
        now = {str(f) for f in held(backend)}
        assert now == {"SELECT ON `crm`.* TO 'pd_ann'@'%'"}
        assert any("user weird: pushdown_map_principal gives no account" in n for n in plan.notes)
    finally:
        backend.close()


def test_a_user_mapped_to_pushdowns_own_account_is_refused(world: World, mariadb: LocalMariaDB) -> None:
    """With an empty prefix, model user ``pushdown`` names pushdown's own account."""
    backend = backend_for(mariadb, account_prefix="")
    try:
        do(world.model, ch.add_user(world.model, "pushdown"))
        do(world.model, ch.add_user(world.model, "root"))
        reader_role(world)
        for user in ("pushdown", "root"):
            do(world.model, ch.grant_role(world.model, "reader", Principal.user(user)))
        plan, _ = reconcile(backend, world.model, Scope.everything())
        assert not plan.ops
        assert any(
            "user pushdown maps to account 'pushdown'@'%', which pushdown never manages" in n
            for n in plan.notes
        )
    finally:
        backend.close()


def test_removing_one_of_two_colliding_users_gives_the_other_its_grants_in_the_scoped_sync(
    world: World, mariadb: LocalMariaDB
) -> None:
    backend = backend_for(mariadb, map_principal=lower)
    try:
        world.user("bob")  # the account pd_bob, which Bob maps to as well
        do(world.model, ch.add_user(world.model, "Bob"))
        reader_role(world)
        do(world.model, ch.grant_role(world.model, "reader", Principal.user("bob")))
        reconcile(backend, world.model, Scope.everything())
        assert not any("pd_bob" in str(f) for f in held(backend))  # withheld while both exist
        events = ch.remove_user(world.model, "Bob")
        do(world.model, events)
        reconcile(backend, world.model, Scope.union([scope_of(e) for e in events]))  # scoped to Bob
        assert "SELECT ON `crm`.* TO 'pd_bob'@'%'" in {str(f) for f in held(backend)}
        assert planner.plan(backend, world.model, Scope.everything()).empty
    finally:
        backend.close()
