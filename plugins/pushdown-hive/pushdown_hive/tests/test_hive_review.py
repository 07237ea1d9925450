"""Hostile state the Hive backend must not leave wider than the model, against the real
metastore: hand-made roles and grants outside the fence, grants to groups, global and
column grants, settings and name mappings changed between syncs, objects renamed or
re-created on the metastore. Each probe is ``get_privilege_set`` as the user (with its
groups); a grant by another grantor that pushdown leaves alone by design must at least
be named by a finding."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pushdown.model import changes as ch
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_hive.client import Grant, HiveObject, ObjectType, PrincipalType

from .world import World, do

pytestmark = pytest.mark.hive

#: a grantor that is not pushdown's (a DBA, by hand)
ADMIN = "dba_review"


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[World]:
    w = World(hive_metastore)
    yield w
    for role in w.client.get_role_names():
        if role.startswith(("hand_" + w.prefix, "new_" + w.prefix)):
            w.client.drop_role(role)
    w.cleanup()


def realm(p: Principal) -> str:
    return f"{p.name}@CORP" if p.kind is PrincipalKind.USER else p.name


def setup(w: World, **settings: Any) -> tuple[str, Any]:
    """alice and bob hold role reader: SELECT on schema s (tables a, b, secret), DENY on
    secret. After a full sync: both read a and b, nobody reads secret."""
    for user in ("alice", "bob"):
        w.user(user)
    db = w.schema("s")
    for t in ("a", "b", "secret"):
        w.table("s", t)
    w.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            (f"schema c.{db}", "SELECT_TABLE", "ALLOW"),
            (f"table c.{db}.secret", "SELECT_TABLE", "DENY"),
        ],
        to=["alice", "bob"],
    )
    hive = w.backend(**settings)
    reconcile(hive, w.model, Scope.everything())
    assert held(w, db, "secret", "alice") == set()
    assert held(w, db, "a", "alice") == {"SELECT"}
    return db, hive


def held(w: World, db: str | None, table: str | None, name: str, groups: list[str] | None = None) -> set[str]:
    if db is None:
        obj = HiveObject.server()
    elif table is None:
        obj = HiveObject.database(db)
    else:
        obj = HiveObject.of_table(db, table)
    return {p.upper() for p in w.client.get_privilege_set(obj, name, groups or []).all}


def grant(w: World, obj: HiveObject, who: str, kind: PrincipalType, privilege: str, by: str = ADMIN) -> None:
    w.client.grant_privileges([Grant(obj, who, kind, privilege, grantor=by)])


def full(w: World, hive: Any) -> Any:
    plan, _ = reconcile(hive, w.model, Scope.everything())
    return plan


def named(findings: tuple[str, ...], *words: str) -> bool:
    return any(all(word in f for word in words) for f in findings)


# -- hand-made roles and grants outside the fence ----------------------------------------


def test_hand_role_without_prefix_held_by_a_managed_user_is_revoked_or_reported(world: World) -> None:
    """A DBA creates role ``hand_<w>analyst`` (no prefix), grants it SELECT on s.secret
    and grants the role to alice. get_privilege_set(s.secret, alice) = {SELECT}; the
    model denies alice load_table there. pushdown reads the members of its prefixed roles
    only, and a grant to a role without the prefix is a finding only for ``public``:
    after a full sync alice still reads s.secret and no finding names the role or alice."""
    db, hive = setup(world)
    try:
        role = f"hand_{world.prefix}analyst"
        world.client.create_role(role)
        grant(world, HiveObject.of_table(db, "secret"), role, PrincipalType.ROLE, "SELECT")
        world.client.grant_role(role, "alice", PrincipalType.USER)
        assert held(world, db, "secret", "alice") == {"SELECT"}
        plan = full(world, hive)
        assert held(world, db, "secret", "alice") == set() or named(plan.findings, role), plan.findings
    finally:
        hive.close()


def test_hand_role_without_prefix_with_our_grantor_grant_is_revoked(world: World) -> None:
    """The same hand-made role, but its SELECT on s.secret granted as pushdown's grantor:
    a grant to a role without the prefix is never wanted, so a full sync revokes it."""
    db, hive = setup(world)
    try:
        role = f"hand_{world.prefix}analyst"
        world.client.create_role(role)
        grant(world, HiveObject.of_table(db, "secret"), role, PrincipalType.ROLE, "SELECT", world.grantor)
        world.client.grant_role(role, "alice", PrincipalType.USER)
        assert held(world, db, "secret", "alice") == {"SELECT"}
        full(world, hive)
        assert held(world, db, "secret", "alice") == set()
    finally:
        hive.close()


def test_foreign_group_grant_reaching_a_managed_user_is_reported(world: World) -> None:
    """A DBA grants SELECT on s.secret to GROUP ``hand_<w>staff``; on the enforcing host
    alice is in that group (Hadoop's group mapping, which pushdown cannot read).
    get_privilege_set(s.secret, alice, [staff]) = {SELECT}; the model denies it. The
    grant is left alone (another grantor) and no finding names it: only ``public``
    and prefixed roles are reported among non-user principals."""
    db, hive = setup(world)
    try:
        group = f"hand_{world.prefix}staff"
        grant(world, HiveObject.of_table(db, "secret"), group, PrincipalType.GROUP, "SELECT")
        assert held(world, db, "secret", "alice", [group]) == {"SELECT"}
        plan = full(world, hive)
        assert held(world, db, "secret", "alice", [group]) == set() or named(plan.findings, group), (
            plan.findings
        )
    finally:
        hive.close()


def test_our_grantor_group_grant_is_revoked_by_a_scoped_sync_of_its_table(world: World) -> None:
    """pushdown's grantor's SELECT on s.secret to a group (by hand): never wanted, revoked
    by a sync scoped to that table."""
    db, hive = setup(world)
    try:
        group = f"hand_{world.prefix}staff"
        grant(world, HiveObject.of_table(db, "secret"), group, PrincipalType.GROUP, "SELECT", world.grantor)
        reconcile(hive, world.model, Scope.of([ObjectRef.parse(f"table c.{db}.secret")]))
        assert held(world, db, "secret", "alice", [group]) == set()
    finally:
        hive.close()


def test_hand_role_granted_to_public_is_revoked_or_reported(world: World) -> None:
    """A DBA creates role ``hand_<w>everyone`` carrying SELECT on s.secret and grants it to
    role ``public``. The metastore resolves roles held by ``public`` for every user:
    get_privilege_set(s.secret, alice) = {SELECT}; the model denies it. Only grants made
    directly to ``public`` are findings; a role held by ``public`` is never read, so
    after a full sync alice still reads s.secret and nothing names it."""
    db, hive = setup(world)
    try:
        role = f"hand_{world.prefix}everyone"
        world.client.create_role(role)
        grant(world, HiveObject.of_table(db, "secret"), role, PrincipalType.ROLE, "SELECT")
        world.client.grant_role(role, "public", PrincipalType.ROLE)
        assert held(world, db, "secret", "alice") == {"SELECT"}
        plan = full(world, hive)
        assert held(world, db, "secret", "alice") == set() or named(plan.findings, role), plan.findings
    finally:
        hive.close()


def test_foreign_grant_to_public_is_reported(world: World) -> None:
    """Another grantor's SELECT on s.secret to role ``public``: everyone (alice) reads it;
    left alone by design, named by a finding."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.of_table(db, "secret"), "public", PrincipalType.ROLE, "SELECT")
        assert held(world, db, "secret", "alice") == {"SELECT"}
        plan = full(world, hive)
        assert named(plan.findings, "public", "secret"), plan.findings
    finally:
        hive.close()


def test_foreign_grant_with_grant_option_to_a_managed_user_is_reported(world: World) -> None:
    """Another grantor's ALL with grant option on s.secret to alice: a finding says so."""
    db, hive = setup(world)
    try:
        option = Grant(
            HiveObject.of_table(db, "secret"), "alice", PrincipalType.USER, "ALL", ADMIN, grant_option=True
        )
        world.client.grant_privileges([option])
        plan = full(world, hive)
        assert named(plan.findings, "alice", "secret", "GRANT OPTION"), plan.findings
    finally:
        hive.close()


# -- database, server and column levels --------------------------------------------------


def test_database_level_select_by_our_grantor_is_revoked(world: World) -> None:
    """pushdown's grantor's SELECT on database s to alice (by hand): Hive's legacy
    authorization lets a database-level SELECT cover its tables (s.secret too); never
    wanted, revoked by a full sync."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.database(db), "alice", PrincipalType.USER, "SELECT", world.grantor)
        assert "SELECT" in held(world, db, None, "alice")
        full(world, hive)
        assert "SELECT" not in held(world, db, None, "alice")
    finally:
        hive.close()


def test_database_level_all_by_another_grantor_is_reported(world: World) -> None:
    """Another grantor's ALL on database s to alice: a finding names it."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.database(db), "alice", PrincipalType.USER, "ALL")
        plan = full(world, hive)
        assert named(plan.findings, "alice", "DATABASE", "ALL"), plan.findings
    finally:
        hive.close()


def test_global_grant_by_our_grantor_to_a_managed_user_is_revoked_or_reported(world: World) -> None:
    """pushdown's grantor (by hand) grants alice SELECT at the server level.
    get_privilege_set(GLOBAL, alice) = {SELECT}; Hive's legacy authorization checks a
    user's global privileges before a database's and a table's, so alice reads s.secret
    through HiveServer2; the model grants nothing on the metalake. pushdown never lists
    global grants (one call): the grant stays and no finding names it."""
    _db, hive = setup(world)
    try:
        grant(world, HiveObject.server(), "alice", PrincipalType.USER, "SELECT", world.grantor)
        assert held(world, None, None, "alice") == {"SELECT"}
        plan = full(world, hive)
        assert held(world, None, None, "alice") == set() or named(plan.findings, "alice", "server"), (
            plan.findings
        )
    finally:
        world.client.revoke_privileges(
            [g for g in world.client.list_privileges(HiveObject.server()) if g.principal == "alice"]
        )
        hive.close()


def test_global_grant_by_our_grantor_is_revoked_by_a_one_table_sync(world: World) -> None:
    """pushdown's grantor's server-level SELECT to alice (by hand) is pushdown's: the
    server's grants are read on every sync (one call), so even a sync scoped to one table
    revokes it; another grantor's stays, named by a finding."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.server(), "alice", PrincipalType.USER, "SELECT", world.grantor)
        grant(world, HiveObject.server(), "bob", PrincipalType.USER, "SELECT")
        plan, _ = reconcile(hive, world.model, Scope.of([ObjectRef.parse(f"table c.{db}.a")]))
        assert held(world, None, None, "alice") == set()
        assert named(plan.findings, "'bob'", "server"), plan.findings
    finally:
        world.client.revoke_privileges(
            [g for g in world.client.list_privileges(HiveObject.server()) if g.principal in ("alice", "bob")]
        )
        hive.close()


def test_column_grant_on_a_denied_table_is_revoked_or_reported(world: World) -> None:
    """Another grantor grants alice SELECT on column s.secret.id; HiveServer2 honours a
    column's SELECT, and get_privilege_set on that column says {SELECT}; the model denies
    alice load_table on s.secret. docs/hive.md admits column grants are not read: the
    grant stays and no finding names it (a per-table read of the columns' grants, or at
    least a finding, would close it)."""
    db, hive = setup(world)
    try:
        column = HiveObject(ObjectType.COLUMN, db, "secret", "id")
        grant(world, column, "alice", PrincipalType.USER, "SELECT")
        assert {p.upper() for p in world.client.get_privilege_set(column, "alice", []).all} == {"SELECT"}
        plan = full(world, hive)
        assert named(plan.findings, "alice", "secret"), plan.findings
    finally:
        hive.close()


# -- settings and names changed between syncs ---------------------------------------------


def test_grantor_changed_old_grants_reaching_a_managed_user_are_reported(world: World) -> None:
    """Synced as grantor g1, then the setting says g2 and the model denies alice s.a: the
    old grantor's grants (per-user: roles = false) are now outside the fence; they
    reach a managed role, so a finding must name them."""
    db, hive = setup(world, roles=False)
    hive.close()
    hive = world.backend(grantor=world.grantor + "_v2", roles=False)
    try:
        world.role("deny_a", [(f"table c.{db}.a", "SELECT_TABLE", "DENY")], to=["alice"])
        plan = full(world, hive)
        assert held(world, db, "a", "alice") == {"SELECT"}  # the old grantor's, left alone
        assert named(plan.findings, "alice", f"{db}.a"), plan.findings
    finally:
        hive.close()


def test_grantor_changed_old_grants_on_a_managed_role_are_reported(world: World) -> None:
    """roles = true: synced as grantor g1 (role pd_reader carries SELECT on s.a), then
    the setting says g2 and the model DENYs s.a to alice. The old grantor's SELECT on s.a
    to pd_reader stays (outside the fence) and reaches alice: a finding names it (by
    design: the fence, reported)."""
    db, hive = setup(world)
    hive.close()
    hive = world.backend(grantor=world.grantor + "_v2")
    try:
        world.role("deny_a", [(f"table c.{db}.a", "SELECT_TABLE", "DENY")], to=["alice"])
        plan = full(world, hive)
        assert held(world, db, "a", "alice") == {"SELECT"}
        assert named(plan.findings, world.role_name("reader"), f"{db}.a"), plan.findings
    finally:
        hive.close()


def test_grantor_and_role_prefix_changed_together_leave_nothing_wider_unreported(world: World) -> None:
    """Synced with (grantor g1, role_prefix p1): role p1reader carries SELECT on s.a and
    s.b, held by alice and bob. The settings then say (g2, p2) (a new installation's
    fence) and the model DENYs s.b to reader. The old role's grants are by g1 (foreign)
    on a role without the new prefix (no finding), and its members are not read:
    get_privilege_set(s.b, bob) = {SELECT} after a full sync; the model denies it."""
    db, hive = setup(world)
    hive.close()
    hive = world.backend(grantor=world.grantor + "_v2", role_prefix="new_" + world.prefix)
    try:
        world.grant("reader", f"table c.{db}.b", "SELECT_TABLE", "DENY")
        plan = full(world, hive)
        assert held(world, db, "b", "bob") == set() or named(plan.findings, world.role_name("reader")), (
            plan.findings
        )
    finally:
        world.client.drop_role(world.role_name("reader"))
        hive.close()


def test_role_prefix_changed_foreign_grant_on_the_old_role_still_reported(world: World) -> None:
    """A DBA grants SELECT on s.secret to pushdown's role pd_reader (a finding while the
    role has the prefix). The role_prefix setting changes: the old role is outside the
    fence, keeping the DBA's grant and the members pushdown gave it (alice, bob), so
    get_privilege_set(s.secret, alice) = {SELECT}, which the model denies. Those
    memberships are pushdown's (its grantor's): the full sync revokes them, and reports
    the DBA's grant, which it leaves alone."""
    db, hive = setup(world)
    hive.close()
    hive = world.backend(role_prefix="new_" + world.prefix)
    try:
        old = world.role_name("reader")
        grant(world, HiveObject.of_table(db, "secret"), old, PrincipalType.ROLE, "SELECT")
        assert held(world, db, "secret", "alice") == {"SELECT"}
        plan = full(world, hive)
        assert held(world, db, "secret", "alice") == set()
        assert held(world, db, "a", "alice") == {"SELECT"}  # the new prefix's role
        assert named(plan.findings, old), plan.findings
        assert world.client.get_principals_in_role(old) == []
        assert [g.principal for g in world.client.list_privileges(HiveObject.of_table(db, "secret"))] == [old]
    finally:
        world.client.drop_role(world.role_name("reader"))
        hive.close()


