"""Cost follows the change in the Hive backend, counted not timed: the scoped sync of a
one-table grant maps as many users, visits as many model objects and makes as many
metastore calls in an estate ten times larger. Against the in-memory metastore.

The counted bound holds when no plugin implements ``pushdown_map_principal`` (the mapping
is then a pure function of the backend's settings, kept across syncs). With a mapping hook
every sync that grants maps every user again, so a clash caused by a user outside the
scope is still caught before a grant (the last tests)."""

from __future__ import annotations

import copy
import cProfile
import pstats
import random
from collections import Counter
from collections.abc import Iterator, KeysView
from dataclasses import dataclass
from typing import Any

import pytest

from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_hive.backend import HiveBackend
from pushdown_hive.facts import ROLE, USER, HiveGrant, HiveMember
from tests.costs import (
    LARGE,
    SMALL,
    Counts,
    Mapper,
    aliased_hooks,
    clash_model,
    counting_objects,
    do,
    estate,
    same_at_both_scales,
)

from .fake import FakeMetastore

#: what a one-table change may cost, whatever the estate (measured 1 mapping, 5 objects
#: and 12 metastore calls; 13 while the read listed every table of the database and the
#: hand-made-state read asked the table's owner again; 14 while every sync listed the
#: metastore's roles; before the
#: kept identity, the roles read only in play and the lookups by key: 10 mappings, 115
#: objects and 33 calls at scale 1; 100, 1,105 and 213 at scale 10)
MAPPINGS_BOUND = 5
OBJECTS_BOUND = 10
CALLS_BOUND = 20
#: the role names and members a one-table change reads (measured 3: r1's one member, the
#: roles that member holds; 16 and 106 while every sync listed every role of the metastore)
ROLE_ITEMS_BOUND = 10


def hive_estate(scale: int) -> tuple[Model, FakeMetastore]:
    """:func:`tests.costs.estate` in the Hive catalog ``c`` (its database ``crm``), and a
    metastore holding its tables."""
    return estate(scale, "hive1"), FakeMetastore({"crm": {f"t{i}" for i in range(10 * scale)}})


@dataclass
class HiveCounts(Counts):
    calls: int = 0
    #: the role names, members and held roles the metastore answered
    role_items: int = 0
    #: ``get_role_names`` calls (each answers every role of the metastore)
    role_listings: int = 0
    #: the table names the listings of tables answered (``get_all_tables`` answers every
    #: table of a database: 10 and 100 here, 200 in the daemon benchmark's)
    table_rows: int = 0


