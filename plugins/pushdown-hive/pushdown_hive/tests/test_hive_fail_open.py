"""Fail-open paths of the Hive backend (issue 16), each against the real metastore:
a removed user's grants under a name mapping (H1), a DENY on an unregistered name with
capitals (H2), a registered capitalised DENY added after grants exist (H3), two model
users mapping to one metastore user (X1), and hand-made state on managed roles."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pushdown.app.service import _with_members
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_hive.client import Grant, HiveObject, PrincipalType

from .world import World, do

pytestmark = pytest.mark.hive


def realm(p: Principal) -> str:
    return f"{p.name}@CORP" if p.kind is PrincipalKind.USER else p.name


def lower(p: Principal) -> str:
    return p.name.lower() if p.kind is PrincipalKind.USER else p.name


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[World]:
    w = World(hive_metastore)
    yield w
    w.cleanup()


def readers(w: World, users: list[str], *, deny: str | None = None) -> str:
    """Schema s with tables a and secret (on the metastore); role reader reads s."""
    db = w.schema("s")
    w.table("s", "a")
    w.table("s", "b")
    grants = [
        ("catalog c", "USE_CATALOG", "ALLOW"),
        ("catalog c", "USE_SCHEMA", "ALLOW"),
        (f"schema c.{db}", "SELECT_TABLE", "ALLOW"),
    ]
    if deny is not None:
        grants.append((f"table c.{db}.{deny}", "SELECT_TABLE", "DENY"))
    w.role("reader", grants, to=users)
    return db


def held(w: World, db: str, table: str | None, name: str, groups: list[str] | None = None) -> set[str]:
    obj = HiveObject.database(db) if table is None else HiveObject.of_table(db, table)
    return set(w.client.get_privilege_set(obj, name, groups or []).all)


def roles_of(w: World, name: str) -> list[str]:
    return sorted(r for r in w.client.list_roles(name, PrincipalType.USER) if r != "public")


def sync_events(w: World, hive: Any, events: list[Any]) -> None:
    do(w.model, events)
    reconcile(hive, w.model, Scope.union(scope_of(e) for e in events))


def test_h1_removed_user_under_a_realm_mapping_loses_grants_and_roles(world: World) -> None:
    for user in ("alice", "bob"):
        world.user(user)
    db = readers(world, ["alice", "bob"])
    do(world.model, ch.set_owner(world.model, ObjectRef.parse(f"table c.{db}.a"), "alice"))
    hive = world.backend(realm)
    try:
        reconcile(hive, world.model, Scope.everything())
        assert held(world, db, "a", "alice@CORP") == {"ALL"}
        assert held(world, db, "b", "alice@CORP") == {"SELECT"}
        assert roles_of(world, "alice@CORP") == [world.role_name("reader")]
        sync_events(world, hive, ch.remove_user(world.model, "alice"))
        assert held(world, db, "a", "alice@CORP") == set()
        assert held(world, db, "b", "alice@CORP") == set()
        assert roles_of(world, "alice@CORP") == []
        assert held(world, db, "a", "bob@CORP") == {"SELECT"}
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        hive.close()


def test_h1_directory_member_leaving_a_group_under_a_realm_mapping_loses_access(world: World) -> None:
    world.user("bob")
    do(world.model, ch.add_group(world.model, "analysts", ["bob"]))
    db = readers(world, [])
    do(world.model, ch.grant_role(world.model, "reader", Principal.group("analysts")))
    hive = world.backend(realm)
    try:
        with_dir = _with_members(world.model, {"analysts": {"xavier"}})
        reconcile(hive, with_dir, Scope.everything())
        assert held(world, db, "a", "xavier@CORP") == {"SELECT"}
        left = ev.ExternalMembersChanged("analysts", removed=frozenset({"xavier"}))
        reconcile(hive, world.model, scope_of(left))
        assert held(world, db, "a", "xavier@CORP") == set()
        assert held(world, db, "a", "bob@CORP") == {"SELECT"}
    finally:
        hive.close()


def test_h1_fenced_grant_of_a_principal_no_user_maps_to_is_revoked_by_a_scoped_sync(world: World) -> None:
    world.user("bob")
    db = readers(world, ["bob"])
    hive = world.backend(realm)
    try:
        reconcile(hive, world.model, Scope.everything())
        # left over by an earlier mapping (or a user removed while no sync ran)
        obj = HiveObject.of_table(db, "a")
        gone = Grant(obj, "gone@CORP", PrincipalType.USER, "ALL", grantor=world.grantor)
        world.client.grant_privileges([gone])
        reconcile(hive, world.model, Scope.of(principals={Principal.user("bob")}))
        assert held(world, db, "a", "gone@CORP") == set()
    finally:
        hive.close()


def test_h2_unregistered_capitalised_deny_keeps_the_lower_case_table_ungranted(world: World) -> None:
    world.user("bob")
    db = readers(world, ["bob"], deny="Secret")
    world.client.create_table(db, "secret", owner="etl")  # on the metastore only
    hive = world.backend()
    try:
        plan, _ = reconcile(hive, world.model, Scope.everything())
        assert held(world, db, "secret", "bob") == set()
        assert held(world, db, "a", "bob") == {"SELECT"}
        assert any("Secret" in n and "capitals" in n for n in plan.notes), plan.notes
    finally:
        hive.close()


def test_h3_registered_capitalised_deny_added_after_grants_revokes_the_old_grant(world: World) -> None:
    world.user("bob")
    db = readers(world, ["bob"])
    world.client.create_table(db, "secret", owner="etl")
    hive = world.backend()
    try:
        reconcile(hive, world.model, Scope.everything())
        assert held(world, db, "secret", "bob") == {"SELECT"}
        secret = ObjectRef.parse(f"table c.{db}.Secret")
        events = ch.create_object(world.model, secret)
        do(world.model, events)
        deny = ch.grant_privileges(world.model, "reader", secret, ["SELECT_TABLE"], Condition.DENY)
        sync_events(world, hive, events + deny)
        assert held(world, db, "secret", "bob") == set()
    finally:
        hive.close()


def test_x1_scoped_sync_withholds_a_principal_two_users_map_to(world: World) -> None:
    for user in ("bob", "Bob"):
        world.user(user)
    db = readers(world, [])
    world.role("denied", [(f"table c.{db}.a", "SELECT_TABLE", "DENY")], to=["Bob"])
    hive = world.backend(lower)
    try:
        reconcile(hive, world.model, Scope.everything())
        assert held(world, db, "a", "bob") == set()
        sync_events(world, hive, ch.grant_role(world.model, "reader", Principal.user("bob")))
        assert held(world, db, "a", "bob") == set()
        assert roles_of(world, "bob") == []
    finally:
        hive.close()


# -- hand-made state on the roles pushdown manages -------------------------------------


def hand_world(w: World) -> tuple[str, Any]:
    w.user("bob")
    db = readers(w, ["bob"], deny="a")
    hive = w.backend()
    reconcile(hive, w.model, Scope.everything())
    assert held(w, db, "a", "bob") == set() and held(w, db, "b", "bob") == {"SELECT"}
    return db, hive


def test_hand_made_role_nested_into_a_managed_role_is_revoked(world: World) -> None:
    db, hive = hand_world(world)
    try:
        world.client.create_role("hand_" + world.prefix)
        everything = Grant(HiveObject.of_table(db, "a"), "hand_" + world.prefix, PrincipalType.ROLE, "ALL")
        world.client.grant_privileges([everything])
        world.client.grant_role("hand_" + world.prefix, world.role_name("reader"), PrincipalType.ROLE)
        assert held(world, db, "a", "bob") == {"ALL"}
        plan, _ = reconcile(hive, world.model, Scope.everything())
        assert held(world, db, "a", "bob") == set(), [str(op) for op in plan.ops]
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        world.client.drop_role("hand_" + world.prefix)
        hive.close()


def test_managed_role_granted_to_a_group_by_hand_is_revoked(world: World) -> None:
    db, hive = hand_world(world)
    try:
        world.client.grant_role(world.role_name("reader"), "staff", PrincipalType.GROUP)
        assert held(world, db, "b", "eve", ["staff"]) == {"SELECT"}
        reconcile(hive, world.model, Scope.of(principals={Principal.user("bob")}))
        assert held(world, db, "b", "eve", ["staff"]) == set()
        assert held(world, db, "b", "bob") == {"SELECT"}
    finally:
        hive.close()


def test_hand_made_prefixed_role_and_public_grant_by_the_grantor_are_revoked(world: World) -> None:
    db, hive = hand_world(world)
    try:
        fake = world.role_name("made_by_hand")
        world.client.create_role(fake)
        table = HiveObject.of_table(db, "a")
        world.client.grant_privileges(
            [
                Grant(table, fake, PrincipalType.ROLE, "ALL", grantor=world.grantor),
                Grant(table, "public", PrincipalType.ROLE, "SELECT", grantor=world.grantor),
            ]
        )
        world.client.grant_role(fake, "bob", PrincipalType.USER)
        assert held(world, db, "a", "bob") == {"ALL", "SELECT"}
        reconcile(hive, world.model, Scope.everything())
        assert held(world, db, "a", "bob") == set()
    finally:
        hive.close()


def test_hand_grant_with_grant_option_by_the_grantor_is_revoked(world: World) -> None:
    db, hive = hand_world(world)
    try:
        table = HiveObject.of_table(db, "a")
        option = Grant(table, "bob", PrincipalType.USER, "ALL", grantor=world.grantor, grant_option=True)
        world.client.grant_privileges([option])
        assert held(world, db, "a", "bob") == {"ALL"}
        reconcile(hive, world.model, Scope.of([ObjectRef.parse(f"table c.{db}.a")]))
        assert held(world, db, "a", "bob") == set()
    finally:
        hive.close()


def test_hand_membership_of_a_managed_role_is_revoked_by_a_sync_of_that_role(world: World) -> None:
    db, hive = hand_world(world)
    try:
        world.user("carol")
        world.client.grant_role(world.role_name("reader"), "carol", PrincipalType.USER)
        assert held(world, db, "b", "carol") == {"SELECT"}
        reconcile(hive, world.model, Scope.of(principals={Principal.role("reader")}))
        assert held(world, db, "b", "carol") == set()
        assert held(world, db, "b", "bob") == {"SELECT"}
    finally:
        hive.close()


def test_role_prefix_changed_underneath_a_scoped_sync_revokes_the_old_roles_grants(world: World) -> None:
    db, hive = hand_world(world)
    hive.close()
    hive = world.backend(role_prefix=world.role_prefix + "v2_")
    try:
        deny = ch.grant_privileges(
            world.model, "reader", ObjectRef.parse(f"table c.{db}.b"), ["SELECT_TABLE"], Condition.DENY
        )
        sync_events(world, hive, deny)  # a table's change, for the reader's holders
        assert held(world, db, "b", "bob") == set()
    finally:
        hive.close()


# -- N6: a wanted grant or membership made again with its option (issue 23) --------------


def options(w: World, db: str, table: str) -> dict[tuple[str, str], bool]:
    """(principal, privilege) -> WITH GRANT OPTION, of every grant on ``db.table``."""
    return {
        (g.principal, g.privilege): g.grant_option
        for g in w.client.list_privileges(HiveObject.of_table(db, table))
    }


def admin_options(w: World, user: str) -> dict[str, bool]:
    """role -> WITH ADMIN OPTION, of every role ``user`` holds directly."""
    return {r.role: r.grant_option for r in w.client.get_role_grants_for_principal(user, PrincipalType.USER)}


def regrant(w: World, grant: Grant) -> None:
    """``grant`` revoked and made again with grant option, under the same grantor."""
    w.client.revoke_privileges([grant])
    w.client.grant_privileges(
        [
            Grant(
                grant.obj,
                grant.principal,
                grant.principal_type,
                grant.privilege,
                grantor=grant.grantor,
                grant_option=True,
            )
        ]
    )


def test_n6_a_wanted_role_grant_made_again_with_grant_option_loses_the_option(world: World) -> None:
    """pushdown's grantor re-grants the managed role's SELECT on s.b WITH GRANT OPTION:
    bob (a holder) could pass it on through HiveServer2; a sync of the table grants it
    again without the option (the evaluator denies bob grant_privilege)."""
    db, hive = hand_world(world)
    role = world.role_name("reader")
    try:
        (mine,) = [
            g for g in world.client.list_privileges(HiveObject.of_table(db, "b")) if g.principal == role
        ]
        regrant(world, mine)
        assert options(world, db, "b")[(role, "SELECT")] is True
        plan, _ = reconcile(hive, world.model, Scope.of([ObjectRef.parse(f"table c.{db}.b")]))
        assert options(world, db, "b")[(role, "SELECT")] is False, [str(op) for op in plan.ops]
        assert held(world, db, "b", "bob") == {"SELECT"}
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        hive.close()


def test_n6_a_wanted_user_grant_made_again_with_grant_option_loses_the_option(world: World) -> None:
    """The same for a per-user grant (``roles = false``): bob's SELECT on s.b, made again
    WITH GRANT OPTION by pushdown's grantor, is replaced by a full sync."""
    world.user("bob")
    db = readers(world, ["bob"], deny="a")
    hive = world.backend(roles=False)
    try:
        reconcile(hive, world.model, Scope.everything())
        (mine,) = [
            g for g in world.client.list_privileges(HiveObject.of_table(db, "b")) if g.principal == "bob"
        ]
        regrant(world, mine)
        plan, _ = reconcile(hive, world.model, Scope.everything())
        assert options(world, db, "b") == {("bob", "SELECT"): False}, [str(op) for op in plan.ops]
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        hive.close()