def test_role_prefix_changed_hand_role_nested_into_the_old_role_reaches_nobody(world: World) -> None:
    """As above, but the DBA's SELECT on s.secret is on a role of their own, nested into
    the old role pd_reader. A sync of role reader alone (the new prefix's) follows the DBA's
    role to the old one it is held by and revokes the memberships pushdown gave that one:
    nobody reads s.secret, and the DBA's role and its grant are left alone."""
    db, hive = setup(world)
    hive.close()
    hive = world.backend(role_prefix="new_" + world.prefix)
    hand = f"hand_{world.prefix}dba"
    try:
        old = world.role_name("reader")
        world.client.create_role(hand)
        grant(world, HiveObject.of_table(db, "secret"), hand, PrincipalType.ROLE, "SELECT")
        world.client.grant_role(hand, old, PrincipalType.ROLE)
        assert held(world, db, "secret", "bob") == {"SELECT"}
        plan, _ = reconcile(hive, world.model, Scope.of(principals={Principal.role("reader")}))
        assert held(world, db, "secret", "bob") == set() and held(world, db, "secret", "alice") == set()
        assert named(plan.findings, hand, old), plan.findings
        assert [g.principal for g in world.client.get_principals_in_role(hand)] == [old]
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        world.client.drop_role(world.role_name("reader"))
        hive.close()