def one_table_change(scale: int, monkeypatch: pytest.MonkeyPatch) -> HiveCounts:
    counts, mapper = HiveCounts(), Mapper()
    model, ms = hive_estate(scale)
    context = BackendContext(
        "hive1", {"grantor": "pushdown"}, map_principal=mapper, mapping_stable=lambda: True
    )  # no mapping hook
    hive = HiveBackend(context, metastore=ms)
    reconcile(hive, model, Scope.everything())  # the first sync
    mapper.calls = 0
    events = ch.grant_privileges(model, "r1", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"])
    do(model, events)
    before, items, rows = len(ms.log), sum(ms.answered.values()), ms.table_rows
    with counting_objects(monkeypatch, counts):
        reconcile(hive, model, scope_of(events[0]))
    counts.table_rows = ms.table_rows - rows
    counts.mappings, counts.calls = mapper.calls, len(ms.log) - before
    counts.role_items = sum(ms.answered.values()) - items
    counts.role_listings = sum(1 for name, _ in ms.log[before:] if name == "get_role_names")
    assert HiveGrant(ROLE, "pd_r1", "crm", "t0", "INSERT") in ms.held  # the change reached it
    assert HiveMember("pd_r1", "u1") in {HiveMember(r, u) for r, us in ms.roles.items() for u in us}
    return counts


def test_a_one_table_change_costs_as_much_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = same_at_both_scales(lambda scale: one_table_change(scale, monkeypatch))
    assert small.mappings <= MAPPINGS_BOUND, small
    assert small.objects <= OBJECTS_BOUND and small.calls <= CALLS_BOUND, small
    # the roles read are those in play (r1 and its holder's): not every role of the metastore
    assert small.role_listings == 0 and 0 < small.role_items <= ROLE_ITEMS_BOUND, small
    # the table read is the changed one, asked by name: not every table of its database
    assert small.table_rows == 1, small


def function_calls(scale: int) -> Counter[str]:
    """How many times each function (the backend's, the core's, the builtins they call)
    ran in the scoped syncs of 30 one-table changes (grants and revokes, after the first
    full sync), as the profiler counts them."""
    model, ms = hive_estate(scale)
    context = BackendContext(
        "hive1", {"grantor": "pushdown"}, map_principal=Mapper(), mapping_stable=lambda: True
    )
    hive = HiveBackend(context, metastore=ms)
    reconcile(hive, model, Scope.everything())
    profile = cProfile.Profile()
    for i in range(30):
        table, role = ObjectRef.parse(f"table c.crm.t{i // 2 % 10}"), f"r{i // 2 % 10}"
        change = ch.grant_privileges if i % 2 == 0 else ch.revoke_privileges
        events = change(model, role, table, ["MODIFY_TABLE"])
        do(model, events)
        profile.enable()
        reconcile(hive, model, scope_of(events[0]))
        profile.disable()
    stats: dict[tuple[str, int, str], tuple[int, ...]] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    return Counter({f"{file}:{name}": calls[1] for (file, _, name), calls in stats.items()})


def test_every_function_runs_as_often_in_an_estate_ten_times_larger() -> None:
    """No step of the scoped sync grows with the estate, however small: not the metastore
    names of every user taken apart again (``hostile.bare`` per user per sync), not every
    grant of a role walked to tell whether its ALLOWs lead to one privilege (``r0`` holds
    grants on 1,000 tables at the larger estate)."""
    small, large = function_calls(SMALL), function_calls(LARGE)
    grown = {f: (small[f], large[f]) for f in small.keys() | large.keys() if small[f] != large[f]}
    assert not grown, grown


def test_a_role_deleted_from_the_model_is_dropped_by_a_scoped_sync_of_anything() -> None:
    """Roles out of play are left alone, but a role the model no longer has is not."""
    model, ms = hive_estate(1)
    hive = HiveBackend(BackendContext("hive1", {"grantor": "pushdown"}, mapping_stable=lambda: True), ms)
    reconcile(hive, model, Scope.everything())
    do(model, ch.revoke_role(model, "r5", Principal.user("u5")))
    do(model, ch.delete_role(model, "r5"))
    events = ch.grant_privileges(model, "r1", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"])
    do(model, events)
    reconcile(hive, model, scope_of(events[0]))
    assert "pd_r5" not in ms.roles and "pd_r6" in ms.roles
    assert not any(g.principal == "pd_r5" for g in ms.held)


def test_a_role_the_backend_never_listed_is_dropped_by_the_sync_of_its_deletion() -> None:
    """Another backend of the same metastore (another process) created ``fresh``'s role,
    so this backend's roles do not name it; the model then deletes the role. The sync of
    that deletion (its holder and its grants in scope) still drops it."""
    model, ms = hive_estate(1)
    settings = {"grantor": "pushdown"}
    hive = HiveBackend(BackendContext("hive1", settings, mapping_stable=lambda: True), ms)
    reconcile(hive, model, Scope.everything())
    other = HiveBackend(BackendContext("hive1", settings, mapping_stable=lambda: True), ms)
    do(model, ch.create_role(model, "fresh"))
    do(model, ch.grant_privileges(model, "fresh", ObjectRef.parse("table c.crm.t1"), ["SELECT_TABLE"]))
    do(model, ch.grant_role(model, "fresh", Principal.user("u2")))
    reconcile(other, model, Scope.everything())
    assert ms.roles["pd_fresh"] == {"u2"} and hive.known_roles is not None
    assert "pd_fresh" not in hive.known_roles
    events = ch.delete_role(model, "fresh")
    do(model, events)
    reconcile(hive, model, Scope.union(scope_of(e) for e in events))
    assert "pd_fresh" not in ms.roles
    assert not any(g.principal == "pd_fresh" for g in ms.held)


def test_a_known_role_the_model_deleted_is_dropped_on_the_metastores_word() -> None:
    """The backend knows r5's role; the model deletes r5 and another backend (another
    process) drops the role first. The next one-table sync here lists the roles (one it
    knows is no longer the model's) rather than dropping a role that is gone: no refusal."""
    model, ms = hive_estate(1)
    settings = {"grantor": "pushdown"}
    hive = HiveBackend(BackendContext("hive1", settings, mapping_stable=lambda: True), ms)
    reconcile(hive, model, Scope.everything())
    do(model, ch.delete_role(model, "r5"))
    other = HiveBackend(BackendContext("hive1", settings, mapping_stable=lambda: True), ms)
    reconcile(other, model, Scope.everything())
    assert "pd_r5" not in ms.roles and hive.known_roles is not None and "pd_r5" in hive.known_roles
    events = ch.grant_privileges(model, "r1", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"])
    do(model, events)
    reconcile(hive, model, scope_of(events[0]))  # raises on a refused drop
    assert len(ms.calls("drop_role")) == 1 and "pd_r5" not in hive.known_roles
    assert HiveGrant(ROLE, "pd_r1", "crm", "t0", "INSERT") in ms.held


def test_a_fenced_role_made_by_hand_is_dropped_by_a_sync_that_puts_it_in_play() -> None:
    """A role with the managed prefix, made by hand after the backend listed the roles
    and held by u3: a sync of a change to u3 reads the roles u3 holds, so the role is in
    play though the backend does not know it; the roles are listed and it is dropped (a
    sync of a table it carries nothing on leaves it to the next sync that lists)."""
    model, ms = hive_estate(1)
    hive = HiveBackend(BackendContext("hive1", {"grantor": "pushdown"}, mapping_stable=lambda: True), ms)
    reconcile(hive, model, Scope.everything())
    ms.create_role("pd_ghost", "hand")
    ms.grant_role("pd_ghost", "u3", "hand")
    events = ch.grant_role(model, "r4", Principal.user("u3"))
    do(model, events)
    listings = len(ms.calls("get_role_names"))
    reconcile(hive, model, scope_of(events[0]))
    assert len(ms.calls("get_role_names")) > listings
    assert "pd_ghost" not in ms.roles and ms.roles["pd_r4"] == {"u3", "u4"}


def test_a_known_role_dropped_by_hand_is_made_again() -> None:
    """The backend knows r1's role; it is dropped by hand. The next sync of r1 reads no
    members (as the metastore answers for a missing role), so it lists the roles, and
    makes the role again with its holder and its grant."""
    model, ms = hive_estate(1)
    hive = HiveBackend(BackendContext("hive1", {"grantor": "pushdown"}, mapping_stable=lambda: True), ms)
    reconcile(hive, model, Scope.everything())
    ms.drop_role("pd_r1")
    events = ch.grant_privileges(model, "r1", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"])
    do(model, events)
    reconcile(hive, model, scope_of(events[0]))
    assert ms.roles["pd_r1"] == {"u1"}
    assert HiveGrant(ROLE, "pd_r1", "crm", "t0", "INSERT") in ms.held


def test_a_mapping_changed_for_a_user_outside_the_scope_is_caught_before_a_grant() -> None:
    """The hook now maps carol to ``bob`` (its answer changed; no plugin came or went, so
    the mapping version is the same). A sync scoped to bob's role must still see that carol
    shares bob's metastore name: both are withheld and nothing is granted to ``bob``."""
    aliases, hooks = aliased_hooks()
    model = clash_model("hive1")
    context = BackendContext(
        "hive1",
        {"grantor": "pushdown", "roles": False},
        map_principal=lambda p: hooks.map_principal("hive1", p),
        mapping_version=hooks.mapping_version,
        mapping_stable=hooks.mapping_stable,
    )
    ms = FakeMetastore({"hr": {"pay"}})
    hive = HiveBackend(context, metastore=ms)
    first, _ = reconcile(hive, model, Scope.everything())
    assert not any("all map to metastore user" in n for n in first.notes)  # no clash yet

    aliases.alias["carol"] = "bob"  # the hook's answer for carol changed, the plugins did not
    events = ch.grant_privileges(model, "r", ObjectRef.parse("table c.hr.pay"), ["SELECT_TABLE"])
    do(model, events)
    plan, _ = reconcile(hive, model, scope_of(events[0]))  # bob's role: bob only
    assert any("users bob, carol all map to metastore user 'bob'" in n for n in plan.notes), plan.notes
    assert HiveGrant(USER, "bob", "hr", "pay", "SELECT") not in ms.held, ms.held


def test_the_same_change_without_a_hook_grants_to_bob() -> None:
    """The test above can fail: with no clash the same scoped sync grants to bob."""
    model = clash_model("hive1", carol=False)
    ms = FakeMetastore({"hr": {"pay"}})
    hive = HiveBackend(BackendContext("hive1", {"grantor": "pushdown", "roles": False}), metastore=ms)
    reconcile(hive, model, Scope.everything())
    events = ch.grant_privileges(model, "r", ObjectRef.parse("table c.hr.pay"), ["SELECT_TABLE"])
    do(model, events)
    reconcile(hive, model, scope_of(events[0]))
    assert HiveGrant(USER, "bob", "hr", "pay", "SELECT") in ms.held


SPELLED = [
    ObjectRef.parse(text)
    for text in ("schema c.S", "table c.S.a", "table c.s.B", "schema c.s", "table c.s.a", "table d.X.y")
]


def test_the_models_index_of_capitals_equals_a_rebuild_after_every_change() -> None:
    rng = random.Random(30)
    model = Model()
    model.apply(ev.UserAdded("ann"))
    model.apply(ev.RoleCreated("r"))
    for _ in range(400):
        obj = rng.choice(SPELLED)
        privs = frozenset({Privilege.SELECT_TABLE})
        event: ev.Event = rng.choice(
            [
                ev.PrivilegesGranted("r", obj, privs, Condition.ALLOW),
                ev.PrivilegesRevoked("r", obj, privs, Condition.ALLOW),
                ev.OwnerSet(obj, rng.choice(["ann", None])),
                ev.ObjectCreated(obj) if obj not in model.objects else ev.ObjectDropped(obj),
            ]
        )
        model.apply(event)
        again = copy.deepcopy(model)
        again.reindex()
        assert model.capitals == again.capitals, event
        held = (*model.objects, *model.by_object, *model.owners)
        want = {o for o in held if any(n != n.lower() for n in o.names[1:])}
        assert {o for objs in model.capitals.values() for o in objs} == want


def table_created(scale: int) -> tuple[int, int]:
    """Metastore calls and mappings of the scoped sync of a table created below the
    schema: every user is decided on it, but only the roles that may carry something
    there are read (none here: the roles' ALLOWs lead elsewhere, ``base`` has gates only)."""
    mapper = Mapper()
    model, ms = hive_estate(scale)
    context = BackendContext(
        "hive1", {"grantor": "pushdown"}, map_principal=mapper, mapping_stable=lambda: True
    )
    hive = HiveBackend(context, metastore=ms)
    reconcile(hive, model, Scope.everything())
    mapper.calls = 0
    ms.dbs["crm"].add("fresh")
    events = ch.create_object(model, ObjectRef.parse("table c.crm.fresh"))
    do(model, events)
    before = len(ms.log)
    reconcile(hive, model, scope_of(events[0]))
    return len(ms.log) - before, mapper.calls


def test_a_table_created_reads_as_many_roles_in_an_estate_ten_times_larger() -> None:
    small = same_at_both_scales(table_created)
    assert small[1] == 0, small
    assert small[0] <= CALLS_BOUND, small


class _Users(set[str]):
    """The model's users, counting the passes over all of them (and the comparisons of
    the whole set, which pass over it in C)."""

    walks = 0

    def __iter__(self) -> Iterator[str]:
        _Users.walks += 1
        return super().__iter__()

    def __ne__(self, other: object) -> bool:
        _Users.walks += 1
        return super().__ne__(other)


class _Roles(dict[str, set[Any]]):
    """The model's roles, counting the passes over every role name."""

    walks = 0

    def __iter__(self) -> Iterator[str]:
        _Roles.walks += 1
        return super().__iter__()

    def keys(self) -> KeysView[str]:  # type: ignore[override]
        _Roles.walks += 1
        return super().keys()


def whole_walks(scale: int) -> int:
    """How many times 30 scoped syncs of one-table grants and revokes (after the first
    full sync) passed over every user or every role of the model."""
    model, ms = hive_estate(scale)
    model.users, model.roles = _Users(model.users), _Roles(model.roles)
    context = BackendContext(
        "hive1", {"grantor": "pushdown"}, map_principal=Mapper(), mapping_stable=lambda: True
    )
    hive = HiveBackend(context, metastore=ms)
    reconcile(hive, model, Scope.everything())
    _Users.walks = _Roles.walks = 0
    for i in range(30):
        table, role = ObjectRef.parse(f"table c.crm.t{i // 2 % 10}"), f"r{i // 2 % 10}"
        change = ch.grant_privileges if i % 2 == 0 else ch.revoke_privileges
        events = change(model, role, table, ["MODIFY_TABLE"])
        do(model, events)
        reconcile(hive, model, scope_of(events[0]))
    return _Users.walks + _Roles.walks


def test_scoped_syncs_of_the_same_model_pass_over_every_user_and_role_at_most_once() -> None:
    """A pass over every user or role is one call however large the estate (the profiler's
    counts above do not see it): the kept identity compares the users only when one came or
    went (the model's roster count), and the roles the backend knows but the model no longer
    has, and the roles' case twins, are worked out again only when a role came or went."""
    assert same_at_both_scales(whole_walks) <= 1