def test_n6_a_managed_membership_made_again_with_admin_option_loses_the_option(world: World) -> None:
    """bob's managed role made again WITH ADMIN OPTION (he could grant it to anybody): a
    sync of the role grants it again without the option; he keeps what it carries."""
    db, hive = hand_world(world)
    role = world.role_name("reader")
    try:
        world.client.revoke_role(role, "bob", PrincipalType.USER)
        world.client.grant_role(role, "bob", PrincipalType.USER, grantor=world.grantor, grant_option=True)
        assert admin_options(world, "bob")[role] is True
        plan, _ = reconcile(hive, world.model, Scope.of(principals={Principal.role("reader")}))
        assert admin_options(world, "bob")[role] is False, [str(op) for op in plan.ops]
        assert held(world, db, "b", "bob") == {"SELECT"}
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        hive.close()


def test_n6_an_owned_foreign_grant_with_grant_option_is_replaced(world: World) -> None:
    """With ``manage_foreign_grants = true``, a wanted grant another grantor made WITH
    GRANT OPTION is pushdown's: replaced by the grant without the option."""
    world.user("bob")
    db = readers(world, ["bob"], deny="a")
    hive = world.backend(roles=False, manage_foreign_grants=True)
    try:
        table = HiveObject.of_table(db, "b")
        world.client.grant_privileges(
            [Grant(table, "bob", PrincipalType.USER, "SELECT", grantor="etl", grant_option=True)]
        )
        plan, _ = reconcile(hive, world.model, Scope.everything())
        assert options(world, db, "b") == {("bob", "SELECT"): False}, [str(op) for op in plan.ops]
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        hive.close()