def test_role_prefix_changed_server_grant_on_the_old_role_reaches_nobody(world: World) -> None:
    """As above, but the DBA's grant to the old role is SELECT on the server (every
    database and table): the full sync revokes the memberships pushdown gave the old
    role and reports the DBA's grant, which it leaves alone."""
    db, hive = setup(world)
    hive.close()
    hive = world.backend(role_prefix="new_" + world.prefix)
    old = world.role_name("reader")
    try:
        grant(world, HiveObject.server(), old, PrincipalType.ROLE, "SELECT")
        # the metastore's get_privilege_set leaves a role's server-level grants out; a
        # HiveServer2 that honours them lets the old role's holders read everything
        assert {g.principal for g in world.client.get_principals_in_role(old)} == {"alice", "bob"}
        plan = full(world, hive)
        assert world.client.get_principals_in_role(old) == []
        assert named(plan.findings, "ON the server", old), plan.findings
        assert held(world, db, "a", "alice") == {"SELECT"} and held(world, db, "secret", "bob") == set()
    finally:
        world.client.revoke_privileges(
            [g for g in world.client.list_privileges(HiveObject.server()) if g.principal == old]
        )
        world.client.drop_role(old)
        hive.close()


def test_a_role_pushdown_did_not_create_keeps_a_membership_granted_in_its_name(world: World) -> None:
    """A DBA's role (owned by the DBA) carrying SELECT on s.secret, granted to alice and to
    zed (no model user) with pushdown's grantor name as the grantor: the membership is
    not pushdown's (the role is not one it created), so the full sync leaves it and reports
    the grant reaching alice; another team's role is never emptied by a name alone."""
    db, hive = setup(world)
    hand = f"hand_{world.prefix}team"
    try:
        world.client.create_role(hand, owner=ADMIN)
        grant(world, HiveObject.of_table(db, "secret"), hand, PrincipalType.ROLE, "SELECT")
        for user in ("alice", "zed"):
            world.client.grant_role(hand, user, PrincipalType.USER, grantor=world.grantor)
        plan = full(world, hive)
        assert sorted(g.principal for g in world.client.get_principals_in_role(hand)) == ["alice", "zed"]
        assert named(plan.findings, hand, "'alice'"), plan.findings
    finally:
        hive.close()


def test_roles_toggled_off_drops_the_prefixed_roles(world: World) -> None:
    """roles = true, then false: the prefixed roles are dropped, the users' grants are
    per-user, and s.secret stays unread."""
    db, hive = setup(world)
    hive.close()
    hive = world.backend(roles=False)
    try:
        full(world, hive)
        assert world.role_name("reader") not in world.client.get_role_names()
        assert held(world, db, "a", "alice") == {"SELECT"} and held(world, db, "secret", "alice") == set()
    finally:
        hive.close()


def test_mapping_changed_between_syncs_leaves_no_old_name_with_grants(world: World) -> None:
    """alice -> alice@CORP -> alice: each change leaves the old name an orphan, whose
    grants and memberships a full sync revokes."""
    db, hive = setup(world)
    hive.close()
    try:
        hive = world.backend(realm)
        full(world, hive)
        assert held(world, db, "a", "alice") == set()
        assert held(world, db, "a", "alice@CORP") == {"SELECT"}
        hive.close()
        hive = world.backend()
        full(world, hive)
        assert held(world, db, "a", "alice@CORP") == set()
        assert held(world, db, "a", "alice") == {"SELECT"}
    finally:
        hive.close()


def test_a_scoped_sync_after_a_mapping_change_takes_the_old_names_roles(world: World) -> None:
    """alice holds reader (SELECT on s.a through the managed role) as ``alice``; the
    mapping changes to alice@CORP (a new backend) and the first sync is scoped to carol,
    who holds no role. The old name ``alice`` is an orphan: its membership is revoked by
    that sync, not left for the next full one (reader is not in carol's play)."""
    db, hive = setup(world)
    hive.close()
    world.user("carol")
    try:
        hive = world.backend(realm)
        reconcile(hive, world.model, Scope.of(principals={Principal.user("carol")}))
        assert held(world, db, "a", "alice") == set()
        full(world, hive)
        assert held(world, db, "a", "alice@CORP") == {"SELECT"}
    finally:
        hive.close()


def test_foreign_grant_to_a_removed_user_is_reported(world: World) -> None:
    """A DBA grants alice SELECT on s.a (reported while alice is in the model). alice is
    removed: the model allows her nothing, get_privilege_set(s.a, alice) = {SELECT}, and
    the finding is gone (a name no model user maps to is not 'managed'). Same after a
    grantor change: the old grantor's grants to a removed user are never reported."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.of_table(db, "a"), "alice", PrincipalType.USER, "INSERT")
        assert named(full(world, hive).findings, "alice", "INSERT")
        do(world.model, ch.remove_user(world.model, "alice"))
        plan = full(world, hive)
        assert "INSERT" in held(world, db, "a", "alice")
        assert named(plan.findings, "alice", "INSERT"), plan.findings
    finally:
        hive.close()


def test_group_removed_while_a_role_is_held_through_it_loses_the_role(world: World) -> None:
    """carol holds reader only through group g; g is removed: the scoped sync of the
    removal takes carol's membership, and she reads nothing."""
    db, hive = setup(world)
    try:
        world.user("carol")
        group = f"{world.prefix}g"
        do(world.model, ch.add_group(world.model, group, ["carol"]))
        do(world.model, ch.grant_role(world.model, "reader", Principal.group(group)))
        full(world, hive)
        assert held(world, db, "a", "carol") == {"SELECT"}
        events = ch.remove_group(world.model, group)
        do(world.model, events)
        reconcile(hive, world.model, Scope.union(scope_of(e) for e in events))
        assert held(world, db, "a", "carol") == set()
    finally:
        hive.close()


# -- objects changed on the metastore --------------------------------------------------------


def test_table_renamed_on_the_metastore_onto_a_denied_name_loses_its_grants(world: World) -> None:
    """s.a is renamed by hand to s.hidden, a name the model DENYs (never registered):
    the metastore keeps a table's privileges through a rename, so alice's SELECT
    follows; the discovery sync (and a full sync) revokes it."""
    db, hive = setup(world)
    try:
        hidden = ObjectRef.parse(f"table c.{db}.hidden")
        do(world.model, ch.grant_privileges(world.model, "reader", hidden, ["SELECT_TABLE"], Condition.DENY))
        full(world, hive)
        _, seen = hive.discover(world.model, None)
        table = world.client.get_table_objects(db, ["a"])[0]
        table.tableName = "hidden"
        world.client._call("alter_table", db, "a", table)
        assert held(world, db, "hidden", "alice") == {"SELECT"}  # the privileges follow a rename
        scope, _ = hive.discover(world.model, seen)
        reconcile(hive, world.model, scope)
        assert held(world, db, "hidden", "alice") == set()
    finally:
        hive.close()


def test_table_dropped_and_recreated_by_hand_gets_no_stale_grants(world: World) -> None:
    """s.secret dropped and created again by hand: nothing of the old table's grants is
    on the new one, and a full sync keeps it ungranted (the DENY)."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.of_table(db, "a"), "bob", PrincipalType.USER, "INSERT", world.grantor)
        world.client.drop_table(db, "a")
        world.client.create_table(db, "a", owner="etl")
        assert held(world, db, "a", "bob") == set()
        full(world, hive)
        assert held(world, db, "a", "bob") == {"SELECT"}
        assert held(world, db, "secret", "bob") == set()
    finally:
        hive.close()


def test_table_created_outside_with_capitals_is_the_lower_case_table(world: World) -> None:
    """A table created by hand as ``Hidden`` (the metastore keeps ``hidden``) under a
    model DENY on ``hidden``: a full sync grants it nothing."""
    db, hive = setup(world)
    try:
        hidden = ObjectRef.parse(f"table c.{db}.hidden")
        do(world.model, ch.grant_privileges(world.model, "reader", hidden, ["SELECT_TABLE"], Condition.DENY))
        world.client.create_table(db, "Hidden", owner="etl")
        full(world, hive)
        assert held(world, db, "hidden", "alice") == set()
    finally:
        hive.close()


# -- more hand-made roles ---------------------------------------------------------------------


def test_hand_role_without_prefix_is_revoked_when_the_backend_owns_foreign_grants(world: World) -> None:
    """With ``manage_foreign_grants = true`` the DBA's SELECT on s.secret to a hand-made
    role held by alice is pushdown's to revoke: a full sync revokes it."""
    db, hive = setup(world, manage_foreign_grants=True)
    try:
        role = f"hand_{world.prefix}analyst"
        world.client.create_role(role)
        grant(world, HiveObject.of_table(db, "secret"), role, PrincipalType.ROLE, "SELECT")
        world.client.grant_role(role, "alice", PrincipalType.USER)
        full(world, hive)
        assert held(world, db, "secret", "alice") == set()
    finally:
        hive.close()


def test_admin_role_granted_to_a_managed_user_is_reported(world: World) -> None:
    """A DBA grants the metastore's ``admin`` role (it holds ``All`` on the server, with
    grant option) to alice. get_privilege_set does not count a role's global grants
    (GLOBAL and s.secret show nothing new), but HiveServer2's SQL-standard authorization
    gives a member of ``admin`` every privilege after ``SET ROLE ADMIN``, and the grant
    option lets alice grant herself anything; the model gives her nothing on the
    metalake. docs/hive.md says the admin role is "not seen": pushdown reads the members
    of its prefixed roles only, so no finding names alice as an admin (one
    ``get_principals_in_role('admin')`` per sync would)."""
    _db, hive = setup(world)
    world.client.grant_role("admin", "alice", PrincipalType.USER)
    try:
        assert "admin" in world.client.list_roles("alice", PrincipalType.USER)
        plan = full(world, hive)
        assert named(plan.findings, "alice", "admin"), plan.findings
    finally:
        world.client.revoke_role("admin", "alice", PrincipalType.USER)
        hive.close()


def test_hand_role_with_the_prefix_in_capitals_held_by_a_managed_user(world: World) -> None:
    """A DBA creates ``PD_<w>READER`` (the prefix upper-cased: a different role on Hive
    2.3), grants it SELECT on s.secret and grants it to alice. get_privilege_set(s.secret,
    alice) = {SELECT}; the model denies it. The fence (``startswith``) is case-sensitive,
    so the role is neither managed nor reported."""
    db, hive = setup(world)
    role = world.role_name("READER").upper()
    world.client.create_role(role)
    try:
        grant(world, HiveObject.of_table(db, "secret"), role, PrincipalType.ROLE, "SELECT")
        world.client.grant_role(role, "alice", PrincipalType.USER)
        assert held(world, db, "secret", "alice") == {"SELECT"}
        plan = full(world, hive)
        assert held(world, db, "secret", "alice") == set() or named(plan.findings, role), plan.findings
    finally:
        world.client.drop_role(role)
        hive.close()


def test_hand_role_without_prefix_with_our_grantor_grant_is_revoked_by_a_scoped_sync(world: World) -> None:
    """The hand-made role's SELECT on s.secret granted as pushdown's grantor is revoked by
    a sync scoped to alice (a grant to a role without the prefix is never wanted)."""
    db, hive = setup(world)
    try:
        role = f"hand_{world.prefix}analyst"
        world.client.create_role(role)
        grant(world, HiveObject.of_table(db, "secret"), role, PrincipalType.ROLE, "SELECT", world.grantor)
        world.client.grant_role(role, "alice", PrincipalType.USER)
        reconcile(hive, world.model, Scope.of(principals={Principal.user("alice")}))
        assert held(world, db, "secret", "alice") == set()
    finally:
        hive.close()


# -- names the metastore's database compares loosely ---------------------------------------


def test_padded_name_by_our_grantor_is_revoked(world: World) -> None:
    """pushdown's grantor (by hand) grants SELECT on s.secret to USER ``'alice '`` (a
    trailing space). Derby compares text with SQL's padding rule, so
    get_privilege_set(s.secret, 'alice') may count it; the name is an orphan (no model
    user maps to it), so a full sync revokes it."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.of_table(db, "secret"), "alice ", PrincipalType.USER, "SELECT", world.grantor)
        full(world, hive)
        assert held(world, db, "secret", "alice") == set()
        assert held(world, db, "secret", "alice ") == set()
    finally:
        hive.close()


def test_padded_name_by_another_grantor_reaching_a_managed_user_is_reported(world: World) -> None:
    """Another grantor grants SELECT on s.secret to USER ``'alice '`` (a trailing space).
    The metastore's Derby compares names with SQL's padding rule (``'alice' = 'alice '``),
    so get_privilege_set(s.secret, alice) = {SELECT}; the model denies it. pushdown takes
    ``'alice '`` as a name no model user maps to (not managed), so no finding names it.
    (Identity folds case for clashes, but not trailing blanks.)"""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.of_table(db, "secret"), "alice ", PrincipalType.USER, "SELECT")
        assert held(world, db, "secret", "alice") == {"SELECT"}
        plan = full(world, hive)
        assert held(world, db, "secret", "alice") == set() or named(plan.findings, "alice", "secret"), (
            plan.findings
        )
    finally:
        hive.close()


def test_foreign_grant_to_a_model_group_of_a_managed_user_is_reported(world: World) -> None:
    """The model puts alice in group ``<w>staff``; a DBA grants SELECT on s.secret to
    GROUP ``<w>staff``. get_privilege_set(s.secret, alice, [staff]) = {SELECT}; the model
    denies it. Even a group the model itself knows alice is in is not reported."""
    db, hive = setup(world)
    try:
        group = f"{world.prefix}staff"
        do(world.model, ch.add_group(world.model, group, ["alice"]))
        grant(world, HiveObject.of_table(db, "secret"), group, PrincipalType.GROUP, "SELECT")
        assert held(world, db, "secret", "alice", [group]) == {"SELECT"}
        plan = full(world, hive)
        assert named(plan.findings, group), plan.findings
    finally:
        hive.close()


def test_foreign_grant_to_a_padded_public_role_is_reported(world: World) -> None:
    """Another grantor grants SELECT on s.secret to ROLE ``'public '``. The metastore
    matches the roles a user holds (``public`` among them) padding-insensitively, so
    get_privilege_set(s.secret, alice) = {SELECT}; the model denies it. The finding for
    ``public`` compares the exact (lower-cased) name, so nothing names it."""
    db, hive = setup(world)
    try:
        grant(world, HiveObject.of_table(db, "secret"), "public ", PrincipalType.ROLE, "SELECT")
        assert held(world, db, "secret", "alice") == {"SELECT"}
        plan = full(world, hive)
        assert held(world, db, "secret", "alice") == set() or named(plan.findings, "public", "secret"), (
            plan.findings
        )
    finally:
        hive.close()


def test_managed_role_granted_to_public_by_hand_is_revoked(world: World) -> None:
    """A DBA grants pushdown's role pd_reader to role ``public``: every user (eve, not in
    the model) reads s.b; the membership is never wanted and a full sync revokes it."""
    db, hive = setup(world)
    try:
        world.client.grant_role(world.role_name("reader"), "public", PrincipalType.ROLE)
        assert held(world, db, "b", "eve") == {"SELECT"}
        full(world, hive)
        assert held(world, db, "b", "eve") == set()
        assert held(world, db, "b", "bob") == {"SELECT"}
    finally:
        hive.close()


def test_table_owner_set_by_hand_to_a_managed_user_is_reported(world: World) -> None:
    """A DBA sets s.secret's owner (the metastore's ``Table.owner``) to alice. HiveServer2's
    SQL-standard authorization gives a table's owner its ``OWNER`` privilege (DROP, ALTER,
    GRANT on the table) from that field, with no grant row; get_privilege_set does not
    count it. The model makes alice no owner and denies her s.secret. pushdown never
    reads a table's owner: nothing names it (one ``get_table_objects_by_name`` per
    database read would)."""
    db, hive = setup(world)
    try:
        table = world.client.get_table_objects(db, ["secret"])[0]
        table.owner = "alice"
        world.client._call("alter_table", db, "secret", table)
        assert world.client.get_table_objects(db, ["secret"])[0].owner == "alice"
        plan = full(world, hive)
        assert named(plan.findings, "alice", "secret", "owner"), plan.findings
    finally:
        hive.close()
